import { afterEach, describe, expect, it } from 'vitest';
import { connect, type CreekClient } from '../src/client.js';
import { Unavailable, type ConnectionStatus } from '../src/index.js';
import { scriptedSockets } from './scripted-sockets.js';
import { failure as failOrGuard } from './support.js';

/**
 * Offline ops (`connect({ offline })`): once no replica answers, ops wait in a bounded queue
 * instead of failing, their Correctables `updating` and `queued`, and go out with their session
 * numbers when a replica is back: applied once.
 */
const failure = (c: Parameters<typeof failOrGuard>[0]) => failOrGuard(c, 5_000);
const clients: CreekClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

describe('the offline queue, scripted replicas', () => {
  it('queues ops while no replica answers, bounds the queue, and sends them once one does', async () => {
    const scripted = scriptedSockets();
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: scripted.WebSocket,
      connectTimeoutMs: 50,
      offline: { maxQueued: 2 },
    });
    clients.push(creek);
    const statuses: ConnectionStatus[] = [];
    creek.onStatus((s) => statuses.push(s));
    expect(creek.status()).toBe('connecting');
    const queuedSeen: boolean[] = [];
    const a = creek.invoke('kv.put' as never, { key: 'a', value: 1 } as never);
    a.setCallbacks({ onQueued: (q) => queuedSeen.push(q) });
    // Every attempt fails until the connect timeout has passed: offline.
    for (let n = 0; creek.status() !== 'offline'; n++) {
      const s = await scripted.socket(n);
      s.close();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(a.state).toBe('updating');
    expect(a.queued).toBe(true);
    expect(queuedSeen).toEqual([true]);
    // Invoked offline: queued at once, until the queue is full.
    const b = creek.invokeWeak('kv.put' as never, { key: 'b', value: 2 } as never);
    expect(b.queued).toBe(true);
    const full = await failure(creek.invoke('kv.put' as never, { key: 'c', value: 3 } as never));
    expect(full).toBeInstanceOf(Unavailable);
    expect(full.message).toMatch(/2 ops already wait in the queue \(maxQueued 2\)/);
    expect(full.mayHaveTakenEffect).toBe(false);
    // A replica answers: both go out, in order, with their session numbers; the first answer
    // takes them out of the queue.
    const s = await scripted.socket(scripted.sockets.length);
    s.welcome();
    const sent = s.invokes();
    expect(sent.map((f) => [f.op, f.seq])).toEqual([
      ['kv.put', 1],
      ['kv.put', 2],
    ]);
    for (const f of sent)
      s.receive({
        t: 'view',
        opId: f.opId,
        level: 'tentative',
        outcome: { ok: true, value: null },
        id: { replica: 0, eventNo: f.seq },
      });
    s.receive({
      t: 'view',
      opId: sent[0]!.opId,
      level: 'stable',
      outcome: { ok: true, value: null },
    });
    await expect(a).resolves.toBeNull();
    await expect(b).resolves.toBeNull();
    expect(queuedSeen).toEqual([true, false]);
    expect(creek.status()).toBe('connected');
    expect(statuses).toEqual(['offline', 'connected']);
  });

  it('without offline on, ops still fail after the connect timeout (not applied, never sent)', async () => {
    const scripted = scriptedSockets('connection refused');
    const creek = connect({
      urls: ['ws://127.0.0.1:7100/client'],
      WebSocket: scripted.WebSocket,
      connectTimeoutMs: 50,
    });
    clients.push(creek);
    const e = await failure(creek.invoke('kv.put' as never, { key: 'a', value: 1 } as never));
    expect(e).toBeInstanceOf(Unavailable);
    expect(e.mayHaveTakenEffect).toBe(false);
    expect(creek.status()).not.toBe('offline');
  });

  it('refuses a maxQueued that is not a count', () => {
    expect(() =>
      connect({ urls: ['ws://127.0.0.1:1/client'], offline: { maxQueued: 1.5 } }),
    ).toThrow(/offline.maxQueued must be a whole number/);
  });
});
