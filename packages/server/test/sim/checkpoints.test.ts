import { afterEach, describe, expect, it, vi } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import { Gossip } from '@creek/replica/gossip/gossip.js';
import { ReplicaHost } from '@creek/replica/host/replica-host.js';
import { runSimulation, type SimResult } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function run(first: number, count: number, replicas: number): SimResult[] {
  return Array.from({ length: count }, (_, i) => runSimulation({ seed: first + i, replicas }));
}

describe('simulator: checkpoints, truncation and gossip pruning', () => {
  it('writes checkpoints, drops the records behind them and restarts replicas from them', () => {
    const results = run(30_001, 24, 3);
    expect(results.filter((r) => !r.ok).map((r) => `${r.seed}: ${r.violations[0]}`)).toEqual([]);
    const total = (f: (r: SimResult) => number) => results.reduce((s, r) => s + f(r), 0);
    expect(total((r) => r.stats.checkpoints)).toBeGreaterThan(150);
    expect(total((r) => r.stats.truncatedRecords)).toBeGreaterThan(10_000);
    expect(total((r) => r.stats.restartsFromCheckpoint)).toBeGreaterThan(10);
    // Every interval the seeds draw is used.
    expect(new Set(results.map((r) => r.parameters.checkpointEvery)).size).toBe(4);
  });

  // Planted bugs: the same seeds with one part of the machinery broken fail, each caught by the
  // check named (planted.ts), on the seeds of 30,001–30,012 where the bug shows.

  it('catches a checkpoint that loses the tentative ops', () => {
    const checkpoint = Replica.prototype.checkpoint;
    vi.spyOn(Replica.prototype, 'checkpoint').mockImplementation(function (this: Replica) {
      const c = checkpoint.call(this);
      return { ...c, reqs: c.reqs.slice(0, c.committedLive) };
    });
    // A replica restarted from such a checkpoint finds a commit record naming an op it has no Req
    // of, and refuses to start: it halts (4 seeds of 12); where none restarts before the ops
    // commit, the replicas disagree on the committed order (2).
    const refused = plantedRuns([30_002, 30_006, 30_007, 30_009], {});
    expectCaughtBy(refused, 'halt');
    for (const r of refused)
      for (const halt of r.violations.filter((v) => v.startsWith('halt')))
        expect(halt).toMatch(
          /: cannot recover from its disk: recovery: commit record names r\d+#\d+, whose Req is not on disk$/,
        );
    expectCaughtBy(plantedRuns([30_008, 30_012], {}), '(a)');
  });

  it('catches a checkpoint whose state misses a key', () => {
    const checkpoint = Replica.prototype.checkpoint;
    vi.spyOn(Replica.prototype, 'checkpoint').mockImplementation(function (this: Replica) {
      const c = checkpoint.call(this);
      return { ...c, state: c.state.slice(1) };
    });
    // A committed op's effect is lost: convergence (b) finds the state is not the committed
    // order's (8 seeds of 12; the others restart no replica from a checkpoint with a key).
    expectCaughtBy(
      plantedRuns([30_001, 30_002, 30_006, 30_007, 30_008, 30_009, 30_010, 30_011], {}),
      '(b)',
    );
  });

  it('catches a checkpoint that forgets where the delivery stream was', () => {
    // A private method of the host, replaced on its prototype.
    const proto = ReplicaHost.prototype as unknown as { checkpoint(this: ReplicaHost): void };
    const checkpoint = proto.checkpoint;
    vi.spyOn(proto, 'checkpoint').mockImplementation(function (this: ReplicaHost) {
      (this as unknown as { lastDelivered: Map<number, number> }).lastDelivered.clear();
      checkpoint.call(this);
    });
    // Restarted, the replica waits for strong ops it already delivered: its ops stop committing
    // (5 seeds of 12).
    expectCaughtBy(plantedRuns([30_001, 30_007, 30_008, 30_010, 30_011], {}), 'liveness');
  });

  it('catches gossip that drops Reqs a peer has not acknowledged', () => {
    vi.spyOn(Gossip.prototype, 'prune').mockImplementation(function (this: Gossip) {
      const store = (this as unknown as { store: { dropPrefixes(f: () => boolean): number } })
        .store;
      return store.dropPrefixes(() => true);
    });
    // A peer that missed Reqs can no longer get them: it halts (9 seeds of 12; on the other 3
    // every replica halts, and the checkers, which judge the survivors, have none to judge).
    expectCaughtBy(plantedRuns([30_003, 30_004, 30_005, 30_006, 30_007], {}), 'halt');
  });
});
