import { PROTOCOL_VERSION, type ClientFrame, type ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import type { Outcome } from '@creek/replica/core/types.js';
import {
  ClientConnections,
  type ConnectionOutput,
} from '@creek/replica/host/client-connections.js';
import { describe, expect, it } from 'vitest';

/**
 * The replica's side of its client connections without sockets (host/client-connections.ts): the
 * runtime's socket driver and the simulator's links both drive it, so its rules are tested here
 * on their own, frame in, outputs out.
 */
function endpoint(
  o: {
    seen?: (session: string | null) => number[];
    received?: (replica: number, eventNo: number) => boolean;
    unavailable?: () => string | null;
    authorize?: (token: string | undefined) => boolean;
  } = {},
) {
  const invoked: InvokeRequest[] = [];
  const out: { conn: string; o: ConnectionOutput }[] = [];
  let now = 0;
  const c = new ClientConnections<string>({
    replicaId: 1,
    opNames: () => ['kv.put', 'kv.get'],
    readOnlyOps: () => ['kv.get'],
    authorize: o.authorize ?? (() => true),
    invoke: (r) => invoked.push(r),
    unavailable: o.unavailable ?? (() => null),
    seen: o.seen ?? (() => [0, 0]),
    received: o.received ?? (() => false),
    changedKeys: () => new Set(),
    observe: () => undefined,
    now: () => now,
    out: (conn, x) => out.push({ conn, o: x }),
  });
  const frames = (conn: string): ServerFrame[] =>
    out
      .filter((x) => x.conn === conn && x.o.t === 'frame')
      .map((x) => (x.o as { frame: ServerFrame }).frame);
  const hello = (conn: string, session?: string, seen?: number[]): void => {
    c.open(conn);
    c.frame(conn, {
      t: 'hello',
      version: PROTOCOL_VERSION,
      ...(session === undefined ? {} : { session }),
      ...(seen === undefined ? {} : { seen }),
    });
  };
  const invoke = (conn: string, f: Partial<Extract<ClientFrame, { t: 'invoke' }>>): void =>
    c.frame(conn, {
      t: 'invoke',
      opId: '1',
      op: 'kv.put',
      args: { key: 'k', value: 1 },
      level: 'strong',
      ...f,
    } as ClientFrame);
  const ok = (value: number): Outcome => ({ ok: true, value });
  return {
    c,
    invoked,
    out,
    frames,
    hello,
    invoke,
    ok,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('the replica side of client connections, without sockets', () => {
  it('welcomes a hello, hands an invoke to the replica, streams its views and confirms the stable one', () => {
    const e = endpoint();
    e.hello('a', 'session-1');
    expect(e.out.map((x) => x.o.t)).toEqual(['authenticated', 'frame']);
    expect(e.frames('a')[0]).toMatchObject({ t: 'welcome', replica: 1, readOnly: ['kv.get'] });
    e.invoke('a', { seq: 1, acked: 1 });
    expect(e.invoked).toEqual([
      {
        op: 'kv.put',
        args: { key: 'k', value: 1 },
        strong: true,
        tag: 1,
        session: { id: 'session-1', seq: 1, acked: 1 },
      },
    ]);
    const id = { replica: 1, eventNo: 1 };
    e.c.respond({ type: 'respond', tag: 1, id, level: 'tentative', outcome: e.ok(0) } as never);
    e.c.respond({ type: 'respond', tag: 1, id, level: 'stable', outcome: e.ok(0) } as never);
    // A session's confirmations leave together at the end of the turn.
    expect(e.frames('a').slice(1)).toEqual([
      { t: 'view', opId: '1', level: 'tentative', outcome: e.ok(0), seen: [0, 0] },
    ]);
    e.c.afterTurn();
    expect(e.frames('a').slice(2)).toEqual([{ t: 'confirm', opId: '1' }]);
    expect(e.c.pending()).toBe(0);
  });

  it('answers a retry of an op id with its views so far, on the new connection, and never invokes it again', () => {
    const e = endpoint();
    e.hello('a', 'session-1');
    e.invoke('a', { seq: 1 });
    e.c.respond({
      type: 'respond',
      tag: 1,
      id: { replica: 1, eventNo: 1 },
      level: 'tentative',
      outcome: e.ok(7),
    } as never);
    e.c.closed('a');
    e.hello('b', 'session-1');
    e.invoke('b', { seq: 1 });
    expect(e.invoked).toHaveLength(1);
    expect(e.c.counters.retries).toBe(1);
    // The views as the replica gave them (the op's id too: a retry is answered from what was kept).
    expect(e.frames('b').slice(1)).toEqual([
      {
        t: 'view',
        opId: '1',
        level: 'tentative',
        outcome: e.ok(7),
        id: { replica: 1, eventNo: 1 },
      },
    ]);
  });

  it('refuses what comes out of order, a wrong version and a wrong token, saying so to the driver', () => {
    const e = endpoint({ authorize: (t) => t === 'secret' });
    e.c.open('a');
    e.invoke('a', {});
    expect(e.out.map((x) => x.o)).toEqual([
      { t: 'violation', kind: 'outOfOrder', detail: 'invoke before welcome' },
      expect.objectContaining({
        t: 'frame',
        frame: expect.objectContaining({ code: 'out-of-order', opId: '1' }),
      }),
    ]);
    e.c.frame('a', { t: 'hello', version: PROTOCOL_VERSION + 1 });
    expect(e.frames('a').at(-1)).toMatchObject({ t: 'error', code: 'version' });
    e.c.frame('a', { t: 'hello', version: PROTOCOL_VERSION });
    expect(e.out.at(-2)!.o).toMatchObject({ t: 'frame', frame: { code: 'unauthorized' } });
    expect(e.out.at(-1)!.o).toEqual({ t: 'refused', reason: 'no valid token' });
    e.c.badFrame('a', 'bad-frame', 'not JSON');
    expect(e.c.counters).toMatchObject({ badFrames: 1, rejected: 4, invokes: 0 });
  });

  it('holds a session back until the replica has what it saw, and turns it away after the wait', () => {
    let has = false;
    const e = endpoint({ received: () => has });
    e.hello('a', 'session-1', [1, 0]);
    expect(e.frames('a')).toEqual([]);
    e.c.afterTurn();
    expect(e.frames('a')).toEqual([]);
    has = true;
    e.c.afterTurn();
    expect(e.frames('a')[0]).toMatchObject({ t: 'welcome' });
    has = false;
    e.hello('b', 'session-2', [1, 0]);
    e.advance(3_001);
    e.c.afterTurn();
    expect(e.frames('b')).toEqual([expect.objectContaining({ t: 'error', code: 'unavailable' })]);
    expect(e.out.at(-1)).toEqual({ conn: 'b', o: { t: 'close' } });
  });

  it('reports weak ops committed in a committed frame once their stable answers come', () => {
    const e = endpoint();
    e.hello('a', 'session-1');
    e.invoke('a', { opId: '1', seq: 1, level: 'weak' });
    e.invoke('a', { opId: '2', seq: 2, level: 'weak' });
    const respond = (tag: number, level: 'tentative' | 'stable') =>
      e.c.respond({
        type: 'respond',
        tag,
        id: { replica: 1, eventNo: tag },
        level,
        outcome: e.ok(0),
      } as never);
    respond(1, 'tentative');
    respond(2, 'tentative');
    respond(2, 'stable');
    e.c.afterTurn();
    // Op 1 is not committed yet: only what is below it is said to be.
    const committed = () => e.frames('a').filter((f) => f.t === 'committed');
    expect(committed()).toEqual([{ t: 'committed', below: 1 }]);
    respond(1, 'stable');
    e.c.afterTurn();
    expect(committed()).toEqual([
      { t: 'committed', below: 1 },
      { t: 'committed', below: 3 },
    ]);
  });

  it('says why it takes no op while the replica does not', () => {
    const e = endpoint({ unavailable: () => 'catching up' });
    e.hello('a', 'session-1');
    e.invoke('a', { seq: 1 });
    e.c.frame('a', { t: 'watch', watchId: 'w1', op: 'kv.get', args: { key: 'k' } });
    expect(e.invoked).toEqual([]);
    expect(e.frames('a').slice(1)).toEqual([
      { t: 'error', opId: '1', code: 'unavailable', message: 'catching up' },
      { t: 'unwatched', watchId: 'w1', code: 'unavailable', message: 'catching up' },
    ]);
  });
});
