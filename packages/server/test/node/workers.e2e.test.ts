import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { workersForCores } from '../../src/exec/worker-choice.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

const APP = fileURLToPath(new URL('../exec/fixtures/bank-app.mjs', import.meta.url));

/**
 * Replicas that execute on worker threads (`creek start --workers 2`), each worker loading the
 * app itself and reading its mirror of the store: contended transfers from two clients, weak and
 * strong, conserve money, and the replicas converge.
 */
describe('a cluster whose replicas execute on worker threads', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('orders, answers and converges as with one thread, with money conserved', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', app: APP, workers: 2 });
    const a = await RawClient.connect(cluster.url(0), cluster.token);
    const b = await RawClient.connect(cluster.url(1), cluster.token);
    const setup = [0, 1, 2, 3].map((i) =>
      a.invoke('kv.put', { key: `acct/${i}`, value: 100 }, 'strong'),
    );
    await within(Promise.all(setup.map((o) => o.done)), 20_000, 'accounts opened');
    const ops = [];
    for (let i = 0; i < 200; i++) {
      const c = i % 2 === 0 ? a : b;
      const args = { from: `acct/${i % 4}`, to: `acct/${(i * 7 + 1) % 4}`, amount: 1 + (i % 13) };
      ops.push(c.invoke('acct.transfer', args, i % 10 === 9 ? 'strong' : 'weak'));
      if (i % 3 === 0)
        ops.push(c.invoke('work.spin', { key: `spin/${i % 3}`, iterations: 5_000 }, 'weak'));
    }
    await within(Promise.all(ops.map((o) => o.done)), 60_000, 'every op answered');
    for (const o of ops) expect(o.views.frames.some((f) => f.t === 'error')).toBe(false);
    const total = a.invoke('acct.total', {}, 'strong');
    await within(total.done, 20_000, 'a strong total');
    // The last view (a `confirm` says the stable result is the tentative one).
    const views = total.views.frames.filter((f) => f.t === 'view') as {
      outcome: { ok: boolean; value: unknown };
    }[];
    expect(views.at(-1)?.outcome).toEqual({ ok: true, value: 400 });
    const s = await cluster.converged(40_000);
    expect(new Set(s.map((r) => r.digest)).size).toBe(1);
    expect(s[0]!.digest).not.toBe(StateDigest.of([]));
    // The workers did the executing: most ops ran on them, several beside earlier ones.
    for (const r of s) {
      expect(r.execution.workers).toBe(2);
      expect(r.execution.onWorkers).toBeGreaterThan(100);
      expect(r.execution.workerChoice).toMatchObject({
        mode: 'fixed',
        workers: 2,
        active: true,
        reason: '--workers 2',
      });
    }
    a.close();
    b.close();
  });

  it('with --workers auto, starts one per core beside the main thread and says in /status what it measured', async () => {
    cluster = await LocalCluster.start({
      replicas: 1,
      logLevel: 'error',
      app: APP,
      workers: 'auto',
    });
    const expected = workersForCores(availableParallelism());
    const a = await RawClient.connect(cluster.url(0), cluster.token);
    const ops = [];
    for (let i = 0; i < 300; i++)
      ops.push(
        a.invoke(
          'acct.transfer',
          { from: `acct/${i % 4}`, to: `acct/${(i + 1) % 4}`, amount: 1 },
          'weak',
        ),
      );
    await within(Promise.all(ops.map((o) => o.done)), 60_000, 'every op answered');
    const status = await cluster.status(0);
    a.close();
    expect(status?.execution.workers).toBe(expected.workers);
    if (expected.workers === 0) return expect(status?.execution.workerChoice).toBeUndefined();
    // Whether they pay is the machine's and its load's to say: what is checked is that it was
    // measured and said, not which way it went.
    const choice = status!.execution.workerChoice!;
    expect(choice).toMatchObject({ mode: 'auto', workers: expected.workers });
    expect(choice.measuredJobs).toBeGreaterThan(0);
    expect(choice.handoffMicros).toBeGreaterThan(0);
    expect(choice.jobMicros).toBeGreaterThan(0);
    expect(choice.reason.startsWith(expected.why)).toBe(true);
  });
});
