import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient } from './cluster-harness.js';

/**
 * A leader frozen (SIGSTOP) for 20 s while clients keep the cluster busy comes back to 20 s of
 * peers' messages. It answers /health again after SIGCONT, the cluster converges once the load
 * ends, and no replica sends a peer a frame over the protocol's 1 MiB limit, which the receiver
 * would drop unread. How fast it answers is a figure, not an assertion: `npm run bench:freeze`
 * measures it (a wall-clock bound here flaked on a loaded 2-core machine); the deadlines below
 * only stop a run that will never succeed.
 */
describe('a leader frozen 20 s under load', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('answers /health again after resuming, and the cluster converges', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const c = cluster;
    const leader = (await c.statuses()).find((s) => s?.role === 'leader')!.id;
    // Clients on the two other replicas: 200 ops/s, a fifth of them strong.
    const clients = await Promise.all(
      [1, 2].map((k) => RawClient.connect(c.url((leader + k) % 3), c.token)),
    );
    let n = 0;
    const load = setInterval(() => {
      for (let k = 0; k < 2; k++) {
        n++;
        clients[n % 2]!.invoke(
          'kv.increment',
          { key: `k/${n % 50}` },
          n % 5 === 0 ? 'strong' : 'weak',
        );
      }
    }, 10);
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      expect(c.signal(leader, 'SIGSTOP')).toBe(true);
      await new Promise((r) => setTimeout(r, 20_000));
      c.signal(leader, 'SIGCONT');
      const resumed = Date.now();
      let answered: number | null = null;
      while (Date.now() - resumed < 60_000) {
        try {
          const r = await fetch(`${c.httpUrl(leader)}/health`, {
            signal: AbortSignal.timeout(500),
          });
          if (r.status > 0) {
            answered = Date.now() - resumed;
            break;
          }
        } catch {
          // not yet
        }
      }
      expect(answered, 'the resumed leader answers /health').not.toBeNull();
    } finally {
      clearInterval(load);
    }
    const statuses = await c.converged(60_000);
    expect(new Set(statuses.map((s) => s.digest)).size).toBe(1);
    // Every frame a replica sent stayed within the protocol's limit.
    for (const s of statuses) expect(s.network.largestFrameSent).toBeLessThanOrEqual(1 << 20);
    for (const cl of clients) cl.close();
  });
});
