import { toFrozenJson, type User } from '@creek/app';
import type { TokenVerdict } from '@creek/replica/host/connection-auth.js';
import type { Prng } from './prng.js';

/**
 * User tokens in simulated runs (SimConfig.userTokens): what a session's `auth` gives and what
 * a replica's driver verifies, in place of signed JWTs. A token is shaped as a JWT whose payload
 * names its user and when it expires on the run's clock (`exp`, in the run's seconds, which the
 * session reads to refresh it before it expires, as it reads a real token's), with no signature:
 * sessions connect, refresh their tokens on their own timers and when replicas ask, and lose
 * connections whose tokens lapse, under every fault, as over real sockets. The crypto is the
 * runtime driver's (node/user-tokens.ts), tested against real tokens apart.
 */
const HEADER = base64url('{"alg":"none","typ":"sim"}');
const SIGNATURE = 'sim';

/** How long tokens last, drawn per token: some lapse within a run, some outlive it. */
const LIFETIMES_MS = [150, 400, 1_000, 60_000] as const;

/** A token of `user` that expires at `expiresAt` (the run's ms). */
export function simToken(user: User, expiresAt: number): string {
  const payload = JSON.stringify({ sub: user.id, exp: expiresAt / 1000, expiresAt, user });
  return `${HEADER}.${base64url(payload)}.${SIGNATURE}`;
}

/** A fresh token of `user` at `now`, with a lifetime drawn from `prng`. */
export function freshSimToken(user: User, now: number, prng: Prng): string {
  return simToken(user, now + prng.pick(LIFETIMES_MS));
}

/** What a replica's driver makes of `token` at `now` (the run's ms). */
export function verifySimToken(token: string, now: number): TokenVerdict {
  const [header, payload, signature, ...rest] = token.split('.');
  if (header !== HEADER || signature !== SIGNATURE || rest.length > 0 || payload === undefined)
    return refused('not a simulated token');
  let body: { user?: User; expiresAt?: number };
  try {
    body = JSON.parse(fromBase64url(payload)) as typeof body;
  } catch {
    return refused('not JSON');
  }
  const { user, expiresAt } = body;
  if (user === undefined || typeof expiresAt !== 'number') return refused('no user or expiry');
  if (expiresAt <= now) return refused(`it expired at ${expiresAt.toFixed(1)} ms`);
  return { ok: true, user: toFrozenJson(user) as unknown as User, validForMs: expiresAt - now };
}

/**
 * `text` as UTF-8 in base64url, and back (user ids hold non-ASCII characters). The simulator also
 * runs in browsers (the visualizer), so no Buffer: percent-encoding gives the UTF-8 bytes.
 */
function base64url(text: string): string {
  const bytes = encodeURIComponent(text).replace(/%([0-9A-F]{2})/g, (_, h: string) =>
    String.fromCharCode(parseInt(h, 16)),
  );
  return btoa(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(encoded: string): string {
  const bytes = atob(encoded.replace(/-/g, '+').replace(/_/g, '/'));
  return decodeURIComponent(
    Array.from(bytes, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
  );
}

function refused(why: string): TokenVerdict {
  return { ok: false, code: 'unauthorized', message: `user token refused: ${why}` };
}
