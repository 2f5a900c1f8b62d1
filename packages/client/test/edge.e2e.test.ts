import { MAX_FRAME_BYTES } from '@creek/protocol';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { CreekError } from '../src/index.js';
import {
  connect,
  InvalidArguments,
  ProtocolError,
  Unavailable,
  type Correctable,
  type CreekClient,
} from '../src/index.js';
import { failure as failOrGuard } from './support.js';

/**
 * Every call settles against a real replica process: what the SDK refuses itself, and what the
 * replica refuses (frames altered on their way out, standing in for a client that skipped the
 * checks), each ends the call with an error that says why.
 */
let cluster: LocalCluster;
const clients: CreekClient[] = [];
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 1, logLevel: 'error' });
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.close();
  await cluster.stop(1_000);
});

function client(
  options: { url?: string; WebSocket?: typeof WebSocket; connectTimeoutMs?: number } = {},
) {
  const c = connect({
    urls: [options.url ?? cluster.url(0)],
    token: cluster.token,
    ...(options.WebSocket === undefined ? {} : { WebSocket: options.WebSocket }),
    ...(options.connectTimeoutMs === undefined
      ? {}
      : { connectTimeoutMs: options.connectTimeoutMs }),
  });
  clients.push(c);
  return c;
}

/** The error `c` ends with; fails the test if it does not settle (the bug tested here). */
const failure = (c: Correctable<unknown>): Promise<CreekError> => failOrGuard(c, 20_000);

type Invoke = (op: string, args?: unknown) => Correctable<unknown>;
const untyped = (c: CreekClient): Invoke => c.invoke.bind(c) as unknown as Invoke;

describe('calls the replica would refuse settle with a clear error', () => {
  it('no arguments, an op name over 256 characters, a 2 MB value: each rejected', async () => {
    const creek = client();
    const invoke = untyped(creek);
    const noArgs = await failure(invoke('kv.get'));
    expect(noArgs).toBeInstanceOf(InvalidArguments);
    expect(noArgs.message).toMatch(/'kv\.get'.*args.*undefined is not a JSON value/);
    const longName = await failure(invoke('x'.repeat(300), { key: 'k' }));
    expect(longName).toBeInstanceOf(InvalidArguments);
    expect(longName.message).toMatch(/300 characters; op names have at most 256/);
    const big = await failure(invoke('kv.put', { key: 'k', value: 'x'.repeat(2 << 20) }));
    expect(big).toBeInstanceOf(InvalidArguments);
    expect(big.message).toMatch(/args\.value.*passes \d+ bytes/);
    // The client is unharmed.
    expect(await creek.invoke('kv.put', { key: 'k', value: 1 })).toBeNull();
  });

  it('a frame the replica refuses fails its op, whether or not the refusal names it', async () => {
    /** Alters invokes whose args ask for it, as a client without the SDK's checks would send. */
    class Tampering extends WebSocket {
      override send(text: string): void {
        const frame = JSON.parse(text) as { t: string; op: string; args?: { tamper?: string } };
        const tamper = frame.t === 'invoke' ? frame.args?.tamper : undefined;
        if (tamper === 'long-op')
          return super.send(JSON.stringify({ ...frame, op: 'x'.repeat(300) }));
        // Trailing whitespace is valid JSON: only the size is wrong, so the frame is refused unread.
        if (tamper === 'oversize') return super.send(text + ' '.repeat(MAX_FRAME_BYTES));
        super.send(text);
      }
    }
    const creek = client({ WebSocket: Tampering });
    const invoke = untyped(creek);
    expect(await creek.invoke('kv.put', { key: 't', value: 1 })).toBeNull(); // connected

    // The replica names the op (it read the frame's op id): not applied.
    const named = await failure(invoke('kv.put', { key: 't', value: 2, tamper: 'long-op' }));
    expect(named).toBeInstanceOf(ProtocolError);
    expect(named.message).toMatch(/refused the op's frame \(bad-frame: invalid frame: op/);
    expect((named as ProtocolError).mayHaveTakenEffect).toBe(false);

    // Too large to read: the refusal names no op, and the op fails all the same.
    const unnamed = await failure(invoke('kv.put', { key: 't', value: 3, tamper: 'oversize' }));
    expect(unnamed).toBeInstanceOf(ProtocolError);
    expect(unnamed.message).toMatch(
      /refused a frame without naming its op \(bad-frame: frame of \d+ bytes exceeds/,
    );

    expect(await creek.invokeStrong('kv.get', { key: 't' })).toBe(1);
  });

  it('a URL without /client says what went wrong for it', async () => {
    const url = cluster.url(0).replace(/\/client$/, '');
    const creek = client({ url, connectTimeoutMs: 300 });
    const e = await failure(creek.invoke('kv.get', { key: 'k' }));
    expect(e).toBeInstanceOf(Unavailable);
    // Today the replica closes the socket; a replica that answers with an HTTP status is named too.
    expect(e.message).toMatch(
      /(HTTP status \d{3}|closed the connection during the WebSocket upgrade); Creek client URLs end in \/client, e\.g\. ws:\/\/127\.0\.0\.1:\d+\/client/,
    );
  });
});
