import type { AddressInfo } from 'node:net';
import { EVENTS_VERSION, EventsFrameSchema, type EventsFrame } from '@creek/protocol';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { Req } from '@creek/replica/core/types.js';
import { ConnectionGuard } from '../../src/node/connection-guard.js';
import { DEFAULT_EDGE_LIMITS } from '../../src/node/edge-limits.js';
import { EventStream, type EventSource } from '../../src/node/event-stream.js';

/** The stream's budget and buffer rules, in-process, with the viewer's socket under the test's control. */
const source: EventSource = {
  replica: 0,
  cluster: null,
  replicas: [0, 1, 2],
  executionCounts: () => ({ executions: 0, rollbacks: 0, reorderingCommits: 0 }),
  paxos: () => ({
    role: 'leader',
    ballot: 1,
    leader: 0,
    quorate: true,
    decidedBelow: 0,
    proposed: 0,
    decided: 0,
    elections: 1,
  }),
  links: () => [],
  status: () => ({
    committed: 0,
    tentative: 0,
    digest: '00',
    paused: false,
    learning: false,
    halted: null,
    behind: 0,
    holding: false,
  }),
};
const req = (n: number): Req => ({
  ts: n,
  id: { replica: 0, eventNo: n },
  op: 'kv.put',
  args: null,
  strong: false,
  causalCtx: null,
});

const servers: WebSocketServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    s.close();
  }
});

async function watched(limits: { eventsPerSecond: number; bufferBytes: number }) {
  const stream = new EventStream(source, 'admin-secret', pino({ level: 'silent' }), limits);
  const wss = new WebSocketServer({ port: 0 });
  servers.push(wss);
  stream.attach(wss, new ConnectionGuard(DEFAULT_EDGE_LIMITS, pino({ level: 'silent' })));
  const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const frames: EventsFrame[] = [];
  ws.on('message', (d) => frames.push(EventsFrameSchema.parse(JSON.parse(d.toString()))));
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ t: 'watch', version: EVENTS_VERSION, token: 'admin-secret' }));
  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(done()).toBe(true);
  };
  await until(() => stream.watching);
  const server = [...wss.clients][0]!;
  const events = () => frames.flatMap((f) => (f.t === 'events' ? f.events : []));
  return { stream, server, frames, events, until };
}

describe('EventStream', () => {
  it('builds nothing while nobody watches', () => {
    const stream = new EventStream(source, 'admin-secret', pino({ level: 'silent' }), {
      eventsPerSecond: 100,
      bufferBytes: 1 << 20,
    });
    stream.op(req(1), true);
    stream.flushTurn();
    expect(stream.counters.events).toBe(0);
  });

  it('over budget, keeps the structural events, samples ops, and reports the rest as dropped', async () => {
    const v = await watched({ eventsPerSecond: 10, bufferBytes: 1 << 20 });
    await v.until(() => v.events().some((e) => e.e === 'status'));
    // Spend the budget, then a turn of 30 ops and a commit.
    for (let i = 1; i <= 30; i++) v.stream.op(req(i), true);
    v.stream.commit([req(1).id], 0);
    v.stream.flushTurn();
    await v.until(() => v.events().some((e) => e.e === 'commit'));
    const ops = v.events().filter((e) => e.e === 'op').length;
    expect(ops).toBeLessThan(30);
    // The next batch starts with what was dropped.
    v.stream.checkpoint(1);
    v.stream.flushTurn(Date.now() + 1_000);
    await v.until(() => v.events().some((e) => e.e === 'dropped'));
    const dropped = v.events().find((e) => e.e === 'dropped') as { count: number };
    expect(dropped.count).toBe(30 - ops);
    expect(v.stream.counters.dropped).toBe(30 - ops);
  });

  it('sends a viewer whose socket is full nothing, and counts it all as dropped', async () => {
    const v = await watched({ eventsPerSecond: 1_000, bufferBytes: 1_000 });
    await v.until(() => v.events().some((e) => e.e === 'status'));
    const before = v.frames.length;
    Object.defineProperty(v.server, 'bufferedAmount', { get: () => 5_000, configurable: true });
    for (let i = 1; i <= 5; i++) v.stream.op(req(i), true);
    v.stream.flushTurn();
    await new Promise((r) => setTimeout(r, 50));
    expect(v.frames.length).toBe(before);
    expect(v.stream.counters.dropped).toBe(5);
    // Drained: it hears of the five it missed.
    Object.defineProperty(v.server, 'bufferedAmount', { get: () => 0, configurable: true });
    v.stream.op(req(6), true);
    v.stream.flushTurn();
    await v.until(() => v.events().some((e) => e.e === 'dropped'));
    expect(v.events().find((e) => e.e === 'dropped')).toMatchObject({ count: 5 });
    expect(v.events().filter((e) => e.e === 'op')).toHaveLength(1);
  });
});
