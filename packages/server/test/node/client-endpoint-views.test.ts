import {
  decodeServerFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import type { Outcome } from '@creek/replica/core/types.js';
import { ClientEndpoint } from '../../src/node/client-endpoint.js';
import { closeServers, serve } from './endpoint-server.js';

/**
 * Which views a client gets for an op (Correctables §3.2, §5.2), with the replica behind the
 * endpoint played by the test: it sees the invocations and answers them as a host would.
 */
const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.close();
  closeServers();
});

interface Harness {
  readonly endpoint: ClientEndpoint;
  readonly invoked: InvokeRequest[];
  readonly observed: string[];
  readonly frames: ServerFrame[];
  send(frame: unknown): void;
  /** Waits until the client has `n` frames after the welcome. */
  received(n: number): Promise<ServerFrame[]>;
  /** Answers the host's way: one turn, then the turn's frames leave. */
  respond(tag: number, level: 'tentative' | 'stable', outcome: Outcome): void;
}

async function harness(): Promise<Harness> {
  const invoked: InvokeRequest[] = [];
  const observed: string[] = [];
  const endpoint = new ClientEndpoint(
    0,
    () => ['kv.increment'],
    null,
    (r) => invoked.push(r),
    () => null,
    pino({ level: 'silent' }),
    (level) => observed.push(level),
  );
  const ws = new WebSocket(await serve(endpoint));
  sockets.push(ws);
  const frames: ServerFrame[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    const d = decodeServerFrame(String(data));
    if (!d.ok) throw new Error(d.message);
    if (d.frame.t !== 'welcome') frames.push(d.frame);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise((r) => ws.once('open', r));
  ws.send(encodeFrame({ t: 'hello', version: PROTOCOL_VERSION }));
  return {
    endpoint,
    invoked,
    observed,
    frames,
    send: (frame) => ws.send(encodeFrame(frame)),
    async received(n) {
      while (frames.length < n) await new Promise<void>((r) => waiters.push(r));
      return frames;
    },
    respond(tag, level, outcome) {
      endpoint.respond({ type: 'respond', tag, id: { replica: 0, eventNo: tag }, level, outcome });
      endpoint.afterTurn();
    },
  };
}

/** Resolves once the endpoint has handed `n` invocations to the replica. */
async function invocations(h: Harness, n: number): Promise<InvokeRequest[]> {
  while (h.invoked.length < n) await new Promise((r) => setTimeout(r, 5));
  return h.invoked;
}

const invoke = (opId: string, level: 'weak' | 'strong', extra: object = {}) => ({
  t: 'invoke',
  opId,
  op: 'kv.increment',
  args: { key: 'k' },
  level,
  ...extra,
});

describe('the views a client asked for', () => {
  it('an op its origin’s close dropped is refused as unavailable, so the client resubmits it elsewhere (exactly once, by its session number)', async () => {
    const h = await harness();
    h.send(invoke('d', 'strong'));
    const [req] = await invocations(h, 1);
    h.respond(req!.tag, 'tentative', { ok: true, value: 1 });
    h.endpoint.respond({
      type: 'respond',
      tag: req!.tag,
      id: { replica: 0, eventNo: req!.tag },
      level: 'failed',
      outcome: { ok: false, error: 'op 0#1 was not applied: its incarnation closed without it' },
      notApplied: true,
    });
    h.endpoint.afterTurn();
    expect(await h.received(2)).toMatchObject([
      { t: 'view', opId: 'd', level: 'tentative' },
      { t: 'error', opId: 'd', code: 'unavailable', message: expect.stringMatching(/not applied/) },
    ]);
  });

  it('a strong op gets its tentative view, then a confirmation when the stable result agrees', async () => {
    const h = await harness();
    h.send(invoke('a', 'strong'));
    const [req] = await invocations(h, 1);
    h.respond(req!.tag, 'tentative', { ok: true, value: 1 });
    h.respond(req!.tag, 'stable', { ok: true, value: 1 });
    const frames = await h.received(2);
    expect(frames).toMatchObject([
      { t: 'view', opId: 'a', level: 'tentative', outcome: { ok: true, value: 1 } },
      { t: 'confirm', opId: 'a' },
    ]);
    expect(h.observed).toEqual(['tentative', 'stable']);
  });

  it('with tentative: false, a strong op gets its stable view alone, with its value', async () => {
    const h = await harness();
    h.send(invoke('b', 'strong', { tentative: false }));
    const [req] = await invocations(h, 1);
    expect(req).toMatchObject({ strong: true });
    h.respond(req!.tag, 'tentative', { ok: true, value: 1 });
    h.respond(req!.tag, 'tentative', { ok: true, value: 2 }); // re-executed speculatively
    h.respond(req!.tag, 'stable', { ok: true, value: 2 });
    // A later op's answer shows that nothing else was sent for the first.
    h.send(invoke('c', 'weak'));
    const [, next] = await invocations(h, 2);
    h.respond(next!.tag, 'tentative', { ok: true, value: 3 });
    expect(await h.received(2)).toEqual([
      {
        t: 'view',
        opId: 'b',
        level: 'stable',
        outcome: { ok: true, value: 2 },
        id: expect.anything(),
      },
      {
        t: 'view',
        opId: 'c',
        level: 'tentative',
        outcome: { ok: true, value: 3 },
        id: expect.anything(),
      },
    ]);
    // The replica still times the op's first (unsent) tentative outcome.
    expect(h.observed).toEqual(['tentative', 'stable', 'tentative']);
  });

  it('refuses tentative: false on a weak op, whose one view is tentative, and runs nothing', async () => {
    const h = await harness();
    h.send(invoke('d', 'weak', { tentative: false }));
    expect(await h.received(1)).toMatchObject([
      {
        t: 'error',
        opId: 'd',
        code: 'bad-frame',
        message: expect.stringMatching(/strong ops only/),
      },
    ]);
    expect(h.invoked).toEqual([]);
  });

  it('names the op of an invoke that fails validation, so its caller is answered', async () => {
    const h = await harness();
    h.send({ t: 'invoke', opId: 'e', op: 'x'.repeat(257), args: null, level: 'weak' });
    h.send({ t: 'invoke', opId: 'f', op: 'kv.get', level: 'weak' }); // no args
    expect(await h.received(2)).toMatchObject([
      { t: 'error', opId: 'e', code: 'bad-frame', message: expect.stringMatching(/op/) },
      { t: 'error', opId: 'f', code: 'bad-frame', message: expect.stringMatching(/args/) },
    ]);
    expect(h.invoked).toEqual([]);
  });
});
