import { PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import { ProtocolError, Unauthorized, type CreekError } from '../src/errors.js';
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

  it('asks once welcomed and its answered ops are in the replica’s hands, again after a move', () => {
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
    // No answer on that connection: asked again on the next, after the resubmitted op.
    session.submit('kv.put', { key: 'k' }, ['weak'], sink);
    receive(first.connection, {
      t: 'view',
      opId: '1',
      level: 'tentative',
      outcome: { ok: true, value: null },
      seen: [2],
    });
    session.connectionClosed(first.connection);
    take();
    session.reconnect();
    const conn = serve(take());
    const outs = take();
    const sent = outs.flatMap((o) => (o.t === 'send' ? [o.frame.t] : []));
    expect(sent.indexOf('invoke')).toBeLessThan(sent.indexOf('context'));
    expect(contexts(outs)).toEqual([{ t: 'context', n: 1, seen: [2] }]);
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

  it('throws on a malformed token, naming what is wrong', () => {
    expect(() => driven({ after: 'ct1.x.y' })).toThrow(
      /connect: after: this is not a context token/,
    );
  });
});
