import { connect, type CreekClient } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ByteCounter, countingWebSocket, valueOfSize, workload } from '../src/bytes-per-op.js';

/** What bench:bytes counts, on a real cluster: the messages each kind of call costs. */

let cluster: LocalCluster;
let creek: CreekClient;
const counter = new ByteCounter();

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  creek = connect({
    urls: [cluster.url(1)],
    token: cluster.token,
    WebSocket: countingWebSocket(counter),
    // Pinned to its replica: the nearest-replica probes (short connections of their own) are
    // not the per-op traffic counted here.
    nearest: false,
  });
  await cluster.until(async () => creek.replica() !== null, 30_000, 'the client to connect');
}, 60_000);
afterAll(async () => {
  creek?.close();
  await cluster?.stop(1_000);
});
beforeEach(() => counter.reset());

/**
 * The per-op message types one way (invokes, views, confirms, errors), with counts; after the
 * cluster has settled, so nothing is late. Session-level messages (none today) answer no one op.
 */
async function settled(direction: 'sent' | 'received'): Promise<Record<string, number>> {
  await cluster.converged();
  return Object.fromEntries(
    [...counter[direction]]
      .filter(([t]) => /^(invoke|view|confirm|error)/.test(t))
      .map(([t, c]) => [t, c.messages]),
  );
}

describe('bytes per op, counted on the client socket', () => {
  it('counts the handshake apart', async () => {
    const fresh = new ByteCounter();
    const other = connect({
      urls: [cluster.url(2)],
      token: cluster.token,
      WebSocket: countingWebSocket(fresh),
      // Pinned to its replica: the nearest-replica probes (short connections of their own) are
      // not the per-op traffic counted here.
      nearest: false,
    });
    await cluster.until(async () => other.replica() !== null, 30_000, 'the client to connect');
    other.close();
    expect(fresh.of('sent', 'hello').messages).toBe(1);
    expect(fresh.of('received', 'welcome').messages).toBe(1);
    expect(fresh.total('sent')).toEqual({ messages: 0, bytes: 0, wire: 0 });
    expect(fresh.total('received')).toEqual({ messages: 0, bytes: 0, wire: 0 });
  });

  it('a weak op costs one message each way, also once it is committed', async () => {
    await creek.invokeWeak('kv.put', { key: 'a', value: valueOfSize(64, 1) });
    expect(await creek.invokeWeak('kv.get', { key: 'a' })).toBe(valueOfSize(64, 1));
    expect(await settled('sent')).toEqual({ invoke: 2 });
    expect(await settled('received')).toEqual({ 'view:tentative': 2 });
  });

  it('invoke: a tentative view, then a confirm with no value when the result is the same', async () => {
    const value = valueOfSize(512, 2);
    await creek.invoke('kv.put', { key: 'b', value });
    expect(await creek.invoke('kv.get', { key: 'b' })).toBe(value);
    expect(await settled('sent')).toEqual({ invoke: 2 });
    expect(await settled('received')).toEqual({ 'view:tentative': 2, confirm: 2 });
    // The confirm names the op and nothing else: no value, however large.
    const confirm = counter.of('received', 'confirm');
    expect(confirm.bytes / confirm.messages).toBeLessThan(40);
    expect(counter.confirmed).toBe(2);
    // The read's tentative view carries the value.
    expect(counter.of('received', 'view:tentative').bytes).toBeGreaterThan(512);
  });

  it('invokeStrong: the stable view alone, with its value (no tentative view to confirm)', async () => {
    const value = valueOfSize(512, 3);
    await creek.invokeStrong('kv.put', { key: 'c', value });
    expect(await creek.invokeStrong('kv.get', { key: 'c' })).toBe(value);
    expect(await settled('sent')).toEqual({ invoke: 2 });
    expect(await settled('received')).toEqual({ 'view:stable': 2 });
    expect(counter.of('received', 'view:stable').bytes).toBeGreaterThan(512);
  });

  it('counts payload and wire bytes exactly', () => {
    const c = new ByteCounter();
    const small = JSON.stringify({ t: 'confirm', opId: 'x' });
    const large = JSON.stringify({ t: 'view', level: 'tentative', pad: 'y'.repeat(200) });
    c.note('received', small);
    c.note('received', large);
    c.note('sent', JSON.stringify({ t: 'invoke', opId: 'x' }));
    expect(c.of('received', 'confirm')).toEqual({
      messages: 1,
      bytes: small.length,
      wire: small.length + 2,
    });
    expect(c.of('received', 'view:tentative').wire).toBe(large.length + 4);
    expect(c.total('sent').wire).toBe(c.total('sent').bytes + 2 + 4); // a client masks its frames
  });
});

describe('the workload', () => {
  it('is the same sequence every time, with the asked share of reads', () => {
    const ops = workload(20_000, 0.95, 1000);
    expect(workload(20_000, 0.95, 1000)).toEqual(ops);
    const reads = ops.filter((o) => o.read).length / ops.length;
    expect(reads).toBeGreaterThan(0.94);
    expect(reads).toBeLessThan(0.96);
    expect(new Set(ops.map((o) => o.key)).size).toBeGreaterThan(990);
  });

  it('makes values of exactly the asked JSON size', () => {
    for (const n of [2, 3, 16, 128, 1024])
      for (const tag of [-1, 7, 12_345]) expect(JSON.stringify(valueOfSize(n, tag)).length).toBe(n);
  });
});
