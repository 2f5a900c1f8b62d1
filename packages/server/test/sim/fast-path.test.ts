import { describe, expect, it } from 'vitest';
import { checkFastPath } from '../../src/sim/fast-path/checker.js';
import { fastPathLatencies } from '../../src/sim/fast-path/latency.js';
import {
  fastQuorumSize,
  FastPathReplica,
  type FastPathMessage,
  type FastPathOp,
  type Step,
} from '../../src/sim/fast-path/replica.js';
import { runFastPath, type FastPathConfig } from '../../src/sim/fast-path/run.js';

const config = (over: Partial<FastPathConfig>): FastPathConfig => ({
  seed: 1,
  profile: 'global',
  keys: 20,
  ratePerRegion: 20,
  workloadMs: 2000,
  ...over,
});

describe('the leaderless fast-path prototype', () => {
  it('fast quorums of EPaxos: 3 of 5, 2 of 3, 5 of 7, 1 of 1', () => {
    expect([5, 3, 7, 1].map(fastQuorumSize)).toEqual([3, 2, 5, 1]);
  });

  it('orders conflicting ops on both paths and passes every check, on both WAN profiles', () => {
    for (const profile of ['global', 'us-eu'] as const)
      for (const seed of [1, 2, 3]) {
        const run = runFastPath(config({ seed, profile }));
        expect(run.violations, `${profile} seed ${seed}`).toEqual([]);
        const slow = run.ops.filter((o) => o.fast === false).length;
        // 20 keys at 20 ops/s per region: some rounds overlap on a key, most do not.
        expect(slow, `${profile} seed ${seed}`).toBeGreaterThan(0);
        expect(slow, `${profile} seed ${seed}`).toBeLessThan(run.ops.length);
        for (const e of run.executions) expect(e).toHaveLength(run.ops.length);
      }
  });

  it('takes the fast path for every op that conflicts with none', () => {
    const run = runFastPath(config({ keys: 10_000_000 }));
    expect(run.violations).toEqual([]);
    expect(run.ops.length).toBeGreaterThan(100);
    expect(run.ops.every((o) => o.fast === true)).toBe(true);
    // Each region's ops all committed, at the origin, by one round to its nearest fast quorum.
    const { commit, answer, slow } = fastPathLatencies(run);
    expect(slow).toEqual([0, 0, 0, 0, 0]);
    expect(commit.map((xs) => xs.length > 0)).toEqual([true, true, true, true, true]);
    // With nothing to wait for, an op runs at its origin as it commits there.
    expect(answer).toEqual(commit);
  });

  it('refuses an even number of replicas, whose fast quorums need not meet', () => {
    for (const replicas of [2, 4, 6])
      expect(() => runFastPath(config({ replicas }))).toThrow(/odd number from 1 to 15/);
    expect(runFastPath(config({ replicas: 3 })).violations).toEqual([]);
  });

  it('answers an op once the ops it depends on ran: never before its commit', () => {
    const run = runFastPath(config({ keys: 5 }));
    expect(run.violations).toEqual([]);
    for (const o of run.ops) expect(o.executedAt!).toBeGreaterThanOrEqual(o.committedAt!);
    expect(run.ops.some((o) => o.executedAt! > o.committedAt!)).toBe(true);
  });

  it('its checker catches the planted bug: a leader that commits despite changed answers', () => {
    const caught = [1, 2, 3].map((seed) => {
      const run = runFastPath(config({ seed, unsafeIgnoreChangedDeps: true }));
      return run.violations;
    });
    for (const v of caught) {
      expect(v.some((l) => l.startsWith('(c) conflicting ops'))).toBe(true);
      expect(v.some((l) => l.startsWith('(d) key'))).toBe(true);
    }
  });

  it('two concurrent conflicting ops: the slow path makes one depend on the other, and every replica runs them in one order', () => {
    // Replica 0 and replica 1 each lead an op on key x; replica 2 hears 1's first, 0 and 1
    // hear their own first: 0's fast quorum (0, 2) sees a changed answer.
    const rs = [0, 1, 2].map((i) => new FastPathReplica(i, 3));
    const queue: { from: number; to: number; m: FastPathMessage }[] = [];
    const take = (from: number, s: Step): void => {
      for (const { to, message } of s.sends) queue.push({ from, to, m: message });
    };
    const a: FastPathOp = { id: '0.0', origin: 0, key: 'x' };
    const b: FastPathOp = { id: '1.0', origin: 1, key: 'x' };
    take(0, rs[0]!.propose(a));
    take(1, rs[1]!.propose(b));
    // Deliver 1's PreAccept to 2 before 0's, then everything in order.
    const first = queue.findIndex((q) => q.from === 1 && q.to === 2);
    queue.unshift(...queue.splice(first, 1));
    const fast = new Map<string, boolean>();
    while (queue.length > 0) {
      const { from, to, m } = queue.shift()!;
      const s = rs[to]!.receive(from, m);
      take(to, s);
      for (const c of s.committed) fast.set(c.id, c.fast);
    }
    expect(fast.get('1.0')).toBe(true);
    expect(fast.get('0.0')).toBe(false);
    expect(rs[0]!.committedAttributes('0.0')!.deps).toEqual(['1.0']);
    for (const r of rs) expect(r.executed).toEqual(['1.0', '0.0']);
    const records = [a, b].map((op) => ({
      op,
      proposedAt: 0,
      committedAt: 1,
      executedAt: 1,
      fast: true,
    }));
    expect(checkFastPath(records, rs)).toEqual([]);
  });
});
