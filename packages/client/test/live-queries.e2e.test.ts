import { PROTOCOL_VERSION } from '@creek/protocol';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type CreekClient, type CreekError, type View } from '../src/index.js';

/**
 * Live queries against real replicas: a watched read is pushed again, tentatively and then stably,
 * each time a key it read changes; an op that writes and a 65th watch are refused; a watch moves
 * with its client to another replica.
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
}, 60_000);
afterAll(async () => {
  await cluster.stop(1_000);
});

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('client.watch over a real cluster', () => {
  it('pushes a read again when what it read changes: tentative first, then stable', async () => {
    const watcher = connect({ urls: [cluster.url(0)], token: cluster.token, nearest: false });
    const writer = connect({ urls: [cluster.url(1)], token: cluster.token, nearest: false });
    try {
      const views: View<unknown>[] = [];
      const q = watcher.watch('kv.get', { key: 'live' });
      q.subscribe({ onView: (_, v) => views.push(v) });
      await until('the first views', () => views.some((v) => v.level === 'strong'));
      expect(views.map((v) => [v.level, v.value])).toEqual(
        expect.arrayContaining([
          ['weak', null],
          ['strong', null],
        ]),
      );
      await writer.invokeWeak('kv.put', { key: 'live', value: 1 });
      await until('the stable 1', () => q.latestStable()?.value === 1);
      // The tentative view came no later than the stable one.
      const firstWeak1 = views.findIndex((v) => v.level === 'weak' && v.value === 1);
      const firstStrong1 = views.findIndex((v) => v.level === 'strong' && v.value === 1);
      expect(firstWeak1).toBeGreaterThanOrEqual(0);
      expect(firstWeak1).toBeLessThan(firstStrong1);
      // A write to another key pushes nothing.
      const before = views.length;
      await writer.invokeStrong('kv.put', { key: 'elsewhere', value: 9 });
      await new Promise((r) => setTimeout(r, 200));
      expect(views.length).toBe(before);
      // Closed: no more views.
      q.close();
      await writer.invokeStrong('kv.put', { key: 'live', value: 2 });
      await new Promise((r) => setTimeout(r, 200));
      expect(views.length).toBe(before);
    } finally {
      watcher.close();
      writer.close();
    }
  });

  it('refuses to watch an op that writes or does not exist (advice about the op), and a 65th watch on one connection', async () => {
    const c = connect({ urls: [cluster.url(0)], token: cluster.token, nearest: false });
    try {
      const errors: CreekError[] = [];
      c.watch('kv.put', { key: 'x', value: 1 }).subscribe({ onError: (e) => errors.push(e) });
      await until('the refusal', () => errors.length === 1);
      expect(errors[0]!.message).toMatch(/only read-only ops can be watched/);
      // Plain JavaScript, no app given: the replica's refusal is advice about the op.
      expect(errors[0]).toMatchObject({ op: 'kv.put', field: 'op' });
      expect(errors[0]!.message).toMatch(/invoke the ones that write/);
      expect(errors[0]!.message).not.toMatch(/fix the arguments/);
      // And an op the cluster does not have: advice about its name.
      c.watch('kv.gett', { key: 'x' }).subscribe({ onError: (e) => errors.push(e) });
      await until('the unknown op refused', () => errors.length === 2);
      expect(errors[1]!.message).toMatch(/unknown operation 'kv\.gett'.*check the op name/);
      expect(errors[1]!.message).not.toMatch(/fix the arguments/);
      const queries = Array.from({ length: 65 }, (_, i) => c.watch('kv.get', { key: `k${i}` }));
      await until('the 65th refused', () => queries[64]!.error !== undefined);
      expect(queries[64]!.error!.message).toMatch(/at most 64/);
      expect(queries.slice(0, 64).every((q) => q.error === undefined)).toBe(true);
    } finally {
      c.close();
    }
  });

  it('moves with its client to another replica when its replica dies', async () => {
    const local = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const watcher: CreekClient = connect({ urls: local.urls, token: local.token, nearest: false });
    const writer = connect({ urls: [local.url(2)], token: local.token, nearest: false });
    try {
      const q = watcher.watch('kv.get', { key: 'moving' });
      await until('first view', () => q.latestStable() !== undefined);
      expect(watcher.replica()).toBe(0);
      local.kill(0);
      await writer.invokeStrong('kv.put', { key: 'moving', value: 'after' });
      await until(
        'the view from another replica',
        () => q.latestStable()?.value === 'after',
        20_000,
      );
      expect(watcher.replica()).not.toBe(0);
    } finally {
      watcher.close();
      writer.close();
      await local.stop(1_000);
    }
  });

  it('at the edge: a watch before the welcome, a malformed one (its shown too) and an unknown op are refused, and the replica stays up', async () => {
    const ws = new WebSocket(cluster.url(0));
    const frames: { t: string; code?: string; watchId?: string; message?: string }[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d)) as (typeof frames)[number]));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ t: 'watch', watchId: 'a', op: 'kv.get', args: { key: 'x' } }));
    await until('out-of-order', () => frames.some((f) => f.code === 'out-of-order'));
    ws.close();
    // A new connection (the replica may close one that broke the order before its hello).
    const ws2 = new WebSocket(cluster.url(0));
    frames.length = 0;
    ws2.on('message', (d) => frames.push(JSON.parse(String(d)) as (typeof frames)[number]));
    await new Promise((r) => ws2.once('open', r));
    ws2.send(
      JSON.stringify({
        t: 'hello',
        version: PROTOCOL_VERSION,
        token: cluster.token,
        session: 'edge-test-1',
      }),
    );
    await until('welcome', () => frames.some((f) => f.t === 'welcome'));
    ws2.send(JSON.stringify({ t: 'watch', op: 'kv.get', args: { key: 'x' } })); // no watchId
    await until('bad-frame', () => frames.some((f) => f.code === 'bad-frame'));
    // A watch id longer than the protocol allows (128 characters).
    const before = frames.filter((f) => f.code === 'bad-frame').length;
    ws2.send(JSON.stringify({ t: 'watch', watchId: 'w'.repeat(129), op: 'kv.get', args: {} }));
    await until(
      'a second bad-frame',
      () => frames.filter((f) => f.code === 'bad-frame').length > before,
    );
    // What the query shows (`shown`), malformed: a negative position, `missing` not numbers, more
    // missing ops than the protocol lists.
    for (const shown of [
      { position: -1 },
      { own: { upTo: 3, missing: ['x'] } },
      { own: { upTo: 5000, missing: Array.from({ length: 1025 }, (_, i) => i + 1) } },
    ]) {
      const bad = frames.filter((f) => f.code === 'bad-frame').length;
      ws2.send(JSON.stringify({ t: 'watch', watchId: 's', op: 'kv.get', args: {}, shown }));
      await until(
        `bad-frame for ${JSON.stringify(shown).slice(0, 40)}`,
        () => frames.filter((f) => f.code === 'bad-frame').length > bad,
      );
    }
    ws2.send(JSON.stringify({ t: 'watch', watchId: 'w', op: 'no.such', args: {} }));
    await until('unwatched', () => frames.some((f) => f.t === 'unwatched'));
    expect(frames.find((f) => f.t === 'unwatched')).toMatchObject({
      watchId: 'w',
      code: 'unknown-op',
    });
    // A well-formed `shown` from a session that never wrote here: its committed position is
    // above this replica's, so the stable result waits; the tentative one (it holds none of the
    // session's ops, and the client showed none) comes, saying so.
    ws2.send(
      JSON.stringify({
        t: 'watch',
        watchId: 'v',
        op: 'kv.get',
        args: { key: 'x' },
        shown: { position: 1_000_000, own: { upTo: 0 } },
      }),
    );
    await until('watched', () => frames.some((f) => f.t === 'watched' && f.watchId === 'v'));
    const watched = frames.filter((f) => f.t === 'watched' && f.watchId === 'v') as unknown as {
      level: string;
      own?: unknown;
    }[];
    expect(watched.map((f) => [f.level, f.own])).toEqual([['tentative', { upTo: 0 }]]);
    ws2.close();
  });
});
