import { decodeClientFrame, MAX_FRAME_BYTES } from '@creek/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * Bad input never crashes a replica or changes state (DESIGN.md, guarantees): 10,000 random and
 * malformed frames at a live replica each get an error frame, and the cluster's state is unchanged.
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
}, 60_000);
afterAll(() => cluster.stop(1_000));

type Frame = string | Buffer;

/** Frames the replica must refuse: not valid for the protocol, or valid but naming no real op or bad arguments. */
const badFrame: fc.Arbitrary<Frame> = fc.oneof(
  fc.string({ maxLength: 200 }).filter((s) => !decodeClientFrame(s).ok),
  fc.json({ maxDepth: 3 }).filter((s) => !decodeClientFrame(s).ok),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b)),
  fc
    .record({
      t: fc.constantFrom('invoke', 'hello', 'view', 'nope'),
      opId: fc.anything(),
      op: fc.anything(),
      args: fc.anything(),
      level: fc.anything(),
    })
    .map((o) => {
      try {
        return JSON.stringify(o);
      } catch {
        return '{"t":"invoke"}';
      }
    })
    .filter((s) => !decodeClientFrame(s).ok),
  fc.uuid().map((opId) =>
    JSON.stringify({
      t: 'invoke',
      opId,
      op: `no-such-op-${opId.slice(0, 4)}`,
      args: {},
      level: 'weak',
    }),
  ),
  fc.tuple(fc.uuid(), fc.anything()).map(([opId, key]) =>
    JSON.stringify({
      t: 'invoke',
      opId,
      op: 'kv.put',
      args: { key: typeof key === 'string' ? 1 : (key ?? null) },
      level: 'strong',
    }),
  ),
);

it('answers 10,000 bad frames with errors, stays up, and its state does not change', async () => {
  const before = await cluster.converged();
  const frames: Frame[] = fc.sample(badFrame, { numRuns: 10_000, seed: 42 });
  frames.push(
    'x'.repeat(MAX_FRAME_BYTES + 10),
    '{"t":"invoke","pad":"' + 'y'.repeat(MAX_FRAME_BYTES) + '"}',
  );
  const ws = new WebSocket(cluster.url(1));
  let errors = 0;
  let others = 0;
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', version: 1, token: cluster.token })));
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as { t: string };
      if (f.t === 'welcome') {
        for (const frame of frames) ws.send(frame);
        return;
      }
      if (f.t === 'error') errors++;
      else others++;
      if (errors + others === frames.length) resolve();
    });
  });
  expect(others).toBe(0);
  expect(errors).toBe(frames.length);
  ws.close();

  // Unauthenticated peers are turned away, whatever they send.
  const peer = new WebSocket(`ws://127.0.0.1:${cluster.basePort + 1}/peer`);
  const peerReply = await within(
    new Promise<string>((resolve) => {
      peer.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { t: string; code?: string };
        if (f.t === 'challenge')
          peer.send(
            JSON.stringify({ t: 'auth', from: 0, mac: '0'.repeat(64), nonce: 'a'.repeat(64) }),
          );
        else resolve(`${f.t}:${f.code ?? ''}`);
      });
    }),
    5_000,
    'peer rejection',
  );
  expect(peerReply).toBe('error:unauthorized');

  const after = await cluster.converged();
  expect(after.map((s) => s.digest)).toEqual(before.map((s) => s.digest));
  expect(after.map((s) => s.committed)).toEqual(before.map((s) => s.committed));
  // And it still serves.
  const c = await RawClient.connect(cluster.url(1), cluster.token);
  const op = c.invoke('kv.increment', { key: 'alive' }, 'strong');
  await within(op.done, 10_000, 'an op after the fuzzing');
  c.close();
}, 120_000);
