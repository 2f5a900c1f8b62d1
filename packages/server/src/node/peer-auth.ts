import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PeerVersions } from '@creek/protocol';

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
 *
 * Versions (peer-versions.ts): B's challenge tells the range of peer protocol versions B speaks,
 * A's auth its own, and the welcome the version the link runs at. When B's challenge tells a
 * range, A's proof also covers both ranges as A saw them and B's proof the link's version, so a
 * network attacker who changes a range or the version in flight (to make A send B what B cannot
 * read, or to pull a link down to an older version) fails the proofs and the link is refused. One
 * thing it can do unseen: strip the ranges from both the challenge and the auth, so that each side
 * takes the other for a build of version 3, which knew no ranges and whose proofs cover none.
 * That is safe: the link then runs at version 3, which both sides speak in full (a build speaks
 * only versions it implements completely), with the same mutual proofs of the secret and the ids;
 * the attacker gains only what it could get by dropping the connection, newer features held back.
 * Authentication never depends on the version, so no version is weaker than another; a version
 * that became unsafe is dropped from the range (PEER_PROTOCOL_OLDEST raised), not negotiated.
 */
export function newNonce(): string {
  return randomBytes(32).toString('hex');
}

/**
 * What the dialing replica `from` answers to `to`'s challenge `nonce`; with `ranges` when the
 * challenge told the acceptor's range (the proof then covers it and the dialer's own).
 */
export function dialerProof(
  secret: string,
  nonce: string,
  from: number,
  to: number,
  ranges?: { readonly acceptor: PeerVersions; readonly dialer: PeerVersions },
): string {
  const versions =
    ranges === undefined
      ? ''
      : `:v${ranges.acceptor.oldest}-${ranges.acceptor.newest}:${ranges.dialer.oldest}-${ranges.dialer.newest}`;
  return hmac(secret, `dial:${nonce}:${from}>${to}${versions}`);
}

/**
 * What the accepting replica `acceptor` answers to the nonce of the replica `dialer` that dialed
 * it; with the link's `version` when the dialer told its range.
 */
export function acceptorProof(
  secret: string,
  nonce: string,
  acceptor: number,
  dialer: number,
  version?: number,
): string {
  return hmac(
    secret,
    `accept:${nonce}:${acceptor}<${dialer}${version === undefined ? '' : `:v${version}`}`,
  );
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
