import { afterEach, describe, expect, it, vi } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import { Gossip } from '@creek/replica/gossip/gossip.js';
import { ReplicaHost } from '@creek/replica/host/replica-host.js';
import { runSimulation, type SimResult } from '../../src/sim/simulation.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function run(first: number, count: number, replicas: number): SimResult[] {
  return Array.from({ length: count }, (_, i) => runSimulation({ seed: first + i, replicas }));
}

/** Seeds that fail, by a violation or by a crash of the simulation itself. */
function failures(first: number, count: number, replicas: number): number {
  let failed = 0;
  for (let seed = first; seed < first + count; seed++) {
    try {
      if (!runSimulation({ seed, replicas }).ok) failed++;
    } catch {
      failed++;
    }
  }
  return failed;
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

  // Planted bugs: the same seeds with one part of the machinery broken must fail.

  it('catches a checkpoint that loses the tentative ops', () => {
    const checkpoint = Replica.prototype.checkpoint;
    vi.spyOn(Replica.prototype, 'checkpoint').mockImplementation(function (this: Replica) {
      const c = checkpoint.call(this);
      return { ...c, reqs: c.reqs.slice(0, c.committedLive) };
    });
    expect(failures(30_001, 12, 3)).toBeGreaterThan(0);
  });

  it('catches a checkpoint whose state misses a key', () => {
    const checkpoint = Replica.prototype.checkpoint;
    vi.spyOn(Replica.prototype, 'checkpoint').mockImplementation(function (this: Replica) {
      const c = checkpoint.call(this);
      return { ...c, state: c.state.slice(1) };
    });
    expect(failures(30_001, 12, 3)).toBeGreaterThan(0);
  });

  it('catches a checkpoint that forgets where the delivery stream was', () => {
    // A private method of the host, replaced on its prototype.
    const proto = ReplicaHost.prototype as unknown as { checkpoint(this: ReplicaHost): void };
    const checkpoint = proto.checkpoint;
    vi.spyOn(proto, 'checkpoint').mockImplementation(function (this: ReplicaHost) {
      (this as unknown as { lastDelivered: Map<number, number> }).lastDelivered.clear();
      checkpoint.call(this);
    });
    expect(failures(30_001, 12, 3)).toBeGreaterThan(0);
  });

  it('catches gossip that drops Reqs a peer has not acknowledged', () => {
    vi.spyOn(Gossip.prototype, 'prune').mockImplementation(function (this: Gossip) {
      const store = (this as unknown as { store: { dropPrefixes(f: () => boolean): number } })
        .store;
      return store.dropPrefixes(() => true);
    });
    expect(failures(30_001, 6, 3)).toBeGreaterThan(0);
  });
});
