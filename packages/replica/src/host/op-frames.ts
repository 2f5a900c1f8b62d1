import type { ErrorCode, ServerFrame } from '@creek/protocol';
import { outcomesEqual, type Response } from '../core/types.js';
import type { ClientOp } from './client-connection-types.js';

/**
 * The frame a client gets for one of its op's responses (Correctables §3.2, §5.2), and whether the
 * op is done with it (`op.done`; `op.lastTentative` keeps the answer the client was shown):
 *
 * - a failure: an error naming the op (`unavailable` for a copy that was definitely not applied);
 * - a stable answer equal to the tentative one the client was shown: a confirmation alone;
 * - otherwise a view, with the causes of a correction when the client was shown an answer.
 *
 * A weak op is done at its first view, a strong op at its stable one.
 */
export function opFrame<C>(op: ClientOp<C>, r: Response): ServerFrame {
  if (r.level === 'failed') {
    const error = r.outcome.ok ? 'failed' : r.outcome.error;
    // Not applied, and never to be here (its origin's close dropped it): the client may
    // resubmit it elsewhere, where its session number keeps it to one application.
    const code: ErrorCode =
      r.notApplied === true
        ? 'unavailable'
        : error.startsWith('unknown operation')
          ? 'unknown-op'
          : 'invalid-arguments';
    op.done = true;
    return { t: 'error', opId: op.opId, code, message: error };
  }
  if (
    r.level === 'stable' &&
    op.lastTentative !== null &&
    outcomesEqual(op.lastTentative, r.outcome)
  ) {
    op.done = true;
    return { t: 'confirm', opId: op.opId };
  }
  const frame: ServerFrame = {
    t: 'view',
    opId: op.opId,
    level: r.level,
    outcome: r.outcome,
    id: r.id,
    // Causes explain a change from an answer the client was shown: not for a caller that was
    // shown none (it waits for the stable view alone).
    ...(r.causes === undefined || op.stableOnly || op.lastTentative === null
      ? {}
      : { causes: [...r.causes] }),
  };
  if (r.level === 'tentative') op.lastTentative = r.outcome;
  op.done = r.level === 'stable' || !op.strong;
  return frame;
}
