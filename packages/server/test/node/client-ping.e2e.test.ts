import { PROTOCOL_VERSION } from '@creek/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_EDGE_LIMITS } from '../../src/node/edge-limits.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { within } from './cluster-harness.js';
import { closeCode, frame, OP, rawUpgrade, textFrames, type RawSocket } from './raw-socket.js';

/**
 * What a replica's client endpoint tells from outside, before and after a hello: `ping` frames
 * (how clients measure their distance to a replica) are answered with `pong` before any hello and
 * without a token, let nothing else in, are refused when malformed and count against the limits
 * before authentication; a welcome lists every member's client URL.
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent' });
}, 60_000);
afterAll(() => cluster.stop(1_000));

const port = (i: number): number => cluster.basePort + i;
const send = (raw: RawSocket, f: unknown) =>
  raw.socket.write(frame(OP.text, typeof f === 'string' ? f : JSON.stringify(f)));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('answers a ping before hello and without a token, and lets nothing else in by it', async () => {
  const raw = await rawUpgrade(port(1), '/client');
  send(raw, { t: 'ping', n: 7 });
  await until(() => textFrames(raw).length > 0, 'a pong');
  expect(textFrames(raw)).toEqual([{ t: 'pong', n: 7 }]);
  send(raw, { t: 'invoke', opId: 'x', op: 'kv.increment', args: { key: 'ping' }, level: 'weak' });
  await until(() => textFrames(raw).length > 1, 'the invoke refused');
  expect(textFrames(raw)[1]).toMatchObject({ t: 'error', code: 'out-of-order', opId: 'x' });
  // A hello with a wrong token is refused as ever: the ping vouched for nothing.
  send(raw, { t: 'hello', version: PROTOCOL_VERSION, token: 'wrong' });
  await within(raw.closed, 10_000, 'the connection to close');
  expect(textFrames(raw).at(-1)).toMatchObject({ t: 'error', code: 'unauthorized' });
});

it('refuses malformed pings with bad-frame, and keeps the connection', async () => {
  const raw = await rawUpgrade(port(0), '/client');
  const bad = [
    { t: 'ping' },
    { t: 'ping', n: -1 },
    { t: 'ping', n: '1' },
    { t: 'ping', n: 1.5 },
    { t: 'ping', n: 1e300 },
  ];
  for (const f of bad) send(raw, f);
  await until(() => textFrames(raw).length >= bad.length, 'every malformed ping answered');
  expect(textFrames(raw).map((f) => f.code)).toEqual(bad.map(() => 'bad-frame'));
  send(raw, { t: 'ping', n: 1 });
  await until(() => textFrames(raw).some((f) => f.t === 'pong'), 'a pong after them');
  raw.socket.destroy();
});

it('closes with 1008 a connection that pings past the frames allowed before authentication', async () => {
  const raw = await rawUpgrade(port(2), '/client');
  const limit = DEFAULT_EDGE_LIMITS.preAuthFrames;
  raw.socket.write(
    Buffer.concat(
      Array.from({ length: limit + 8 }, (_, n) => frame(OP.text, JSON.stringify({ t: 'ping', n }))),
    ),
  );
  await within(raw.closed, 10_000, 'the connection to close');
  expect(closeCode(raw)).toBe(1008);
  expect(textFrames(raw).filter((f) => f.t === 'pong').length).toBeLessThanOrEqual(limit);
});

it('lists every member’s client URL in the welcome', async () => {
  const raw = await rawUpgrade(port(0), '/client');
  send(raw, { t: 'hello', version: PROTOCOL_VERSION, token: cluster.token });
  await until(() => textFrames(raw).some((f) => f.t === 'welcome'), 'the welcome');
  const welcome = textFrames(raw).find((f) => f.t === 'welcome') as unknown as {
    members: { id: number; url: string }[];
  };
  expect(welcome.members).toEqual(cluster.urls.map((url, id) => ({ id, url })));
  raw.socket.destroy();
});
