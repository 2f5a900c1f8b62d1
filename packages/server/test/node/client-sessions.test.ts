import {
  decodeServerFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { ClientEndpoint } from '../../src/node/client-endpoint.js';

/**
 * A session that moves to another replica is welcomed only once that replica has what the session
 * saw, except the session's own uncommitted ops, which the client resubmits (read-your-writes and
 * monotonic reads without stranding a session whose replica died before gossiping its writes).
 */
const servers: WebSocketServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A replica endpoint that has ops 1..5 of origin 0, op 7 of origin 0 (a dot) and nothing else. */
async function endpoint(): Promise<{ url: string; endpoint: ClientEndpoint }> {
  const has = (replica: number, eventNo: number) =>
    replica === 0 && (eventNo <= 5 || eventNo === 7);
  const e = new ClientEndpoint(
    1,
    () => ['kv.get'],
    null,
    () => undefined,
    () => true,
    pino({ level: 'silent' }),
    undefined,
    () => [5, 0, 0],
    has,
  );
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(wss);
  e.attach(wss);
  await new Promise<void>((r) => wss.once('listening', r));
  const port = (wss.address() as { port: number }).port;
  return { url: `ws://127.0.0.1:${port}`, endpoint: e };
}

/** Sends a hello; resolves with the first frame, or 'silence' if none came within `ms`. */
async function hello(
  url: string,
  fields: { seen: number[]; own?: number[][] },
  ms = 300,
): Promise<ServerFrame | 'silence'> {
  const ws = new WebSocket(url);
  await new Promise((r) => ws.once('open', r));
  const first = new Promise<ServerFrame | 'silence'>((resolve) => {
    ws.once('message', (data) => {
      const d = decodeServerFrame(String(data));
      resolve(d.ok ? d.frame : 'silence');
    });
    setTimeout(() => resolve('silence'), ms);
  });
  ws.send(
    encodeFrame({ t: 'hello', version: PROTOCOL_VERSION, session: 'session-abcdef', ...fields }),
  );
  const f = await first;
  ws.close();
  return f;
}

describe('sessions moving to another replica', () => {
  it('welcomes a session at once when the replica has everything it saw', async () => {
    const { url } = await endpoint();
    expect(await hello(url, { seen: [5, 0, 0] })).toMatchObject({ t: 'welcome', replica: 1 });
  });

  it('welcomes a session whose only missing ops are its own uncommitted ones', async () => {
    const { url } = await endpoint();
    // Missing 6, 8 and 9 of origin 0: all the session's own; 7 the replica has.
    const f = await hello(url, { seen: [9, 0, 0], own: [[6, 8, 9], [], []] });
    expect(f).toMatchObject({ t: 'welcome', replica: 1 });
  });

  it('holds back a session that saw another session’s op the replica lacks', async () => {
    const { url } = await endpoint();
    // 8 is not the session's own and the replica does not have it.
    expect(await hello(url, { seen: [9, 0, 0], own: [[6, 9], [], []] })).toBe('silence');
    expect(await hello(url, { seen: [6, 0, 0] })).toBe('silence');
    expect(await hello(url, { seen: [5, 1, 0], own: [[], [], []] })).toBe('silence');
  });
});
