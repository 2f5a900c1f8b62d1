import { describe, expect, it } from 'vitest';
import { PROFILES, nearestMajorityRttMs, rttBetween, type NetworkProfile } from '@creek/server/geo';
import { Prng } from '@creek/server/sim';
import { bestLeader, fastQuorum, opLatency, type PathOption } from '../src/geo-paths/model.js';

/** A profile without jitter, so that every latency is the sum of its medians. */
const still = (p: NetworkProfile): NetworkProfile => ({ ...p, jitter: 0 });
const latency = (
  p: NetworkProfile,
  option: PathOption,
  origin: number,
  leader = 0,
  n = 5,
): number =>
  opLatency({ profile: still(p), replicas: n, leader, conflicts: 0 }, option, origin, new Prng(1)) -
  p.localRttMs;

describe('the strong-path latency model', () => {
  const global = PROFILES.global;

  it("prices today's write as the hop to the leader plus the majority of 2b the origin hears", () => {
    // At the leader: its own round to its nearest majority.
    expect(latency(global, 'leader', 0)).toBe(nearestMajorityRttMs(global, 0, 5));
    // Elsewhere: to the leader and back by the third-earliest 2b (us-west: 87 + 62, via eu-west).
    const viaEach = [0, 1, 2, 3, 4]
      .map((j) => (rttBetween(global, 0, j) + rttBetween(global, j, 1)) / 2)
      .sort((a, b) => a - b);
    expect(latency(global, 'leader', 1)).toBe(rttBetween(global, 1, 0) / 2 + viaEach[2]!);
  });

  it('reaches the bound with quorum reads and the fast quorum, and never beats it', () => {
    for (let r = 0; r < 5; r++) {
      const bound = nearestMajorityRttMs(global, r, 5);
      expect(latency(global, 'quorum-read', r)).toBe(bound);
      expect(latency(global, 'fast-quorum', r)).toBe(bound);
      for (const option of ['leader', 'leader-read', 'all-agree'] as const)
        expect(latency(global, option, r)).toBeGreaterThanOrEqual(bound);
    }
  });

  it('answers a 3-replica read index with the request’s own ack: two message delays', () => {
    const usEu = PROFILES['us-eu'];
    expect(latency(usEu, 'leader-read', 2, 0, 3)).toBe(rttBetween(usEu, 0, 2));
  });

  it('sizes fast quorums as EPaxos does, and places the leader where the mean is least', () => {
    expect([3, 5, 7].map(fastQuorum)).toEqual([2, 3, 5]);
    expect(bestLeader(PROFILES['us-eu'], 3)).toBe(0);
    const mean = (l: number): number =>
      [0, 1, 2, 3, 4].reduce((s, r) => s + latency(global, 'leader', r, l), 0) / 5;
    const best = bestLeader(global, 5);
    for (let l = 0; l < 5; l++) expect(mean(best)).toBeLessThanOrEqual(mean(l));
  });

  it('takes the slow path on conflicts: a second round to a majority', () => {
    const setup = { profile: still(global), replicas: 5, leader: 0, conflicts: 1 };
    const slow = opLatency(setup, 'fast-quorum', 0, new Prng(1)) - global.localRttMs;
    expect(slow).toBe(2 * nearestMajorityRttMs(global, 0, 5));
  });
});
