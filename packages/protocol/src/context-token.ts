import { MAX_CONTEXT_TOKEN_CHARS } from './limits.js';

/**
 * Context tokens: a session's causal context, portable to another client. A client asks its
 * replica for one (`context` frame); the replica signs what the session has seen together with
 * everything it holds itself, per origin replica a count of ops (a `seen` vector). Another client
 * that connects `after` the token is welcomed by a replica only once that replica holds every op
 * the token covers, so its reads see the first client's writes: a user's phone and laptop, a
 * server-side render on behalf of a browser.
 *
 * The format is `ct1.<counts>.<mac>`: the counts in decimal joined by `-` (empty for none), and a
 * MAC over `ct1.<counts>` under a key the replicas derive from the cluster secret (22 base64url
 * characters, 128 bits). The counts are readable by anyone holding the token and say only how many
 * ops each replica had; the MAC keeps a client from making a replica wait for ops that do not
 * exist. Clients read the counts (to carry them on as their own `seen`, which a replica of an
 * older release honours too); only replicas check the MAC.
 */
export const CONTEXT_TOKEN_PREFIX = 'ct1';

/** At most this many counts: SeenSchema's bound (replica ids in a `seen` vector). */
const MAX_COUNTS = 64;

const TOKEN = /^ct1\.([0-9-]*)\.([A-Za-z0-9_-]{22})$/;
const COUNT = /^(?:0|[1-9][0-9]{0,15})$/;

/** What is signed: the prefix and the counts. */
export function contextTokenPayload(seen: readonly number[]): string {
  return `${CONTEXT_TOKEN_PREFIX}.${seen.join('-')}`;
}

/** A token read (not verified): its counts, what its MAC signs, and the MAC. */
export interface ReadContextToken {
  readonly ok: true;
  readonly seen: number[];
  readonly payload: string;
  readonly mac: string;
}

/**
 * Reads a token's format: its counts, or why it is not a context token. Says nothing of whether a
 * replica made it (only the MAC does).
 */
export function readContextToken(
  token: unknown,
): ReadContextToken | { readonly ok: false; readonly message: string } {
  if (typeof token !== 'string')
    return { ok: false, message: `a context token is a string, not ${typeof token}` };
  if (token.length > MAX_CONTEXT_TOKEN_CHARS)
    return {
      ok: false,
      message: `a context token is at most ${MAX_CONTEXT_TOKEN_CHARS} characters; this one has ${token.length}`,
    };
  const m = TOKEN.exec(token);
  if (m === null)
    return {
      ok: false,
      message:
        'this is not a context token: one looks like ct1.<counts>.<signature>, as client.context() gives it',
    };
  const counts = m[1] === '' ? [] : m[1]!.split('-');
  if (counts.length > MAX_COUNTS || counts.some((c) => !COUNT.test(c)))
    return {
      ok: false,
      message: `a context token holds at most ${MAX_COUNTS} counts, each a whole number without leading zeros`,
    };
  const seen = counts.map(Number);
  if (seen.some((n) => !Number.isSafeInteger(n)))
    return { ok: false, message: 'a context token count is too large' };
  return { ok: true, seen, payload: contextTokenPayload(seen), mac: m[2]! };
}
