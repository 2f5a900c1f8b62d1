import { PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import { ProtocolError, Unauthorized, Unavailable, type CreekError } from '../src/errors.js';
import type { SessionOutput } from '../src/session/session-io.js';
import { driven, recorder } from './session-harness.js';

/**
 * A session's context tokens (context-requests.ts), driven step by step: the token it starts after
 * goes in its hellos until a replica that speaks tokens welcomes it, and then into what it has
 * seen; its requests for tokens wait until its answered ops are in the current replica's hands.
 */
const TOKEN = 'ct1.5-0-3.AAAAAAAAAAAAAAAAAAAAAA';
/** A welcome from a replica of a release before context tokens (client protocol 1). */
const WELCOME_AT_1 = {
  t: 'welcome',
  version: 1,
  replica: 0,
  levels: ['weak', 'strong'],
  ops: ['kv.put'],
};

function asker() {
  const got: string[] = [];
  const errors: CreekError[] = [];
  return {
    got,
    errors,
    sink: { token: (t: string) => got.push(t), error: (e: CreekError) => errors.push(e) },
  };
}

const hellos = (outs: SessionOutput[]): Extract<ClientFrame, { t: 'hello' }>[] =>
  outs.flatMap((o) => (o.t === 'send' && o.frame.t === 'hello' ? [o.frame] : []));
const contexts = (outs: SessionOutput[]) =>
  outs.flatMap((o) => (o.t === 'send' && o.frame.t === 'context' ? [o.frame] : []));

describe('context tokens in the client session', () => {
  it('says the token it starts after until welcomed, then carries its counts as seen', () => {
    const { session, take, connectIn, welcome } = driven({ after: TOKEN });
    session.start();
    const first = connectIn(take());
    session.connectionOpened(first.connection);
    expect(hellos(take())[0]).toMatchObject({ after: TOKEN });
    welcome(first.connection);
    // The next connection (the replica went away) says the counts as its own: no token needed.
    session.connectionClosed(first.connection);
    take();
    session.reconnect();
    const second = connectIn(take());
    session.connectionOpened(second.connection);
    const [h] = hellos(take());
    expect(h?.after).toBeUndefined();
    expect(h?.seen).toEqual([5, 0, 3]);
  });

  it('says the counts as seen on a new connection when an older replica ignored the token', () => {
    const { session, take, connectIn, receive } = driven({ after: TOKEN });
    session.start();
    const first = connectIn(take());
    session.connectionOpened(first.connection);
    take();
    receive(first.connection, WELCOME_AT_1);
    expect(take()).toContainEqual({ t: 'drop', connection: first.connection, terminate: false });
    session.connectionClosed(first.connection);
    take();
    session.reconnect();
    const second = connectIn(take());
    session.connectionOpened(second.connection);
    expect(hellos(take())[0]).toMatchObject({ seen: [5, 0, 3] });
  });

  it('asks once welcomed and its answered ops are answered again by the current replica, again after a move', () => {
    const { session, take, connectIn, receive, serve } = driven();
    const { sink } = recorder();
    const a = asker();
    session.start();
    const first = connectIn(take());
    session.context(a.sink);
    expect(contexts(take())).toEqual([]);
    session.connectionOpened(first.connection);
    take();
    receive(first.connection, {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: 0,
      levels: ['weak', 'strong'],
      ops: ['kv.put'],
    });
    expect(contexts(take())).toEqual([{ t: 'context', n: 1 }]);
    // No answer on that connection: asked again on the next, once the write answered on the
    // first (ordered, not committed yet) is answered again there: the replica's counts cover its
    // new copy only once that copy is durable, which its answer says.
    session.submit('kv.put', { key: 'k' }, ['weak'], sink);
    receive(first.connection, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 3 },
      seen: [2],
    });
    session.connectionClosed(first.connection);
    take();
    session.reconnect();
    const conn = serve(take());
    const outs = take();
    expect(outs.some((o) => o.t === 'send' && o.frame.t === 'invoke')).toBe(true);
    expect(contexts(outs)).toEqual([]);
    receive(conn, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 1, eventNo: 7 },
    });
    expect(contexts(take())).toEqual([{ t: 'context', n: 1, seen: [2] }]);
    receive(conn, { t: 'context', n: 1, token: TOKEN });
    expect(a.got).toEqual([TOKEN]);
    // A refusal is the caller's error.
    const b = asker();
    session.context(b.sink);
    receive(conn, { t: 'context', n: 2, code: 'unauthorized', message: 'no' });
    expect(b.errors[0]).toBeInstanceOf(Unauthorized);
  });

  it('refuses at once on a replica of an older release, and fails requests when closed', () => {
    const { session, take, connectIn, receive } = driven();
    session.start();
    const first = connectIn(take());
    session.connectionOpened(first.connection);
    take();
    const waiting = asker();
    session.context(waiting.sink);
    receive(first.connection, WELCOME_AT_1);
    expect(waiting.errors[0]).toBeInstanceOf(ProtocolError);
    expect(waiting.errors[0]?.message).toMatch(/runs a release without context tokens/);
    const later = asker();
    session.context(later.sink);
    expect(later.errors[0]?.message).toMatch(/runs a release without context tokens/);
    const closed = driven();
    const c = asker();
    closed.session.start();
    closed.session.context(c.sink);
    closed.session.close();
    expect(c.errors[0]?.code).toBe('closed');
  });

  it('goes on after another client’s token: asks its replica to cover both, then carries the answer as seen', () => {
    const { session, take, serve, receive, connectIn } = driven();
    const { sink } = recorder();
    session.start();
    const conn = serve(take());
    take();
    session.submit('kv.put', { key: 'k' }, ['weak'], sink);
    receive(conn, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      seen: [2, 1],
    });
    take();
    const a = asker();
    session.after('ct1.1-4-0-257:2.AAAAAAAAAAAAAAAAAAAAAA', a.sink);
    // The request covers the session's own seen and the token's counts, later origins included.
    expect(contexts(take())).toEqual([
      { t: 'context', n: 1, seen: [2, 4, 0], seenLater: [[257, 2]] },
    ]);
    const signed = 'ct1.3-4-1-257:2.BBBBBBBBBBBBBBBBBBBBBB';
    receive(conn, { t: 'context', n: 1, token: signed });
    expect(a.got).toEqual([signed]);
    // What the replica signed is now what the session has seen: a move carries it on.
    session.connectionClosed(conn);
    take();
    session.reconnect();
    const next = connectIn(take());
    session.connectionOpened(next.connection);
    expect(hellos(take())[0]).toMatchObject({ seen: [3, 4, 1], seenLater: [[257, 2]] });
  });

  it('fails an after whose token is malformed, or that its replica has not caught up with', () => {
    const { session, take, serve, receive } = driven();
    session.start();
    const conn = serve(take());
    take();
    const bad = asker();
    session.after('not a token', bad.sink);
    expect(bad.errors[0]).toBeInstanceOf(TypeError);
    expect(bad.errors[0]?.message).toMatch(/client\.after: this is not a context token/);
    const behind = asker();
    session.after('ct1.9.AAAAAAAAAAAAAAAAAAAAAA', behind.sink);
    expect(contexts(take())).toEqual([{ t: 'context', n: 1, seen: [9] }]);
    receive(conn, { t: 'context', n: 1, code: 'unavailable', message: 'not caught up' });
    expect(behind.errors[0]).toBeInstanceOf(Unavailable);
    // Nothing of the token became part of what the session has seen.
    expect(session.seenCounts).toEqual([]);
  });

  it('throws on a malformed token, naming what is wrong', () => {
    expect(() => driven({ after: 'ct1.x.y' })).toThrow(
      /connect: after: this is not a context token/,
    );
  });
});
