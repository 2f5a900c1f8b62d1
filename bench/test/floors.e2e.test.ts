import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, type CreekClient } from '@creek/client';
import { MAX_FRAME_BYTES } from '@creek/protocol';
import { startFloors, type Floors } from '../src/floors.js';

/**
 * bench:peers' floors answer `@creek/client` as a replica would, committing what they say they
 * do: each answer's value is the row the floor server committed last for it.
 */
describe('the floors of bench:peers', () => {
  let floors: Floors | null = null;
  const clients: CreekClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await floors?.stop();
    floors = null;
  });

  it.each([false, true])('take weak and strong ops from the client (fsync %s)', async (fsync) => {
    floors = await startFloors(fsync);
    const durable = connect({ urls: [floors.durable], token: 'unused' });
    const relay = connect({ urls: [floors.relay], token: 'unused' });
    clients.push(durable, relay);
    // One row per op (the hello commits none).
    expect(await durable.invokeWeak('kv.put', { key: 'k', value: 1 })).toBe(1);
    expect(await durable.invokeStrong('kv.put', { key: 'k', value: 2 })).toBe(2);
    // Through the relay: its own row for the op, then one for the durable server's answer.
    expect(await relay.invokeStrong('kv.put', { key: 'k', value: 3 })).toBe(2);
    expect(await relay.invokeWeak('kv.put', { key: 'k', value: 4 })).toBe(4);
    // The durable server committed the relayed ops as well.
    expect(await durable.invokeWeak('kv.put', { key: 'k', value: 5 })).toBe(5);
    // Many in flight, committed a turn at a time: a row each, none twice.
    const rows = await Promise.all(
      Array.from({ length: 40 }, (_, i) => durable.invokeWeak('kv.put', { key: 'k', value: i })),
    );
    expect([...rows].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 40 }, (_, i) => 6 + i),
    );
    // The relay of 3 members: its row for the op, then one for the first answer only (the second
    // is dropped), however many are in flight.
    const relay3 = connect({ urls: [floors.relay3], token: 'unused' });
    clients.push(relay3);
    expect(await relay3.invokeStrong('kv.put', { key: 'k', value: 6 })).toBe(2);
    const relayed = await Promise.all(
      Array.from({ length: 20 }, (_, i) => relay3.invokeStrong('kv.put', { key: 'k', value: i })),
    );
    expect(relayed.every((n) => Number(n) > 2 && Number(n) <= 42)).toBe(true);
    expect(new Set(relayed).size).toBe(20);
    expect(await relay3.invokeStrong('kv.put', { key: 'k', value: 7 })).toBe(44);
  });

  /** Sends `data` on a connection of its own; the close code the floor answers with. */
  function closeCodeFor(url: string, data: string | Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on('open', () => ws.send(data));
      ws.on('close', (code) => resolve(code));
      ws.on('error', reject);
    });
  }

  it('close a connection that sends what is not a JSON object, or too much, and go on serving', async () => {
    floors = await startFloors(false);
    const client = connect({ urls: [floors.durable], token: 'unused' });
    clients.push(client);
    expect(await client.invokeWeak('kv.put', { key: 'k', value: 1 })).toBe(1);
    for (const url of [floors.durable, floors.relay, floors.relay3]) {
      expect(await closeCodeFor(url, '{"t":"invoke",')).toBe(1007);
      expect(await closeCodeFor(url, '[1,2]')).toBe(1007);
      expect(await closeCodeFor(url, 'null')).toBe(1007);
      expect(await closeCodeFor(url, Buffer.alloc(MAX_FRAME_BYTES + 1, 'x'))).toBe(1009);
    }
    // Nothing was committed for them, and the floors still answer.
    expect(await client.invokeWeak('kv.put', { key: 'k', value: 2 })).toBe(2);
  });
});
