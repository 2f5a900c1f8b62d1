import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Replicas prove to each other that they hold the cluster secret, both ways, by HMAC
 * challenge–response (the secret never crosses the wire):
 *
 *   accepting replica B → dialer A:  challenge(nB)
 *   A → B:  auth(from A, mac = dialerProof(nB, A, B), nonce nA)
 *   B → A:  welcome(replica B, mac = acceptorProof(nA, B, A))
 *
 * Each proof covers the other side's fresh nonce, so a recorded one is useless on another
 * connection, and both replicas' ids and the direction, so a proof a replica gave while dialing
 * one peer cannot be relayed to another (an impostor on B's URL that forwards C's challenge to A
 * gets a proof for A→B, which C refuses), nor reflected back as an acceptor's. Until the welcome's
 * proof checks out, the dialer sends nothing: an impostor on a peer URL learns no op.
 */
export function newNonce(): string {
  return randomBytes(32).toString('hex');
}

/** What the dialing replica `from` answers to `to`'s challenge `nonce`. */
export function dialerProof(secret: string, nonce: string, from: number, to: number): string {
  return hmac(secret, `dial:${nonce}:${from}>${to}`);
}

/** What the accepting replica `acceptor` answers to the nonce of the replica `dialer` that dialed it. */
export function acceptorProof(
  secret: string,
  nonce: string,
  acceptor: number,
  dialer: number,
): string {
  return hmac(secret, `accept:${nonce}:${acceptor}<${dialer}`);
}

/** `given` equals the `expected` proof (hex), compared in constant time. */
export function proofMatches(expected: string, given: string): boolean {
  const e = Buffer.from(expected, 'hex');
  const g = Buffer.from(given, 'hex');
  return g.length === e.length && timingSafeEqual(g, e);
}

function hmac(secret: string, message: string): string {
  return createHmac('sha256', secret).update(message).digest('hex');
}
