import { defineApp, op } from '@creek/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connect } from '../src/client.js';
import { InvalidArguments } from '../src/errors.js';
import { connectInMemory, type MemoryCluster } from '../src/memory/index.js';
import { scriptedSockets } from './scripted-sockets.js';
import { levelsOf } from './support.js';

/**
 * The `cached` level (Correctables §4.3's local cache): a read-only op's result the client saw
 * recently comes at once as a preliminary view, then the replica's views correct it.
 */
const app = defineApp({
  'note.read': op({
    args: z.object({ id: z.string() }),
    readOnly: true,
    run: (tx, { id }) => tx.get(`note/${id}`) ?? null,
  }),
  'note.write': op({
    args: z.object({ id: z.string(), text: z.string() }),
    run: (tx, { id, text }) => {
      tx.put(`note/${id}`, text);
      return text;
    },
  }),
});

describe('the cached level, in memory (read-only ops known from the app)', () => {
  let cluster: MemoryCluster | null = null;
  afterEach(() => cluster?.close());

  it('offers the cached level below the replicas’ two', () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    expect(m.client.consistencyLevels()).toEqual(['cached', 'weak', 'strong']);
  });

  it('nothing cached for ops that write, for invokeWeak and invokeStrong, or with cacheEntries 0', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    await m.client.invoke('note.write', { id: 'a', text: 'x' });
    expect(await levelsOf(m.client.invoke('note.write', { id: 'a', text: 'x' }))).toEqual([
      'weak',
      'strong',
    ]);
    await m.client.invoke('note.read', { id: 'a' });
    expect(await levelsOf(m.client.invokeWeak('note.read', { id: 'a' }))).toEqual(['weak']);
    expect(await levelsOf(m.client.invokeStrong('note.read', { id: 'a' }))).toEqual(['strong']);
    expect(
      await levelsOf(m.client.invoke('note.read', { id: 'a' }, { levels: ['cached', 'strong'] })),
    ).toEqual(['cached', 'strong']);
  });

  it('refuses cached alone, and a cacheEntries that is not a count', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    await expect(
      m.client.invoke('note.read', { id: 'a' }, { levels: ['cached'] }),
    ).rejects.toBeInstanceOf(InvalidArguments);
    expect(() => connect({ urls: ['ws://127.0.0.1:1/client'], cacheEntries: -1 })).toThrow(
      /cacheEntries must be a whole number/,
    );
  });
});

describe('the cached level over the wire (read-only ops as the replica lists them)', () => {
  it('shows a read seen before at once, before any replica answers, then the replica corrects it', async () => {
    const scripted = scriptedSockets();
    const creek = connect({ urls: ['ws://127.0.0.1:7100/client'], WebSocket: scripted.WebSocket });
    try {
      const s = await scripted.socket(0);
      s.welcome(['kv.get']);
      const answer = (value: unknown, levels: ('tentative' | 'stable')[]) => {
        const sent = s.invokes().at(-1)!;
        for (const level of levels)
          s.receive({
            t: 'view',
            opId: sent.opId,
            level,
            outcome: { ok: true, value },
            ...(level === 'tentative' ? { id: { replica: 0, eventNo: 1 } } : {}),
          });
      };
      const first = creek.invoke('kv.get' as never, { key: 'a' } as never);
      expect(first.latest()).toBeUndefined();
      answer('v1', ['tentative', 'stable']);
      expect(await first).toBe('v1');
      const views: unknown[] = [];
      const again = creek.invoke('kv.get' as never, { key: 'a' } as never);
      expect(again.latest()).toEqual({ value: 'v1', level: 'cached', final: false });
      again.setCallbacks({ onUpdate: (v, view) => views.push([view.level, v]) });
      answer('v2', ['tentative', 'stable']);
      expect(await again).toBe('v2');
      expect(views).toEqual([
        ['cached', 'v1'],
        ['weak', 'v2'],
      ]);
      // Arguments are part of the key.
      expect(creek.invoke('kv.get' as never, { key: 'b' } as never).latest()).toBeUndefined();
      // An op the replica did not list as read-only is never served from the cache.
      const put = creek.invoke('kv.put' as never, { key: 'a', value: 1 } as never);
      answer(null, ['stable']);
      await put;
      expect(
        creek.invoke('kv.put' as never, { key: 'a', value: 1 } as never).latest(),
      ).toBeUndefined();
    } finally {
      creek.close();
    }
  });

  it('keeps at most cacheEntries results, the least recently used dropped first', async () => {
    const scripted = scriptedSockets();
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: scripted.WebSocket,
      cacheEntries: 1,
    });
    try {
      const s = await scripted.socket(0);
      s.welcome(['kv.get']);
      const read = (key: string) => {
        const c = creek.invoke('kv.get' as never, { key } as never);
        const sent = s.invokes().at(-1)!;
        s.receive({
          t: 'view',
          opId: sent.opId,
          level: 'stable',
          outcome: { ok: true, value: key },
        });
        return c;
      };
      await read('a');
      expect(creek.invoke('kv.get' as never, { key: 'a' } as never).latest()?.level).toBe('cached');
      await read('b'); // evicts a
      expect(creek.invoke('kv.get' as never, { key: 'a' } as never).latest()).toBeUndefined();
      expect(creek.invoke('kv.get' as never, { key: 'b' } as never).latest()?.level).toBe('cached');
    } finally {
      creek.close();
    }
  });
});
