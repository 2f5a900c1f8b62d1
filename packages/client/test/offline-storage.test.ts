import { IDBFactory } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/client.js';
import { indexedDbStorage, memoryStorage, type StoredSession } from '../src/index.js';
import { readStoredSession } from '../src/offline-storage.js';
import { scriptedSockets } from './scripted-sockets.js';

/**
 * The offline queue kept in storage (`connect({ offline: { storage } })`): a client started on
 * the storage of an earlier one — a reloaded page, a restarted app — takes its session over and
 * sends the ops it had not seen committed again, with their numbers: each applied once.
 */
describe('the offline queue in storage, scripted replicas', () => {
  it('a later client takes the session and its ops over, numbered as before, and new ops after them', async () => {
    const storage = memoryStorage();
    const first = scriptedSockets('connection refused');
    const a = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: first.WebSocket,
      connectTimeoutMs: 30,
      offline: { storage },
    });
    void a.invoke('kv.put' as never, { key: 'x', value: 1 } as never);
    void a.invokeWeak('kv.put' as never, { key: 'y', value: 2 } as never);
    void a.invokeStrong('kv.put' as never, { key: 'z', value: 3 } as never);
    await expect.poll(() => storage.saved?.ops.length).toBe(3);
    const saved = storage.saved!;
    expect(saved.nextSeq).toBe(4);
    expect(saved.ops.map((o) => [o.seq, o.level, o.stableOnly])).toEqual([
      [1, 'strong', false],
      [2, 'weak', false],
      [3, 'strong', true],
    ]);
    a.close(); // the page goes away: what is stored stays
    expect(storage.saved!.ops).toHaveLength(3);

    const second = scriptedSockets();
    const b = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: second.WebSocket,
      offline: { storage },
    });
    try {
      const restored = await b.restored();
      expect(restored.map((r) => [r.op, r.args])).toEqual([
        ['kv.put', { key: 'x', value: 1 }],
        ['kv.put', { key: 'y', value: 2 }],
        ['kv.put', { key: 'z', value: 3 }],
      ]);
      const later = b.invokeStrong('kv.put' as never, { key: 'w', value: 4 } as never);
      const s = await second.socket(0);
      s.welcome();
      expect(s.sent[0]).toMatchObject({ t: 'hello', session: saved.session });
      const invokes = s.invokes();
      expect(invokes.map((f) => [f.seq, (f.args as { key: string }).key])).toEqual([
        [1, 'x'],
        [2, 'y'],
        [3, 'z'],
        [4, 'w'],
      ]);
      for (const f of invokes)
        s.receive({ t: 'view', opId: f.opId, level: 'stable', outcome: { ok: true, value: null } });
      await Promise.all([...restored.map((r) => r.correctable), later]);
      await expect.poll(() => storage.saved?.ops.length).toBe(0);
      expect(storage.saved!.nextSeq).toBe(5);
    } finally {
      b.close();
    }
  });

  it('storage that holds no session: restored() says why, and the client runs with a new one', async () => {
    const storage = {
      load: () =>
        Promise.resolve({
          version: 7,
          session: 's',
          nextSeq: 1,
          ops: [],
        } as unknown as StoredSession),
      save: () => Promise.resolve(),
    };
    const scripted = scriptedSockets();
    const c = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: scripted.WebSocket,
      offline: { storage },
    });
    try {
      await expect(c.restored()).rejects.toThrow(
        /the offline storage holds no session: it is version 7, not 1/,
      );
      const s = await scripted.socket(0);
      s.welcome();
      expect(s.sent[0]).toMatchObject({ t: 'hello' });
      expect((s.sent[0] as { session: string }).session).not.toBe('s');
    } finally {
      c.close();
    }
  });
});

describe('what a storage holds is checked before a client takes it over', () => {
  it.each([
    [null, /not an object/],
    [{ version: 1, session: '', nextSeq: 1, ops: [] }, /no session id/],
    [{ version: 1, session: 's', nextSeq: 0, ops: [] }, /nextSeq is not a count/],
    [{ version: 1, session: 's', nextSeq: 2, ops: 'many' }, /ops are not a list/],
    [
      {
        version: 1,
        session: 's',
        nextSeq: 2,
        ops: [{ seq: 2, op: 'kv.put', args: {}, level: 'weak', stableOnly: false }],
      },
      /is not a stored op/,
    ],
    [
      {
        version: 1,
        session: 's',
        nextSeq: 3,
        ops: [{ seq: 1, op: 'kv.put', args: {}, level: 'both', stableOnly: false }],
      },
      /is not a stored op/,
    ],
  ])('%j', (raw, problem) => {
    expect(readStoredSession(raw)).toMatch(problem);
  });
});

describe('indexedDbStorage', () => {
  it('saves and loads a session (fake-indexeddb), one record per key', async () => {
    const indexedDB = new IDBFactory();
    const one = indexedDbStorage({ indexedDB, key: 'one' });
    expect(await one.load()).toBeNull();
    const s: StoredSession = {
      version: 1,
      session: 'abc',
      nextSeq: 3,
      ops: [
        {
          seq: 2,
          op: 'kv.put',
          args: { key: 'k', value: [1, { a: null }] },
          level: 'weak',
          stableOnly: false,
        },
      ],
    };
    await one.save(s);
    expect(await indexedDbStorage({ indexedDB, key: 'one' }).load()).toEqual(s);
    expect(await indexedDbStorage({ indexedDB, key: 'two' }).load()).toBeNull();
    await expect(indexedDbStorage({}).load()).rejects.toThrow(/this environment has no indexedDB/);
  });
});
