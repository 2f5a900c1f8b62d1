import { LocalCluster } from '@creek/server/node';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type CreekClient } from '../src/client.js';

/**
 * Offline ops (`connect({ offline })`) against real replicas, every one of them paused and resumed.
 * The queue's rules, with scripted replicas, are in offline.test.ts.
 */
const clients: CreekClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

describe('the offline queue, real replicas', () => {
  it('every replica paused: ops wait queued; resumed: each applied once', async () => {
    const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    try {
      const creek = connect({
        urls: cluster.urls,
        token: cluster.token,
        connectTimeoutMs: 500,
        offline: true,
      });
      clients.push(creek);
      await creek.invokeStrong('kv.put', { key: 'warm', value: 0 });
      for (const i of [0, 1, 2]) await cluster.admin(i, 'pause');
      const ops = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? creek.invoke('kv.increment', { key: `offline/${i}` })
          : creek.invokeWeak('kv.increment', { key: `offline/${i}` }),
      );
      while (creek.status() !== 'offline') await new Promise((r) => setTimeout(r, 20));
      expect(ops.every((c) => c.state === 'updating' && c.queued)).toBe(true);
      for (const i of [0, 1, 2]) await cluster.admin(i, 'resume');
      expect(await Promise.all(ops)).toEqual(ops.map(() => 1));
      expect(ops.some((c) => c.queued)).toBe(false);
      await Promise.all(ops.map((c) => c.committed()));
      for (let i = 0; i < 20; i++)
        expect(await creek.invokeStrong('kv.get', { key: `offline/${i}` })).toBe(1);
    } finally {
      await cluster.stop(1_000);
    }
  });
});
