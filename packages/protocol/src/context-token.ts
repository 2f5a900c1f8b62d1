import { MAX_CONTEXT_TOKEN_CHARS } from './limits.js';
import { INCARNATION_STRIDE, MAX_SEEN_ENTRIES, seenEntries, seenOnWire } from './seen.js';

/**
 * Context tokens: a session's causal context, portable to another client. A client asks its
 * replica for one (`context` frame); the replica signs what the session has seen together with
 * everything it holds itself, per origin replica a count of ops (a `seen` vector). Another client
 * that connects `after` the token is welcomed by a replica only once that replica holds every op
 * the token covers, so its reads see the first client's writes: a user's phone and laptop, a
 * server-side render on behalf of a browser.
 *
 * The format is `ct1.<counts>.<mac>`: the counts in decimal joined by `-` (empty for none): first
 * those of origins 0, 1, 2, ... by position, then those of later incarnations' origins as
 * `<origin>:<count>` (seen.ts), and a
 * MAC over `ct1.<counts>` under a key the replicas derive from the cluster secret (22 base64url
 * characters, 128 bits). The counts are readable by anyone holding the token and say only how many
 * ops each replica had; the MAC keeps a client from making a replica wait for ops that do not
 * exist. Clients read the counts (to carry them on as their own `seen`, which a replica of an
 * older release honours too); only replicas check the MAC.
 */
export const CONTEXT_TOKEN_PREFIX = 'ct1';

/** At most this many counts by position, and as many of later origins: a seen vector's bounds. */
const MAX_COUNTS = MAX_SEEN_ENTRIES;

const TOKEN = /^ct1\.([0-9:-]*)\.([A-Za-z0-9_-]{22})$/;
const COUNT = /^(?:0|[1-9][0-9]{0,15})$/;
const LATER = /^([1-9][0-9]{2,9}):(0|[1-9][0-9]{0,15})$/;

/** What is signed: the prefix and the counts (a seen vector, indexed by origin). */
export function contextTokenPayload(seen: readonly number[]): string {
  const wire = seenOnWire(seen);
  const parts = [
    ...(wire.seen ?? []).map(String),
    ...(wire.seenLater ?? []).map(([origin, n]) => `${origin}:${n}`),
  ];
  return `${CONTEXT_TOKEN_PREFIX}.${parts.join('-')}`;
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
  const parts = m[1] === '' ? [] : m[1]!.split('-');
  const byPosition = parts.filter((c) => !c.includes(':'));
  const later = parts.slice(byPosition.length);
  const bad = {
    ok: false,
    message: `a context token holds at most ${MAX_COUNTS} counts, each a whole number without leading zeros, then at most ${MAX_COUNTS} <origin>:<count> pairs of origins from ${INCARNATION_STRIDE} up`,
  } as const;
  if (byPosition.length > MAX_COUNTS || later.length > MAX_COUNTS) return bad;
  if (byPosition.some((c) => !COUNT.test(c))) return bad;
  const seen = byPosition.map(Number);
  for (const pair of later) {
    const p = LATER.exec(pair);
    if (p === null || Number(p[1]) < INCARNATION_STRIDE) return bad;
    seen[Number(p[1])] = Number(p[2]);
  }
  if (seenEntries(seen).some(([, n]) => !Number.isSafeInteger(n)))
    return { ok: false, message: 'a context token count is too large' };
  return { ok: true, seen, payload: contextTokenPayload(seen), mac: m[2]! };
}
