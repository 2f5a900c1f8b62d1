import { toFrozenJson, type User } from '@creek/app';
import type { TokenVerdict } from '@creek/replica/host/connection-auth.js';
import type { Prng } from './prng.js';

/**
 * User tokens in simulated runs (SimConfig.userTokens): what a session's `auth` gives and what
 * a replica's driver verifies, in place of signed JWTs. A token names its user and when it expires
 * on the run's clock, so sessions connect, are asked for fresh tokens, refresh them and lose
 * connections whose tokens lapse, under every fault, as over real sockets. The crypto is the
 * runtime driver's (node/user-tokens.ts), tested against real tokens apart.
 */
const PREFIX = 'sim-token:';

/** How long tokens last, drawn per token: some lapse within a run, some outlive it. */
const LIFETIMES_MS = [150, 400, 1_000, 60_000] as const;

/** A token of `user` that expires at `expiresAt` (the run's ms). */
export function simToken(user: User, expiresAt: number): string {
  return `${PREFIX}${JSON.stringify({ user, expiresAt })}`;
}

/** A fresh token of `user` at `now`, with a lifetime drawn from `prng`. */
export function freshSimToken(user: User, now: number, prng: Prng): string {
  return simToken(user, now + prng.pick(LIFETIMES_MS));
}

/** What a replica's driver makes of `token` at `now` (the run's ms). */
export function verifySimToken(token: string, now: number): TokenVerdict {
  if (!token.startsWith(PREFIX)) return refused('not a simulated token');
  let body: { user?: User; expiresAt?: number };
  try {
    body = JSON.parse(token.slice(PREFIX.length)) as typeof body;
  } catch {
    return refused('not JSON');
  }
  const { user, expiresAt } = body;
  if (user === undefined || typeof expiresAt !== 'number') return refused('no user or expiry');
  if (expiresAt <= now) return refused(`it expired at ${expiresAt.toFixed(1)} ms`);
  return { ok: true, user: toFrozenJson(user) as unknown as User, validForMs: expiresAt - now };
}

function refused(why: string): TokenVerdict {
  return { ok: false, code: 'unauthorized', message: `user token refused: ${why}` };
}
