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
  const given = Buffer.from(header.slice('Bearer '.length));
  let ok = false;
  for (const token of tokens) {
    if (token === null) continue;
    const expected = Buffer.from(token);
    // Every configured token is compared, so timing does not say which one nearly matched.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}
