import { LocalCluster } from '@creek/server/node';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/client.js';
import { memoryStorage } from '../src/index.js';

/**
 * The offline queue kept in storage, against real replicas: a client that went away leaves its
 * session in storage, and the one that takes it over sends what was not seen committed, applied
 * once. The storage's rules, with scripted replicas, are in offline-storage.test.ts.
 *
 * Every wait has a deadline well inside the test's own and names what it waited for, so a run on a
 * loaded machine that never gets there fails saying where, and the `finally` blocks still stop the
 * cluster (a test Vitest times out never reaches them, and its replicas keep Vitest from exiting).
 */
const WAIT_MS = 30_000;

async function until(what: string, ok: () => boolean, state: () => string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!ok()) {
    if (Date.now() > deadline)
      throw new Error(`waited ${WAIT_MS} ms for ${what}; it did not come (${state()})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function within<T>(what: string, p: PromiseLike<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`waited ${WAIT_MS} ms for ${what}; it did not come`)),
          WAIT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('the offline queue in storage, real replicas', () => {
  it('ops sent or queued by a client that went away are applied once by the one that took its storage over', async () => {
    const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const paused: number[] = [];
    try {
      const storage = memoryStorage();
      const a = connect({
        urls: cluster.urls,
        token: cluster.token,
        offline: { storage },
        connectTimeoutMs: 300,
      });
      try {
        await within('the first strong put', a.invokeStrong('kv.put', { key: 'warm', value: 0 }));
        // Some ops go out and may be applied; then every replica pauses and the rest wait queued.
        const sent = Array.from({ length: 10 }, (_, i) =>
          a.invoke('kv.increment', { key: `r/${i}` }),
        );
        for (const i of [0, 1, 2]) {
          await within(`replica ${i} to pause`, cluster.admin(i, 'pause'));
          paused.push(i);
        }
        const queued = Array.from({ length: 10 }, (_, i) =>
          a.invokeWeak('kv.increment', { key: `r/${10 + i}` }),
        );
        await until(
          'the first client to go offline with every replica paused',
          () => a.status() === 'offline',
          () => `status ${a.status()}`,
        );
        void [...sent, ...queued];
      } finally {
        a.close(); // gone, with whatever it had not seen committed in storage
      }
      for (const i of paused.splice(0))
        await within(`replica ${i} to resume`, cluster.admin(i, 'resume'));
      const b = connect({ urls: cluster.urls, token: cluster.token, offline: { storage } });
      try {
        const restored = await within('the second client to restore the stored ops', b.restored());
        await within(
          `the ${restored.length} restored ops' answers`,
          Promise.all(
            restored.map((r) =>
              r.correctable.then(
                () => undefined,
                () => undefined,
              ),
            ),
          ),
        );
        const committed = new Set<number>();
        await within(
          `the ${restored.length} restored ops to commit`,
          Promise.all(
            restored.map((r, i) => r.correctable.committed().then(() => committed.add(i))),
          ),
        ).catch((e: Error) => {
          const left = restored.filter((_, i) => !committed.has(i)).length;
          throw new Error(`${e.message}: ${left} not committed, status ${b.status()}`);
        });
        for (let i = 0; i < 20; i++)
          expect(
            await within(`a strong read of r/${i}`, b.invokeStrong('kv.get', { key: `r/${i}` })),
            `r/${i}`,
          ).toBe(1);
      } finally {
        b.close();
      }
    } finally {
      for (const i of paused) await cluster.admin(i, 'resume').catch(() => undefined);
      await cluster.stop(1_000);
    }
  });
});
