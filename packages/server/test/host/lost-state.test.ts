import { describe, expect, it } from 'vitest';
import { HostCluster } from './host-cluster.js';

/**
 * A replica that lost its durable state (its data directory wiped or replaced, unsynced commits lost
 * in a power failure, or a second process with its id) must not go on: its next ops would reuse ids
 * the cluster already holds, and the others would drop them as duplicates while it answered them.
 */
describe('a replica that lost its durable state', () => {
  it('halts once a peer shows it an op of its own it has no record of; the others go on', () => {
    const c = new HostCluster(3, 11, { checkpointEvery: 0 });
    c.workload(60, { keys: 4, strongEvery: 5 });
    c.settle();
    const before = c.host(0).replica.stats().committed;
    c.wipe(2);
    c.run(200); // a few anti-entropy rounds
    expect(c.halts.map((h) => h.replica)).toEqual([2]);
    expect(c.halts[0]!.reason).toMatch(
      /replica 2 has lost ops it once sent: replica [01] holds its op r2#\d+/,
    );
    expect(c.host(2).halted).toBe(c.halts[0]!.reason);
    // Halted, it ignores every input: an op invoked there is never answered or ordered.
    const answered = c.responses[2]!.length;
    const stats = c.host(2).replica.stats();
    c.invoke(2, 'kv.increment', { key: 'lost' });
    c.run(200);
    expect(c.responses[2]!.length).toBe(answered);
    expect(c.host(2).replica.stats()).toEqual(stats);
    // The other two are a majority: they keep ordering, strong ops included.
    c.invoke(0, 'kv.put', { key: 'after', value: 1 }, true);
    c.invoke(1, 'kv.increment', { key: 'after' });
    c.run(1_000);
    const s0 = c.host(0).replica.stats();
    expect(s0.committed).toBeGreaterThanOrEqual(before + 2);
    expect(s0.tentative).toBe(0);
    expect(c.host(1).replica.stateDigest()).toBe(c.host(0).replica.stateDigest());
    expect(c.host(0).replica.stateDigest()).toContain('"after":2');
  });

  it('does not halt a replica that restarts with its disk intact, from a checkpoint or not', () => {
    for (const checkpointEvery of [0, 10]) {
      const c = new HostCluster(3, 12, { checkpointEvery });
      c.workload(60, { keys: 4, strongEvery: 5 });
      c.crash(2);
      c.workload(30, { keys: 4, strongEvery: 5, at: [0, 1] });
      c.restart(2);
      c.workload(30, { keys: 4, strongEvery: 5 });
      c.settle();
      expect(c.halts).toEqual([]);
    }
  });
});
