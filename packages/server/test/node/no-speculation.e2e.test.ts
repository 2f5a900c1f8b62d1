import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * `creek start --speculation off`: replicas that execute ops only once committed (state machine
 * replication, the baseline of `bench:tpcc`). Weak ops are answered once, stably, nothing is
 * rolled back, and /status says so.
 */
describe('a cluster whose replicas do not speculate', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('answers every op stably, once committed, and converges', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', speculative: false });
    const a = await RawClient.connect(cluster.url(0), cluster.token);
    const b = await RawClient.connect(cluster.url(1), cluster.token);
    const ops = [];
    for (let i = 0; i < 40; i++)
      ops.push(
        (i % 2 === 0 ? a : b).invoke(
          'kv.increment',
          { key: `n/${i % 3}` },
          i % 4 === 3 ? 'strong' : 'weak',
        ),
      );
    await within(Promise.all(ops.map((o) => o.done)), 30_000, 'every op answered');
    for (const o of ops) {
      const levels = o.views.frames.filter((f) => f.t === 'view').map((f) => f.level);
      expect(levels).toEqual(['stable']);
    }
    const s = await cluster.converged(30_000);
    expect(new Set(s.map((r) => r.digest)).size).toBe(1);
    for (const r of s) {
      expect(r.speculative).toBe(false);
      expect(r.metrics.speculated).toBe(0);
      expect(r.metrics.executionsOfFinalized).toBe(r.metrics.finalized);
      expect(r.cpuMicros).toBeGreaterThan(0);
    }
    a.close();
    b.close();
  });
});
