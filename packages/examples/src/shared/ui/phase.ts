import { CreekError, OperationFailed } from '@creek/client';
import type { OpState } from '@creek/react';

/**
 * Where an op stands, for the eye: each phase has its own style in every example page.
 * - `queued`: no server answers; it waits in the client and goes out (once) when one does;
 * - `sending`: sent, no answer yet;
 * - `tentative`: a server answered from its speculative order; the answer may still change (a
 *   strong op's) or the op is not yet in the order every server agrees on (a weak op's);
 * - `stable`: final — the op's place in the agreed order is fixed;
 * - `error`: it failed (the error says whether it may still take effect).
 */
export type Phase = 'queued' | 'sending' | 'tentative' | 'stable' | 'error';

export function phaseOf(s: OpState<unknown>): Phase {
  if (s.error !== undefined) return 'error';
  if (s.queued) return 'queued';
  if (s.committed || s.level === 'strong') return 'stable';
  if (s.level !== undefined) return 'tentative';
  return 'sending';
}

/**
 * An error as a user reads it: the op's own failure (the app refused it) or the system's, and
 * whether it may still take effect (then the app must not tell the user it did not happen).
 */
export function errorText(e: Error): string {
  const reason = e instanceof OperationFailed ? e.reason : e.message;
  return e instanceof CreekError && e.mayHaveTakenEffect
    ? `Not confirmed: ${reason}. It may still go through.`
    : `Failed: ${reason}`;
}
