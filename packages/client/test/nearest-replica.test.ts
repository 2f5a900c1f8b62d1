import { PROTOCOL_VERSION, type ReplicaUrls } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import type { ViewSink } from '../src/binding.js';
import { ClientSession } from '../src/session/client-session.js';
import { KnownReplicas } from '../src/session/known-replicas.js';
import type { ClientSessionConfig, SessionOutput } from '../src/session/session-io.js';

/**
 * How a client session finds its replicas and picks the nearest, on its own: the test plays the
 * driver (connections, probes' round trips, the clock) and the replicas (their frames). (Real
 * processes: nearest-replica.e2e.test.ts.)
 */
const A = 'ws://a:7100/client';
const B = 'ws://b:7100/client';
const C = 'ws://c:7100/client';
const D = 'ws://d:7100/client';
const members: ReplicaUrls = [
  { id: 0, url: A },
  { id: 1, url: B },
  { id: 2, url: C },
];

function driven(config: Partial<ClientSessionConfig> = {}) {
  const clock = { now: 1_000 };
  const outputs: SessionOutput[] = [];
  const session = new ClientSession({
    urls: [A],
    session: 'session-under-test',
    maxInFlight: 1_024,
    offline: false,
    maxQueued: 1_000,
    persistent: false,
    now: () => clock.now,
    out: (o) => outputs.push(o),
    ...config,
  });
  const take = (): SessionOutput[] => outputs.splice(0);
  const lastConnect = (outs: SessionOutput[]) => {
    const c = outs.filter((o) => o.t === 'connect').at(-1);
    if (c === undefined) throw new Error(`no connect among ${JSON.stringify(outs)}`);
    return c;
  };
  const probes = (outs: SessionOutput[]) =>
    outs.flatMap((o) => (o.t === 'probe' ? [o.url] : [])).sort();
  /** Opens the connection asked for last and welcomes it as `replica`, listing `list`. */
  const serve = (outs: SessionOutput[], replica: number, list: ReplicaUrls | null = members) => {
    const { connection } = lastConnect(outs);
    session.connectionOpened(connection);
    session.frameReceived(
      connection,
      JSON.stringify({
        t: 'welcome',
        version: PROTOCOL_VERSION,
        replica,
        levels: ['weak', 'strong'],
        ops: ['kv.put'],
        ...(list === null ? {} : { members: list }),
      }),
    );
    return connection;
  };
  return { session, clock, take, lastConnect, probes, serve };
}

const quiet: ViewSink<unknown> = {
  view: () => undefined,
  error: () => undefined,
  committed: () => undefined,
  neverCommits: () => undefined,
  queued: () => undefined,
};

describe('a client given one URL', () => {
  it('learns the members from the welcome, measures them, and moves to the nearest', () => {
    const d = driven();
    d.session.start();
    const first = d.serve(d.take(), 0);
    const outs = d.take();
    expect(d.probes(outs)).toEqual([A, B, C]);
    // An op in flight at A when the client moves.
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['weak'], quiet);
    const sent = d.take().find((o) => o.t === 'send');
    expect(sent).toMatchObject({ connection: first, frame: { t: 'invoke', seq: 1 } });
    d.session.probed(A, 60);
    d.session.probed(C, 50);
    expect(d.take()).toEqual([]); // C is 10 ms nearer than A's 60: not worth a move
    d.session.probed(B, 5);
    const moved = d.take();
    expect(moved).toContainEqual({ t: 'drop', connection: first, terminate: true });
    expect(d.lastConnect(moved).url).toBe(B);
    // At B the op goes again, with its op id and number: applied once.
    const second = d.serve(moved, 1);
    const again = d.take().find((o) => o.t === 'send' && o.frame.t === 'invoke');
    expect(again).toMatchObject({
      connection: second,
      frame: { t: 'invoke', seq: 1, opId: (sent as { frame: { opId: string } }).frame.opId },
    });
  });

  it('stays where it is when the nearest is not nearer by a margin', () => {
    const d = driven();
    d.session.start();
    d.serve(d.take(), 0);
    d.take();
    d.session.probed(A, 12);
    d.session.probed(B, 4); // 8 ms nearer: not worth a move (NEARER_BY_MS)
    d.session.probed(C, 30);
    expect(d.take().some((o) => o.t === 'connect')).toBe(false);
  });

  it('fails over in order of distance, and never back to a replica that failed until measured', () => {
    const d = driven();
    d.session.start();
    const first = d.serve(d.take(), 0);
    d.take();
    d.session.probed(A, 5);
    d.session.probed(B, 90);
    d.session.probed(C, 40);
    d.session.connectionClosed(first);
    expect(d.take()).toContainEqual({ t: 'reconnect', afterMs: 50 });
    d.session.reconnect();
    const toC = d.take();
    expect(d.lastConnect(toC).url).toBe(C);
    d.serve(toC, 2);
    expect(d.take().some((o) => o.t === 'connect')).toBe(false); // not back to A at once
    // A came back, measured again: the client returns to it.
    d.session.probed(A, 5);
    expect(d.lastConnect(d.take()).url).toBe(A);
  });

  it('follows a replacement: leaves a replica no longer a member for the nearest member', () => {
    const d = driven();
    d.session.start();
    const first = d.serve(d.take(), 0);
    d.take();
    d.session.probed(A, 5);
    d.session.probed(B, 30);
    d.session.probed(C, 20);
    expect(d.take()).toEqual([]);
    // Replica 0 replaced by replica 3 at D: D is measured, and the client leaves A for C now.
    const replaced: ReplicaUrls = [members[1]!, members[2]!, { id: 3, url: D }];
    d.session.frameReceived(first, JSON.stringify({ t: 'members', members: replaced }));
    const outs = d.take();
    expect(d.probes(outs)).toEqual([A, B, C, D]); // A too: the URL it was given, ranked last
    expect(d.lastConnect(outs).url).toBe(C);
    // A, the URL it was given, is tried last, after every member.
    const k = new KnownReplicas([A]);
    k.welcomedAs(A, 0);
    k.learn(replaced);
    k.measured(B, 30);
    k.measured(C, 20);
    expect(k.ranked()).toEqual([C, B, D, A]);
  });

  it('with discover off, keeps to its URLs: measures them, and ignores the members listed', () => {
    const d = driven({ discover: false, urls: [A, C] });
    d.session.start();
    const first = d.serve(d.take(), 0);
    expect(d.probes(d.take())).toEqual([A, C]);
    d.session.frameReceived(first, JSON.stringify({ t: 'members', members: [members[1]] }));
    d.session.probed(B, 1);
    d.session.probed(A, 60);
    expect(d.take()).toEqual([]);
    d.session.probed(C, 2);
    expect(d.lastConnect(d.take()).url).toBe(C);
  });

  it('with one URL and nothing learnt, measures nothing', () => {
    const d = driven({ discover: false });
    d.session.start();
    d.serve(d.take(), 0);
    expect(d.probes(d.take())).toEqual([]);
  });

  it('with nearest off, measures nothing and fails over in the order known', () => {
    const d = driven({ nearest: false });
    d.session.start();
    const first = d.serve(d.take(), 0);
    expect(d.probes(d.take())).toEqual([]);
    d.session.connectionClosed(first);
    d.take();
    d.session.reconnect();
    expect(d.lastConnect(d.take()).url).toBe(B);
  });

  it('measures its replicas again every 30 s', () => {
    const d = driven();
    d.session.start();
    d.serve(d.take(), 0);
    expect(d.probes(d.take())).toHaveLength(3);
    d.clock.now += 29_000;
    d.session.tick();
    expect(d.probes(d.take())).toEqual([]);
    d.clock.now += 1_000;
    d.session.tick();
    expect(d.probes(d.take())).toEqual([A, B, C]);
  });
});
