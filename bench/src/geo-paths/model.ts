/**
 * The message patterns of the ways a strong op could reach its stable answer across regions, as
 * a latency model: each option is written as the messages it waits for, every message delayed by
 * its link's one-way delay (half the profile's round trip, varied by the profile's jitter), and
 * an op's latency is when the last message it must wait for arrives. No CPU, batching, queueing
 * or disk time: on links of tens to hundreds of milliseconds those are a few percent, and the
 * model is compared with the simulator's run of the real protocol for the path Creek has today
 * (`bench:geo-paths` prints both).
 *
 * The options (docs/architecture/beyond-one-leader.md discusses them):
 *  - `leader`: today's Multi-Paxos path. The origin forwards the op's id to the leader, the
 *    leader sends its 2a to every acceptor, and each acceptor sends its 2b to every replica
 *    (cab/acceptor.ts), so the origin learns the decision from the 2b of a majority.
 *  - `leader-read`: today's strong read (cab/read-index.ts): a read-index request to the leader,
 *    a confirming round from the leader to a majority, the index back. With 3 replicas the
 *    request's own ack confirms it (two message delays); the leader's own reads take a round.
 *  - `quorum-read`: the origin asks every replica for its promised ballot and accepted frontier
 *    and reads once a majority answered (nothing in flight, so nothing more to wait for).
 *  - `fast-quorum`: a leaderless fast path in the style of EPaxos: the origin proposes to every
 *    replica and commits when a fast quorum (F + ⌊(F+1)/2⌋ of N = 2F+1, itself included) agrees;
 *    on a conflict (share `conflicts`), a second round to a majority (the slow path).
 *  - `all-agree`: CC-Paxos's fast path, which needs the same answer from every replica; on a
 *    conflict, the same slow path.
 */
import type { NetworkProfile } from '@creek/server/geo';
import { oneWayMs } from '@creek/server/geo';
import { Prng } from '@creek/server/sim';

export const OPTIONS = [
  'leader',
  'leader-read',
  'quorum-read',
  'fast-quorum',
  'all-agree',
] as const;
export type PathOption = (typeof OPTIONS)[number];

export interface PathSetup {
  readonly profile: NetworkProfile;
  readonly replicas: number;
  /** The leader's replica number, for the leader-based options. */
  readonly leader: number;
  /** Share of strong ops that conflict with a concurrent one (the fast paths' slow path). */
  readonly conflicts: number;
}

/** One message's delay from `a` to `b`: the link's one-way delay with its jitter drawn. */
export function messageDelay(profile: NetworkProfile, prng: Prng, a: number, b: number): number {
  const base = oneWayMs(profile, a, b);
  if (base === 0) return 0;
  return base * (1 + profile.jitter * (2 * prng.next() - 1));
}

/** The k-th smallest (1-based) of `values`. */
function kth(values: readonly number[], k: number): number {
  return [...values].sort((x, y) => x - y)[k - 1]!;
}

const majority = (n: number): number => Math.floor(n / 2) + 1;

/** A fast quorum of N = 2F + 1 replicas (EPaxos, optimized): F + ⌊(F + 1) / 2⌋, itself included. */
export function fastQuorum(n: number): number {
  const f = Math.floor((n - 1) / 2);
  return f + Math.floor((f + 1) / 2);
}

/**
 * One op's latency in ms under `option`, for a client next to replica `origin` (its hop to the
 * replica counted both ways), with every message's delay drawn from `prng`.
 */
export function opLatency(
  setup: PathSetup,
  option: PathOption,
  origin: number,
  prng: Prng,
): number {
  const { profile, replicas: n, leader: l } = setup;
  const d = (a: number, b: number): number => messageDelay(profile, prng, a, b);
  const clientHop = 2 * (profile.localRttMs / 2);
  const everyone = Array.from({ length: n }, (_, j) => j);
  // A round from `from` to every replica and back to `to`, done when `k` answers are in.
  const round = (from: number, to: number, k: number): number =>
    kth(
      everyone.map((j) => d(from, j) + d(j, to)),
      k,
    );
  const slowPath = (): number =>
    prng.next() < setup.conflicts ? round(origin, origin, majority(n)) : 0;
  switch (option) {
    case 'leader':
      return clientHop + d(origin, l) + round(l, origin, majority(n));
    case 'leader-read': {
      if (origin !== l && n === 3) return clientHop + d(origin, l) + d(l, origin);
      return clientHop + d(origin, l) + round(l, l, majority(n)) + d(l, origin);
    }
    case 'quorum-read':
      return clientHop + round(origin, origin, majority(n));
    case 'fast-quorum':
      return clientHop + round(origin, origin, fastQuorum(n)) + slowPath();
    case 'all-agree':
      return clientHop + round(origin, origin, n) + slowPath();
  }
}

/** `ops` latencies of `option` from replica `origin`'s region. */
export function sampleLatencies(
  setup: PathSetup,
  option: PathOption,
  origin: number,
  ops: number,
  prng: Prng,
): number[] {
  return Array.from({ length: ops }, () => opLatency(setup, option, origin, prng));
}

/**
 * The leader that minimizes the mean over regions of the median `leader` latency (jitter left
 * out): the best single placement, which `bench:geo` compares with each region's bound.
 */
export function bestLeader(profile: NetworkProfile, replicas: number): number {
  const still: NetworkProfile = { ...profile, jitter: 0 };
  const none = new Prng(0); // draws nothing that matters: no jitter, no conflicts
  let best = 0;
  let bestMean = Infinity;
  for (let l = 0; l < replicas; l++) {
    const setup = { profile: still, replicas, leader: l, conflicts: 0 };
    let sum = 0;
    for (let r = 0; r < replicas; r++) sum += opLatency(setup, 'leader', r, none);
    if (sum / replicas < bestMean) {
      bestMean = sum / replicas;
      best = l;
    }
  }
  return best;
}
