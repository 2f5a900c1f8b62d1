import { describe, expect, it } from 'vitest';
import { BY_OP_NAMES, OTHER_OPS, ReplicaMetrics } from '@creek/replica/core/metrics.js';
import { HostCluster } from './host-cluster.js';

/**
 * Per-op speculation accuracy (HostStatus.metrics.byOp): how many of each op's tentative answers
 * the final order confirmed, counted where the op was invoked once it is final. A workload with a
 * known number of corrections: replica 1, cut off, increments a counter K times while replica 0
 * increments it K times and writes K keys of its own. Replica 0's ops come first in the final
 * order (earlier timestamps), so its answers all hold; replica 1's increments answered 1..K
 * tentatively and K+1..2K finally: every one corrected.
 */
describe('speculation accuracy per op', () => {
  const K = 12;

  it('counts confirmed and corrected tentative answers per op name, at the replica that answered', () => {
    const c = new HostCluster(3, 5, { checkpointEvery: 0 });
    // Every replica has heard its peers (a new one takes no op before). Each answers its strong
    // put tentatively, then finally: one confirmed kv.put each (a put's answer is null).
    for (const i of [0, 1, 2]) c.invoke(i, 'kv.put', { key: `start/${i}`, value: i }, true);
    c.settle();
    const before = c.responses[1]!.length;
    c.isolated.add(1);
    c.run(100);
    for (let n = 0; n < K; n++) {
      c.invoke(0, 'kv.increment', { key: 'counter' });
      c.invoke(0, 'kv.put', { key: `own/${n}`, value: n });
      c.run(20);
    }
    c.run(200);
    for (let n = 0; n < K; n++) {
      c.invoke(1, 'kv.increment', { key: 'counter' });
      c.run(20);
    }
    // Replica 1's tentative answers: 1..K, before it hears of replica 0's increments.
    const tentative = c.responses[1]!.slice(before).filter((r) => r.level === 'tentative');
    expect(tentative.map((r) => (r.outcome.ok ? r.outcome.value : null))).toEqual(
      Array.from({ length: K }, (_, n) => n + 1),
    );
    c.isolated.delete(1);
    c.settle();

    const at0 = c.host(0).status().metrics;
    expect(at0.byOp).toEqual({
      'kv.increment': { speculated: K, speculatedCorrectly: K },
      'kv.put': { speculated: K + 1, speculatedCorrectly: K + 1 },
    });
    const at1 = c.host(1).status().metrics;
    expect(at1.byOp).toEqual({
      'kv.increment': { speculated: K, speculatedCorrectly: 0 },
      'kv.put': { speculated: 1, speculatedCorrectly: 1 },
    });
    // The totals are the sums of the per-op counts.
    for (const m of [at0, at1]) {
      const ops = Object.values(m.byOp);
      expect(m.speculated).toBe(ops.reduce((a, o) => a + o.speculated, 0));
      expect(m.speculatedCorrectly).toBe(ops.reduce((a, o) => a + o.speculatedCorrectly, 0));
    }
    // Replica 2 answered its start put only.
    expect(c.host(2).status().metrics.byOp).toEqual({
      'kv.put': { speculated: 1, speculatedCorrectly: 1 },
    });
  });

  it('keeps at most BY_OP_NAMES names apart, and counts the rest together', () => {
    const m = new ReplicaMetrics();
    for (let i = 0; i < BY_OP_NAMES + 5; i++) m.countSpeculation(`op${i}`, i % 2 === 0);
    m.countSpeculation('op0', false);
    const byOp = m.speculationByOp();
    expect(Object.keys(byOp)).toHaveLength(BY_OP_NAMES + 1);
    expect(byOp.op0).toEqual({ speculated: 2, speculatedCorrectly: 1 });
    // op256..op260: 3 of 5 even.
    expect(byOp[OTHER_OPS]).toEqual({ speculated: 5, speculatedCorrectly: 3 });
    expect(m.speculated).toBe(BY_OP_NAMES + 6);
  });
});
