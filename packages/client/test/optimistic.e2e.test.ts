import { fileURLToPath } from 'node:url';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type View } from '../src/index.js';

const APP = fileURLToPath(new URL('./fixtures/todo-app.mjs', import.meta.url));

/**
 * Offline rows: a client whose replicas are all paused adds an item to a list it watches, with an
 * optimistic change; the row shows at once (level `cached`), and when the replicas resume, the
 * real results take over without the row ever leaving the list.
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', app: APP });
  await cluster.waitForLeader();
}, 60_000);
afterAll(async () => {
  await cluster.stop(1_000);
});

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('optimistic rows offline, real replicas', () => {
  it('shows the queued op in the list at once, and keeps it there until the committed list has it', async () => {
    const client = connect({
      urls: cluster.urls,
      token: cluster.token,
      connectTimeoutMs: 500,
      offline: true,
    });
    const paused: number[] = [];
    try {
      const q = client.watch('todo.list' as never, { list: 'offline' } as never) as unknown as {
        subscribe(c: { onView(v: string[], view: View<string[]>): void }): () => void;
        latest(): View<string[]> | undefined;
        close(): void;
      };
      const views: View<string[]>[] = [];
      q.subscribe({ onView: (_, v) => views.push(v) });
      await until('the first view', () => q.latest()?.level === 'strong');
      for (const i of [0, 1, 2]) {
        await cluster.admin(i, 'pause');
        paused.push(i);
      }
      const add = client.invoke(
        'todo.add' as never,
        { list: 'offline', id: 'row', text: 'milk' } as never,
        {
          optimistic: (v) =>
            v.update(
              'todo.list' as never,
              { list: 'offline' } as never,
              ((items: string[] = []) => [...items, 'row']) as never,
            ),
        },
      );
      // In flight to a replica that does not answer, then queued once the client is offline.
      expect(q.latest()?.value).toEqual(['row']);
      expect(q.latest()?.level).toBe('cached');
      await until('offline', () => client.status() === 'offline' && add.queued);
      expect(q.latest()).toEqual({ value: ['row'], level: 'cached', final: false });
      for (const i of paused.splice(0)) await cluster.admin(i, 'resume');
      await until('the committed row', () => {
        const l = q.latest();
        return l?.level === 'strong' && l.value.includes('row');
      });
      const first = views.findIndex((v) => v.value.includes('row'));
      expect(views.slice(first).filter((v) => !v.value.includes('row'))).toEqual([]);
      expect(views.slice(first).map((v) => v.level)).toContain('strong');
      q.close();
    } finally {
      for (const i of paused) await cluster.admin(i, 'resume');
      client.close();
    }
  }, 90_000);
});
