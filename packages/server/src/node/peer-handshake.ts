import { RANGELESS_PEER_VERSIONS, type PeerFrame, type PeerVersions } from '@creek/protocol';
import { acceptorProof, dialerProof, proofMatches } from './peer-auth.js';

type Frame<T extends PeerFrame['t']> = Extract<PeerFrame, { t: T }>;

/**
 * The frames of the replicas' handshake (peer-auth.ts) with their protocol versions
 * (peer-versions.ts in @creek/protocol), as both ends build and check them. A build of version 3
 * knew no ranges: it sends `version` 3 alone in its challenge, no `versions` in its auth and no
 * `version` in its welcome, and its proofs cover none; these functions speak to it as it expects.
 */

/** The accepting side's challenge: its oldest version where a build of version 3 reads it. */
export function challengeFrame(ours: PeerVersions, nonce: string): Frame<'challenge'> {
  return { t: 'challenge', version: ours.oldest, newest: ours.newest, nonce };
}

/** What the dialer learns from a challenge: the range the accepting side told. */
export interface DialerView {
  readonly theirs: PeerVersions;
  /** The challenge told a range (the proofs then cover the versions). */
  readonly ranged: boolean;
}

/** What a challenge says of the accepting side's versions. */
export function readChallenge(f: Frame<'challenge'>): DialerView {
  return f.newest === undefined
    ? { theirs: { oldest: f.version, newest: f.version }, ranged: false }
    : { theirs: { oldest: f.version, newest: f.newest }, ranged: true };
}

/** The dialer `self`'s answer to `peer`'s challenge, with its own nonce and range. */
export function authFrame(
  secret: string,
  self: number,
  peer: number,
  ours: PeerVersions,
  challenge: Frame<'challenge'>,
  view: DialerView,
  ourNonce: string,
): Frame<'auth'> {
  const ranges = view.ranged ? { acceptor: view.theirs, dialer: ours } : undefined;
  return {
    t: 'auth',
    from: self,
    mac: dialerProof(secret, challenge.nonce, self, peer, ranges),
    nonce: ourNonce,
    // Sent even to a build that told no range: one of version 3 drops it, and one that told a
    // range which an attacker stripped from the challenge then sees the proof fail.
    versions: ours,
  };
}

/**
 * The accepting side `self` checks a dialer's auth against its challenge `nonce`: null when the
 * proof fails, else the range the dialer speaks (3 alone when it told none).
 */
export function checkAuth(
  secret: string,
  self: number,
  ours: PeerVersions,
  nonce: string,
  f: Frame<'auth'>,
): { theirs: PeerVersions; ranged: boolean } | null {
  const ranged = f.versions !== undefined;
  const theirs = f.versions ?? RANGELESS_PEER_VERSIONS;
  const expected = dialerProof(
    secret,
    nonce,
    f.from,
    self,
    ranged ? { acceptor: ours, dialer: theirs } : undefined,
  );
  return proofMatches(expected, f.mac) ? { theirs, ranged } : null;
}

/** The accepting side's welcome: its proof, and the link's version when the dialer told a range. */
export function welcomeFrame(
  secret: string,
  self: number,
  auth: Frame<'auth'>,
  ranged: boolean,
  version: number,
): Frame<'welcome'> {
  return {
    t: 'welcome',
    replica: self,
    mac: acceptorProof(secret, auth.nonce, self, auth.from, ranged ? version : undefined),
    ...(ranged ? { version } : {}),
  };
}

/**
 * Whether a welcome proves the accepting side is replica `peer` of this cluster and agrees on the
 * link's `version` (when its challenge told a range, the welcome must name that version).
 */
export function welcomeProves(
  secret: string,
  self: number,
  peer: number,
  ourNonce: string,
  view: DialerView,
  version: number,
  f: Frame<'welcome'>,
): boolean {
  if (f.replica !== peer) return false;
  if (view.ranged && f.version !== version) return false;
  const expected = acceptorProof(secret, ourNonce, peer, self, view.ranged ? version : undefined);
  return proofMatches(expected, f.mac);
}
