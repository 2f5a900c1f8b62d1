import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * True when the request's `authorization: Bearer <token>` equals one of `tokens` (null entries are
 * tokens not configured, which match nothing). Compared in constant time, so response timing does
 * not tell an attacker how much of a guess was right.
 */
export function presentsToken(req: IncomingMessage, tokens: readonly (string | null)[]): boolean {
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Bearer ')) return false;
  return tokenMatches(header.slice('Bearer '.length), tokens);
}

/**
 * True when `given` equals one of `tokens` (null entries match nothing), compared in constant time;
 * every configured token is compared, so timing does not say which one nearly matched.
 */
export function tokenMatches(given: string, tokens: Iterable<string | null>): boolean {
  const g = Buffer.from(given);
  let ok = false;
  for (const token of tokens) {
    if (token === null) continue;
    const expected = Buffer.from(token);
    if (g.length === expected.length && timingSafeEqual(g, expected)) ok = true;
  }
  return ok;
}
