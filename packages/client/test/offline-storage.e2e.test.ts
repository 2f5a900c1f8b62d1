import { LocalCluster } from '@creek/server/node';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/client.js';
import { memoryStorage } from '../src/index.js';

/**
 * The offline queue kept in storage, against real replicas: a client that went away leaves its
 * session in storage, and the one that takes it over sends what was not seen committed, applied
 * once. The storage's rules, with scripted replicas, are in offline-storage.test.ts.
 */
describe('the offline queue in storage, real replicas', () => {
  it('ops sent or queued by a client that went away are applied once by the one that took its storage over', async () => {
    const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    try {
      const storage = memoryStorage();
      const a = connect({
        urls: cluster.urls,
        token: cluster.token,
        offline: { storage },
        connectTimeoutMs: 300,
      });
      await a.invokeStrong('kv.put', { key: 'warm', value: 0 });
      // Some ops go out and may be applied; then every replica pauses and the rest wait queued.
      const sent = Array.from({ length: 10 }, (_, i) =>
        a.invoke('kv.increment', { key: `r/${i}` }),
      );
      for (const i of [0, 1, 2]) await cluster.admin(i, 'pause');
      const queued = Array.from({ length: 10 }, (_, i) =>
        a.invokeWeak('kv.increment', { key: `r/${10 + i}` }),
      );
      while (a.status() !== 'offline') await new Promise((r) => setTimeout(r, 20));
      void [...sent, ...queued];
      a.close(); // gone, with whatever it had not seen committed in storage
      for (const i of [0, 1, 2]) await cluster.admin(i, 'resume');
      const b = connect({ urls: cluster.urls, token: cluster.token, offline: { storage } });
      try {
        const restored = await b.restored();
        await Promise.all(
          restored.map((r) =>
            r.correctable.then(
              () => undefined,
              () => undefined,
            ),
          ),
        );
        await Promise.all(restored.map((r) => r.correctable.committed()));
        for (let i = 0; i < 20; i++)
          expect(await b.invokeStrong('kv.get', { key: `r/${i}` }), `r/${i}`).toBe(1);
      } finally {
        b.close();
      }
    } finally {
      await cluster.stop(1_000);
    }
  });
});
