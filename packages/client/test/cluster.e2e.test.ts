import { defineApp } from '@creek/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { op } from '@creek/app';
import { connect, InvalidArguments, OperationFailed, type CreekClient } from '../src/index.js';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';

/** The SDK against a real 3-replica cluster (built-in ops only). */
const app = defineApp({
  // Declared here only for its types and schema; the cluster runs the built-ins.
  never: op({ args: z.object({ n: z.number() }), run: () => null }),
});

let cluster: LocalCluster;
let creek: CreekClient<typeof app>;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  creek = connect<typeof app>({
    urls: [cluster.url(1), cluster.url(2)],
    token: cluster.token,
    app,
  });
}, 60_000);
afterAll(async () => {
  creek.close();
  await cluster.stop(1_000);
});

describe('Correctables over a Creek cluster', () => {
  it('invoke yields a preliminary view, then the final one', async () => {
    const updates: unknown[] = [];
    const levels: string[] = [];
    const c = creek.invoke('kv.increment', { key: 'views' }).setCallbacks({
      onUpdate: (value, view) => {
        updates.push(value);
        levels.push(view.level);
      },
    });
    const final = await c;
    expect(updates).toEqual([1]);
    expect(levels).toEqual(['weak']);
    expect(final).toBe(1);
    expect(c.state).toBe('final');
    expect(c.level).toBe('strong');
  });

  it('a weak op is answered at once and committed later: committed() says when', async () => {
    const c = creek.invokeWeak('kv.put', { key: 'synced', value: 1 });
    await c;
    await c.committed();
    // Committed: a strong read, ordered after it, sees it.
    expect(await creek.invokeStrong('kv.get', { key: 'synced' })).toBe(1);
  });

  it('invokeWeak and invokeStrong yield only a final view', async () => {
    for (const call of [
      () => creek.invokeWeak('kv.put', { key: 'w', value: 'x' }),
      () => creek.invokeStrong('kv.get', { key: 'w' }),
    ]) {
      let updates = 0;
      const c = call().setCallbacks({ onUpdate: () => updates++ });
      await c;
      expect(updates).toBe(0);
    }
    expect(await creek.invokeStrong('kv.get', { key: 'w' })).toBe('x');
  });

  it('invokeStrong asks for the stable view alone: no tentative view crosses the wire', async () => {
    // A second client whose socket records the frames each way.
    const sent: Record<string, unknown>[] = [];
    const received: Record<string, unknown>[] = [];
    class Recording extends WebSocket {
      constructor(url: string) {
        super(url);
        this.on('message', (d) => received.push(JSON.parse(String(d)) as Record<string, unknown>));
      }
      override send(text: string): void {
        sent.push(JSON.parse(text) as Record<string, unknown>);
        super.send(text);
      }
    }
    const client = connect<typeof app>({
      urls: [cluster.url(1)],
      token: cluster.token,
      app,
      WebSocket: Recording,
    });
    const frames = (opId: unknown) =>
      received.filter((f) => f.opId === opId).map((f) => (f.t === 'view' ? f.level : f.t));
    try {
      expect(await client.invokeStrong('kv.increment', { key: 'stable-only' })).toBe(1);
      const strong = sent.find((f) => f.t === 'invoke')!;
      expect(strong).toMatchObject({ level: 'strong', tentative: false });
      expect(frames(strong.opId)).toEqual(['stable']);
      // invoke wants both views: it says nothing, and gets the tentative one first.
      expect(await client.invoke('kv.increment', { key: 'stable-only' })).toBe(2);
      const both = sent.filter((f) => f.t === 'invoke')[1]!;
      expect(both).not.toHaveProperty('tentative');
      expect(frames(both.opId)[0]).toBe('tentative');
      expect(frames(both.opId)).toHaveLength(2);
    } finally {
      client.close();
    }
  });

  it('speculates on the preliminary view and confirms it with the final one', async () => {
    const runs: unknown[] = [];
    const aborted: unknown[] = [];
    const result = await creek.invoke('kv.increment', { key: 'spec', by: 5 }).speculate(
      (n) => {
        runs.push(n);
        return `rendered ${String(n)}`;
      },
      (n) => aborted.push(n),
    );
    expect(result).toBe('rendered 5');
    expect(runs).toEqual([5]);
    expect(aborted).toEqual([]);
  });

  it('rejects bad arguments before sending, naming the field, and reports ops that throw', async () => {
    await expect(creek.invoke('kv.put', { key: 7 } as never)).rejects.toBeInstanceOf(
      InvalidArguments,
    );
    await expect(creek.invoke('kv.put', { key: 7 } as never)).rejects.toThrow(/key/);
    await creek.invokeStrong('kv.put', { key: 'text', value: 'abc' });
    await expect(creek.invokeStrong('kv.increment', { key: 'text' })).rejects.toBeInstanceOf(
      OperationFailed,
    );
  });

  it('many concurrent invocations from one client all complete, in agreement with the cluster', async () => {
    const all = await Promise.all(
      Array.from({ length: 50 }, () => creek.invoke('kv.increment', { key: 'many' })),
    );
    expect(new Set(all).size).toBe(50);
    expect(await creek.invokeStrong('kv.get', { key: 'many' })).toBe(50);
  });
});
