import {
  decodeServerFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ClientEndpoint } from '../../src/node/client-endpoint.js';
import { closeServers, serve } from './endpoint-server.js';

/**
 * A session that moves to another replica is welcomed only once that replica has every op the
 * session saw (read-your-writes and monotonic reads): its gapless prefix of each origin's ops, or
 * past a gap the ops it has anyway.
 */
afterEach(closeServers);

/** A replica endpoint that has ops 1..5 of origin 0, op 7 of origin 0 (a dot) and nothing else. */
async function endpoint(): Promise<string> {
  const has = (replica: number, eventNo: number) =>
    replica === 0 && (eventNo <= 5 || eventNo === 7);
  const e = new ClientEndpoint(
    1,
    () => ['kv.get'],
    null,
    () => undefined,
    () => null,
    pino({ level: 'silent' }),
    undefined,
    () => [5, 0, 0],
    has,
  );
  return serve(e);
}

/** Sends a hello; resolves with the first frame, or 'silence' if none came within `ms`. */
async function hello(url: string, seen: number[], ms = 300): Promise<ServerFrame | 'silence'> {
  const ws = new WebSocket(url);
  await new Promise((r) => ws.once('open', r));
  const first = new Promise<ServerFrame | 'silence'>((resolve) => {
    ws.once('message', (data) => {
      const d = decodeServerFrame(String(data));
      resolve(d.ok ? d.frame : 'silence');
    });
    setTimeout(() => resolve('silence'), ms);
  });
  ws.send(encodeFrame({ t: 'hello', version: PROTOCOL_VERSION, session: 'session-abc', seen }));
  const f = await first;
  ws.close();
  return f;
}

describe('sessions moving to another replica', () => {
  it('welcomes a session at once when the replica has everything it saw', async () => {
    const url = await endpoint();
    expect(await hello(url, [5, 0, 0])).toMatchObject({ t: 'welcome', replica: 1 });
    expect(await hello(url, [3, 0, 0])).toMatchObject({ t: 'welcome', replica: 1 });
  });

  it('holds back a session that saw ops the replica lacks', async () => {
    const url = await endpoint();
    expect(await hello(url, [6, 0, 0])).toBe('silence');
    // 7 it has past the gap, but not 6.
    expect(await hello(url, [7, 0, 0])).toBe('silence');
    expect(await hello(url, [5, 1, 0])).toBe('silence');
  });
});
