import { describe, expect, it } from 'vitest';
import { perTestCluster } from './per-test-cluster.js';

/**
 * An operator's rolling restart (an upgrade, a new flag): every replica in turn is stopped
 * (SIGTERM: it drains what it has in flight), started again on its data directory and waited for
 * until it serves, while clients keep a load of strong and weak ops going. No strong op may fail,
 * and every op answered is applied once (issue: replicas come and go).
 */
const fixture = perTestCluster();

describe('a rolling restart of every replica under load', () => {
  it('fails no strong op and applies every op once', async () => {
    const cluster = await fixture.start({ replicas: 3, logLevel: 'error' });
    const urls = cluster.urls;
    const clients = [0, 1, 2].map((i) =>
      fixture.connect({ urls: [...urls.slice(i), ...urls.slice(0, i)], token: cluster.token }),
    );
    let stop = false;
    const failures: string[] = [];
    const done = { strong: [0, 0, 0], weak: [0, 0, 0] };
    // Each client keeps 4 ops in flight: one strong and three weak increments of its own counters.
    const lanes = clients.flatMap((c, ci) =>
      [0, 1, 2, 3].map(async (lane) => {
        const strong = lane === 0;
        while (!stop) {
          try {
            if (strong) await c.invokeStrong('kv.increment', { key: `strong/${ci}` });
            else await c.invokeWeak('kv.increment', { key: `weak/${ci}` });
            (strong ? done.strong : done.weak)[ci]!++;
          } catch (e) {
            failures.push(`${strong ? 'strong' : 'weak'} op of client ${ci}: ${String(e)}`);
          }
        }
      }),
    );
    const total = (): number => [...done.strong, ...done.weak].reduce((a, b) => a + b, 0);
    const until = async (what: string, check: () => Promise<boolean>): Promise<void> =>
      cluster.until(check, 30_000, what);
    await until('load under way', async () => total() > 200);
    for (let i = 0; i < 3; i++) {
      const before = total();
      expect(await cluster.terminate(i), `replica ${i} stops cleanly`).toBe(0);
      await new Promise((r) => setTimeout(r, 200));
      cluster.startReplica(i);
      await until(`replica ${i} serving again`, async () => {
        const s = await cluster.status(i);
        return s !== null && !s.learning;
      });
      // The load went on meanwhile, and goes on after.
      await until(`ops after replica ${i} restarted`, async () => total() > before + 100);
    }
    stop = true;
    await Promise.all(lanes);
    expect(failures).toEqual([]);
    await cluster.converged();
    // Every answered increment applied once: each counter is the number of answers it got.
    const reader = clients[0]!;
    for (let ci = 0; ci < 3; ci++) {
      expect(await reader.invokeStrong('kv.get', { key: `strong/${ci}` })).toBe(done.strong[ci]);
      expect(await reader.invokeStrong('kv.get', { key: `weak/${ci}` })).toBe(done.weak[ci]);
    }
    expect(Math.min(...done.strong)).toBeGreaterThan(10);
  });
});
