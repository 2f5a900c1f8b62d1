import { describe, expect, it } from 'vitest';
import { incarnationOf, slotOf } from '@creek/replica/core/op-id.js';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { restoredCheckpoint, type BackupSnapshot } from '@creek/replica/host/backup.js';
import { HostCluster } from './host-cluster.js';

/**
 * A cluster restored from a backup (`creek restore`), on the simulator's network and disks: every
 * replica starts from the backup's checkpoint, holds exactly its state at its position, takes an
 * identity above every incarnation of the old cluster (so no op id of the new cluster is one of
 * the old's), and runs as any cluster does.
 */
function restoredCluster(b: BackupSnapshot, seed: number): HostCluster {
  const c = new HostCluster(3, seed, { checkpointEvery: 40 });
  for (let i = 0; i < 3; i++) {
    c.crash(i);
    c.nodes[i]!.disk = [{ layer: 'checkpoint', record: restoredCheckpoint(b) }];
    c.restart(i);
  }
  return c;
}

/** The incarnation each replica of `c` numbers its ops under. */
function incarnations(c: HostCluster): number[] {
  return c.nodes.map((_, i) => {
    const origin = c.host(i).inspect().replica.id;
    expect(slotOf(origin)).toBe(i);
    return incarnationOf(origin);
  });
}

describe('a cluster restored from a backup', () => {
  it('holds the state at the backup position, numbers its ops above the old cluster, and runs', () => {
    const old = new HostCluster(3, 21, { checkpointEvery: 40 });
    old.workload(400, { keys: 30, strongEvery: 10 });
    // Taken under load: what is final at replica 1 now, not what is tentative.
    const b = old.host(1).backup();
    expect(b.finalized).toBeGreaterThan(0);
    expect(b.state.length).toBeGreaterThan(0);
    old.workload(200, { keys: 30, strongEvery: 10 });
    old.settle();
    expect(old.host(0).inspect().replica.stateDigest()).not.toBe(StateDigest.of(b.state));
    const oldIncarnations = incarnations(old);

    const c = restoredCluster(b, 22);
    c.run(1_000);
    for (let i = 0; i < 3; i++) {
      const r = c.host(i).inspect().replica;
      expect(r.stateDigest()).toBe(StateDigest.of(b.state));
      expect(r.finalizedCount()).toBeGreaterThanOrEqual(b.finalized);
      expect(c.host(i).learningFromPeers).toBe(false);
    }
    for (const [i, inc] of incarnations(c).entries())
      expect(inc).toBeGreaterThan(oldIncarnations[i]!);

    c.workload(300, { keys: 30, strongEvery: 10 });
    c.settle();
    expect(c.host(0).inspect().replica.stateDigest()).not.toBe(StateDigest.of(b.state));
    expect(c.host(0).inspect().replica.stats().committed).toBeGreaterThan(b.finalized + 300);
    // A restored replica restarted from its own checkpoint and records keeps its identity.
    const before = incarnations(c);
    c.crash(2);
    c.restart(2);
    c.workload(100, { keys: 30, strongEvery: 10 });
    c.settle();
    expect(incarnations(c)).toEqual(before);
    expect(c.halts).toEqual([]);
  });

  it('would reuse the old cluster op ids without the backup causal context (why it keeps it)', () => {
    const old = new HostCluster(3, 23, { checkpointEvery: 40 });
    old.workload(200, { keys: 10, strongEvery: 10 });
    old.settle();
    const oldIncarnations = incarnations(old);
    const c = restoredCluster({ ...old.host(0).backup(), known: {} }, 24);
    c.run(1_000);
    expect(incarnations(c)).toEqual(oldIncarnations);
  });
});
