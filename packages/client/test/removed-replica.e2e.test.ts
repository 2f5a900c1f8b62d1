import { describe, expect, it } from 'vitest';
import { perTestCluster } from './per-test-cluster.js';

/**
 * A replica removed from the cluster while it serves clients (`creek member remove` of a live
 * replica): once its removal is in force it refuses client ops as unavailable, its clients move
 * to a member and resubmit what was not committed there (each op applied once), and it stops once
 * the members no longer need its vote. No op fails (issue: replicas come and go).
 */
const fixture = perTestCluster();

describe('a live replica removed under load', () => {
  it('stops, its clients move to the members, and no op fails or is applied twice', async () => {
    const exits: { replica: number; code: number | null }[] = [];
    const c = await fixture.start({
      replicas: 3,
      logLevel: 'error',
      onExit: (replica, code) => exits.push({ replica, code }),
    });
    // The client starts at replica 2, the one to be removed.
    const client = fixture.connect({
      urls: [c.url(2), c.url(0), c.url(1)],
      token: c.token,
      nearest: false,
    });
    let stop = false;
    const failures: string[] = [];
    const done = { strong: 0, weak: 0 };
    const lanes = [0, 1, 2, 3].map(async (lane) => {
      const strong = lane === 0;
      while (!stop) {
        try {
          if (strong) await client.invokeStrong('kv.increment', { key: 'strong' });
          else await client.invokeWeak('kv.increment', { key: `weak/${lane}` });
          done[strong ? 'strong' : 'weak']++;
        } catch (e) {
          failures.push(`${strong ? 'strong' : 'weak'} op: ${String(e)}`);
          // A call that fails at once must not spin this loop and starve the test's timers.
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    });
    const total = (): number => done.strong + done.weak;
    await c.until(
      async () => failures.length > 0 || (total() > 200 && client.replica() === 2),
      30_000,
      'load at replica 2',
    );
    expect(failures).toEqual([]);
    const before = total();
    await c.removeReplica(2);
    await c.until(async () => exits.length > 0, 30_000, 'replica 2 stops');
    expect(exits).toEqual([{ replica: 2, code: 0 }]);
    await c.until(async () => total() > before + 300, 30_000, 'the load goes on at the members');
    expect([0, 1]).toContain(client.replica());
    stop = true;
    await Promise.all(lanes);
    expect(failures).toEqual([]);
    await c.converged();
    // Every answered increment applied once: each counter is the number of answers it got.
    expect(await client.invokeStrong('kv.get', { key: 'strong' })).toBe(done.strong);
    let weak = 0;
    for (const lane of [1, 2, 3])
      weak += (await client.invokeStrong('kv.get', { key: `weak/${lane}` })) as number;
    expect(weak).toBe(done.weak);
  });
});
