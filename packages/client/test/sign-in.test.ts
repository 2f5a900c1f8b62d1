import { PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import type { ViewSink } from '../src/binding.js';
import { SignedOut, TokenExpired, Unauthorized, type CreekError } from '../src/errors.js';
import { ClientSession } from '../src/session/client-session.js';
import type { SessionOutput } from '../src/session/session-io.js';
import type { Identity } from '../src/session/sign-in.js';
import type { WatchSink } from '../src/session/watches.js';

/**
 * The client session's user, on its own (no sockets, timers or real time): the test plays the
 * driver and the replicas. Tokens are JWTs the client only reads (it never verifies one): their
 * payload says whose they are and when they expire, on the test's clock.
 */
const A = 'ws://a:7100/client';
const B = 'ws://b:7100/client';

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
/** A token of `sub` expiring at `expMs` on the test's clock (an unsigned JWT: never verified here). */
const jwt = (sub: string, expMs?: number, claims: object = {}): string =>
  `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, ...(expMs === undefined ? {} : { exp: expMs / 1000 }), ...claims })}.c2ln`;

function driven() {
  const clock = { now: 1_000_000 };
  const outputs: SessionOutput[] = [];
  const identities: Identity[] = [];
  let ids = 0;
  const session = new ClientSession({
    urls: [A, B],
    session: 'session-under-test',
    newSession: () => `session-${++ids}-of-a-new-user`,
    auth: true,
    maxInFlight: 1_024,
    offline: false,
    maxQueued: 1_000,
    persistent: false,
    now: () => clock.now,
    out: (o) => {
      if (o.t === 'identity') identities.push(o.identity);
      outputs.push(o);
    },
  });
  const take = (): SessionOutput[] => outputs.splice(0);
  const frames = (outs: SessionOutput[]): ClientFrame[] =>
    outs.flatMap((o) => (o.t === 'send' ? [o.frame] : []));
  const receive = (connection: number, frame: Record<string, unknown>) =>
    session.frameReceived(connection, JSON.stringify(frame));
  const lastConnect = (outs: SessionOutput[]): number => {
    const c = outs.filter((o) => o.t === 'connect').at(-1);
    if (c === undefined || c.t !== 'connect')
      throw new Error(`no connect: ${JSON.stringify(outs)}`);
    return c.connection;
  };
  /**
   * Opens the connection asked for last, gives `token` for its hello and welcomes it as `user`;
   * returns the connection and the hello.
   */
  const signIn = (outs: SessionOutput[], token: string, user: string) => {
    const connection = lastConnect(outs);
    session.connectionOpened(connection);
    expect(take()).toEqual([{ t: 'token', connection }]);
    session.tokenProvided(connection, token);
    const hello = frames(take())[0]!;
    receive(connection, {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: 0,
      levels: ['weak', 'strong'],
      ops: ['kv.put'],
      auth: { user, expiresInMs: 60_000 },
    });
    return { connection, hello };
  };
  return { session, clock, take, frames, receive, lastConnect, signIn, identities };
}

function recorder() {
  const heard: string[] = [];
  const errors: CreekError[] = [];
  const sink: ViewSink<unknown> = {
    view: (v) => heard.push(`view ${v.level}${v.final ? ' final' : ''}`),
    error: (e) => {
      errors.push(e);
      heard.push(`error ${e.name}`);
    },
    committed: () => heard.push('committed'),
    neverCommits: (e) => heard.push(`never commits${e === undefined ? '' : ` ${e.name}`}`),
  };
  return { sink, heard, errors };
}

function watchRecorder() {
  const heard: string[] = [];
  const sink: WatchSink = {
    view: (v) => heard.push(`view ${JSON.stringify(v.value)}`),
    failed: (e) => heard.push(`failed ${e.name}`),
    error: (e) => heard.push(`ended ${e.name}`),
  };
  return { sink, heard };
}

const invokes = (fs: ClientFrame[]) => fs.flatMap((f) => (f.t === 'invoke' ? [f] : []));
const stable = (opId: string) => ({
  t: 'view',
  opId,
  level: 'stable',
  outcome: { ok: true, value: 1 },
});

describe("refreshing the user's token before it expires", () => {
  it('sets a timer from the accepted token’s exp, and refreshes on the same connection with ops in flight', () => {
    const d = driven();
    expect(d.session.identity).toMatchObject({ state: 'signing-in', user: null, session: 1 });
    d.session.start();
    const { connection } = d.signIn(
      d.take(),
      jwt('alice', d.clock.now + 10_000, { role: 'member' }),
      'alice',
    );
    const outs = d.take();
    // Half its life: 5 s, on the session's clock.
    expect(outs).toContainEqual({ t: 'refresh', connection, afterMs: 5_000 });
    expect(d.session.identity).toMatchObject({
      state: 'signed-in',
      user: { id: 'alice', claims: { sub: 'alice', role: 'member' } },
      error: null,
    });
    const r = recorder();
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], r.sink);
    const [sent] = invokes(d.frames(d.take()));
    d.clock.now += 5_000;
    d.session.refreshDue(connection);
    expect(d.take()).toEqual([{ t: 'token', connection }]);
    // The replica asking meanwhile gets no second refresh.
    d.receive(connection, { t: 'auth-expiring', inMs: 4_000 });
    expect(d.take()).toEqual([]);
    const fresh = jwt('alice', d.clock.now + 10_000, { role: 'admin' });
    d.session.tokenProvided(connection, fresh);
    expect(d.frames(d.take())).toEqual([{ t: 'reauth', token: fresh }]);
    // Still one refresh at a time, until the replica answers.
    d.receive(connection, { t: 'auth-expiring', inMs: 4_000 });
    expect(d.take()).toEqual([]);
    d.receive(connection, { t: 'authed', user: 'alice', expiresInMs: 10_000 });
    expect(d.take()).toContainEqual({ t: 'refresh', connection, afterMs: 5_000 });
    expect(d.session.identity.user?.claims).toMatchObject({ role: 'admin' });
    // The op sent before the refresh is answered where it was sent, once; nothing was resent.
    d.receive(connection, stable(sent!.opId));
    expect(r.heard).toEqual(['committed', 'view strong final']);
    expect(invokes(d.frames(d.take()))).toEqual([]);
  });

  it('sets no timer for a token without exp, nor for one not a JWT: the replica asks instead', () => {
    for (const token of [jwt('alice'), 'an-opaque-token']) {
      const d = driven();
      d.session.start();
      const { connection } = d.signIn(d.take(), token, 'alice');
      expect(d.take().filter((o) => o.t === 'refresh')).toEqual([]);
      expect(d.session.identity).toMatchObject({ state: 'signed-in', user: { id: 'alice' } });
      d.receive(connection, { t: 'auth-expiring', inMs: 1_000 });
      expect(d.take()).toEqual([{ t: 'token', connection }]);
    }
  });

  it('sets no timer again for a token that expires no later (an auth function that caches)', () => {
    const d = driven();
    d.session.start();
    const exp = d.clock.now + 10_000;
    const { connection } = d.signIn(d.take(), jwt('alice', exp), 'alice');
    d.take();
    d.clock.now += 5_000;
    d.session.refreshDue(connection);
    d.take();
    d.session.tokenProvided(connection, jwt('alice', exp, { n: 2 }));
    expect(d.frames(d.take())).toMatchObject([{ t: 'reauth' }]);
    d.receive(connection, { t: 'authed', user: 'alice', expiresInMs: 5_000 });
    expect(d.take().filter((o) => o.t === 'refresh')).toEqual([]);
  });

  it('sends no refresh of the very token in use (a token string cannot be refreshed)', () => {
    const d = driven();
    d.session.start();
    const token = jwt('alice', d.clock.now + 10_000);
    const { connection } = d.signIn(d.take(), token, 'alice');
    d.take();
    d.receive(connection, { t: 'auth-expiring', inMs: 1_000 });
    expect(d.take()).toEqual([{ t: 'token', connection }]);
    d.session.tokenProvided(connection, token);
    expect(d.take()).toEqual([]);
    // The connection runs until the token expires; then the replica closes it.
    expect(d.session.identity).toMatchObject({ state: 'signed-in', error: null });
  });

  it('says when the auth function fails or the replica refuses the fresh token, and tries again while the token lasts', () => {
    const d = driven();
    d.session.start();
    const { connection } = d.signIn(d.take(), jwt('alice', d.clock.now + 10_000), 'alice');
    d.take();
    d.clock.now += 5_000;
    d.session.refreshDue(connection);
    d.take();
    d.session.tokenFailed(connection, 'the identity provider is unreachable');
    expect(d.session.identity.state).toBe('signed-in');
    expect(d.session.identity.error).toMatchObject({ code: 'auth-failed' });
    expect(d.session.identity.error!.message).toMatch(/the identity provider is unreachable/);
    // The connection stays, and the refresh is tried again at half the life left.
    expect(d.take().filter((o) => o.t !== 'identity')).toEqual([
      { t: 'refresh', connection, afterMs: 2_500 },
    ]);
    d.clock.now += 2_500;
    d.session.refreshDue(connection);
    d.take();
    d.session.tokenProvided(connection, jwt('alice', d.clock.now + 10_000));
    d.take();
    d.receive(connection, { t: 'auth-refused', code: 'unauthorized', message: 'signature' });
    expect(d.session.identity.error).toBeInstanceOf(Unauthorized);
    expect(d.take().filter((o) => o.t !== 'identity')).toEqual([
      { t: 'refresh', connection, afterMs: 1_250 },
    ]);
  });
});

describe('a token that expired', () => {
  it('is said (expired), and the session goes on at the next connection with a fresh token: each op applied once', () => {
    const d = driven();
    d.session.start();
    const { connection } = d.signIn(d.take(), jwt('alice', d.clock.now + 10_000), 'alice');
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], recorder().sink);
    const [sent] = invokes(d.frames(d.take()));
    d.receive(connection, { t: 'auth-expired', message: "the token of user 'alice' expired" });
    expect(d.session.identity).toMatchObject({ state: 'expired', user: { id: 'alice' } });
    expect(d.session.identity.error).toBeInstanceOf(TokenExpired);
    const outs = d.take();
    expect(outs).toContainEqual({ t: 'drop', connection, terminate: true });
    d.session.reconnect();
    const next = d.signIn(d.take(), jwt('alice', d.clock.now + 10_000), 'alice');
    expect(next.hello).toMatchObject({ t: 'hello', session: 'session-under-test' });
    expect(d.session.identity).toMatchObject({ state: 'signed-in', error: null });
    expect(invokes(d.frames(d.take()))).toMatchObject([{ opId: sent!.opId, seq: sent!.seq }]);
  });

  it('ends the session with TokenExpired when no fresh token is accepted, saying which ops may have taken effect', () => {
    const d = driven();
    d.session.start();
    const { connection } = d.signIn(d.take(), 'the-only-token', 'alice');
    const sent = recorder();
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], sent.sink);
    d.take();
    d.receive(connection, { t: 'auth-expired', message: 'expired' });
    d.take();
    const unsent = recorder();
    d.session.submit('kv.put', { key: 'k', value: 2 }, ['strong'], unsent.sink);
    d.session.reconnect();
    const next = d.lastConnect(d.take());
    d.session.connectionOpened(next);
    d.session.tokenProvided(next, 'the-only-token');
    d.receive(next, { t: 'error', code: 'unauthorized', message: 'user token refused: expired' });
    expect(d.session.identity).toMatchObject({ state: 'expired', user: { id: 'alice' } });
    expect(d.session.identity.error).toBeInstanceOf(TokenExpired);
    expect(sent.errors[0]).toBeInstanceOf(TokenExpired);
    expect(sent.errors[0]!.mayHaveTakenEffect).toBe(true);
    expect(unsent.errors[0]).toBeInstanceOf(TokenExpired);
    expect(unsent.errors[0]!.mayHaveTakenEffect).toBe(false);
    const later = recorder();
    d.session.submit('kv.put', { key: 'k', value: 3 }, ['strong'], later.sink);
    expect(later.errors[0]).toBeInstanceOf(TokenExpired);
  });

  it('a token refused at sign-in ends the session as refused, until another sign-in', () => {
    const d = driven();
    d.session.start();
    const first = d.lastConnect(d.take());
    d.session.connectionOpened(first);
    d.session.tokenProvided(first, 'forged');
    d.receive(first, { t: 'error', code: 'unauthorized', message: 'signature does not verify' });
    expect(d.session.identity).toMatchObject({ state: 'refused', user: null });
    expect(d.session.identity.error).toBeInstanceOf(Unauthorized);
    d.session.changeAuth(true, null);
    expect(d.session.identity).toMatchObject({ state: 'signing-in', error: null, session: 2 });
    d.signIn(d.take(), jwt('alice'), 'alice');
    expect(d.session.identity).toMatchObject({ state: 'signed-in', user: { id: 'alice' } });
  });
});

describe("another user, or none: the previous user's session ends", () => {
  it('fails its ops with SignedOut (sent: may have taken effect), ends its live queries, and starts a new session', () => {
    const d = driven();
    d.session.start();
    const { connection, hello } = d.signIn(d.take(), jwt('alice'), 'alice');
    expect(hello).toMatchObject({ session: 'session-under-test' });
    const answered = recorder();
    d.session.submit('kv.put', { key: 'a', value: 1 }, ['weak', 'strong'], answered.sink);
    const inFlight = recorder();
    d.session.submit('kv.put', { key: 'b', value: 1 }, ['strong'], inFlight.sink);
    const watch = watchRecorder();
    d.session.watch('kv.get', { key: 'a' }, watch.sink);
    const [first] = invokes(d.frames(d.take()));
    d.receive(connection, {
      t: 'view',
      opId: first!.opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 1 },
    });
    d.session.changeAuth(true, jwt('bob'));
    expect(inFlight.errors[0]).toBeInstanceOf(SignedOut);
    expect(inFlight.errors[0]!.mayHaveTakenEffect).toBe(true);
    expect(inFlight.errors[0]!.indeterminate).toBeNull();
    expect(answered.heard).toContain('error SignedOut');
    expect(watch.heard).toEqual(['ended SignedOut']);
    expect(d.session.identity).toMatchObject({ state: 'signing-in', user: null, session: 2 });
    const outs = d.take();
    expect(outs).toContainEqual({ t: 'drop', connection, terminate: true });
    // Frames still coming on the previous user's connection are not heard.
    d.receive(connection, stable(first!.opId));
    const next = d.signIn(outs, jwt('bob'), 'bob');
    expect(next.hello).toMatchObject({ t: 'hello', session: 'session-1-of-a-new-user' });
    expect(d.session.identity).toMatchObject({ state: 'signed-in', user: { id: 'bob' } });
    // Nothing of alice's session is sent on bob's connection; bob's ops number from 1.
    expect(d.frames(d.take()).filter((f) => f.t !== 'hello')).toEqual([]);
    d.session.submit('kv.put', { key: 'c', value: 1 }, ['strong'], recorder().sink);
    expect(invokes(d.frames(d.take()))).toMatchObject([{ seq: 1 }]);
    // An op that was never sent, ended at the switch, never will be.
    const queued = driven();
    queued.session.start();
    const q = recorder();
    queued.session.submit('kv.put', { key: 'q', value: 1 }, ['strong'], q.sink);
    queued.session.changeAuth(false, null);
    expect(q.errors[0]).toBeInstanceOf(SignedOut);
    expect(q.errors[0]!.mayHaveTakenEffect).toBe(false);
  });

  it('signing out starts an anonymous session', () => {
    const d = driven();
    d.session.start();
    d.signIn(d.take(), jwt('alice'), 'alice');
    d.take();
    d.session.changeAuth(false, null);
    const next = d.lastConnect(d.take());
    d.session.connectionOpened(next);
    const [hello] = d.frames(d.take());
    expect(hello).toMatchObject({ t: 'hello', session: 'session-1-of-a-new-user' });
    expect(hello).not.toHaveProperty('auth');
    expect(d.session.identity).toMatchObject({ state: 'signed-out', user: null, session: 2 });
  });

  it('a token string of the same user is a refresh: the session and its ops stay', () => {
    const d = driven();
    d.session.start();
    const { connection } = d.signIn(d.take(), jwt('alice'), 'alice');
    const r = recorder();
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], r.sink);
    const [sent] = invokes(d.frames(d.take()));
    const fresh = jwt('alice', d.clock.now + 60_000);
    d.session.changeAuth(true, fresh);
    expect(d.take()).toEqual([{ t: 'token', connection }]);
    d.session.tokenProvided(connection, fresh);
    expect(d.frames(d.take())).toEqual([{ t: 'reauth', token: fresh }]);
    d.receive(connection, stable(sent!.opId));
    expect(r.heard).toEqual(['committed', 'view strong final']);
    expect(d.session.identity.session).toBe(1);
  });

  it("the auth function giving another user's token ends the session too, at a refresh or at a welcome", () => {
    const d = driven();
    d.session.start();
    const { connection } = d.signIn(d.take(), jwt('alice'), 'alice');
    const r = recorder();
    d.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], r.sink);
    d.take();
    d.receive(connection, { t: 'auth-expiring', inMs: 1_000 });
    d.take();
    d.session.tokenProvided(connection, jwt('bob'));
    expect(r.errors[0]).toBeInstanceOf(SignedOut);
    expect(d.session.identity.session).toBe(2);
    // At a reconnection: the replica welcomes the token's user, and alice's ops never go to it.
    const e = driven();
    e.session.start();
    const first = e.signIn(e.take(), 'opaque-alice', 'alice').connection;
    const op = recorder();
    e.session.submit('kv.put', { key: 'k', value: 1 }, ['strong'], op.sink);
    e.take();
    e.session.connectionClosed(first);
    e.take();
    e.session.reconnect();
    e.signIn(e.take(), 'opaque-bob', 'bob');
    expect(op.errors[0]).toBeInstanceOf(SignedOut);
    expect(op.errors[0]!.message).toMatch(
      /the session was user 'alice''s, and a replica took the client as user 'bob'/,
    );
    const outs = e.take();
    expect(invokes(e.frames(outs))).toEqual([]);
    expect(outs).toContainEqual(expect.objectContaining({ t: 'drop', terminate: true }));
    expect(e.session.identity).toMatchObject({ state: 'signing-in', session: 2 });
  });
});

describe('a stored session (offline storage) is its user’s', () => {
  const stored = (user?: string | null) => ({
    version: 1 as const,
    session: 'stored-session',
    nextSeq: 2,
    ops: [{ seq: 1, op: 'kv.put', args: { key: 'k' }, level: 'strong' as const, stableOnly: true }],
    ...(user === undefined ? {} : { user }),
  });

  it('sends its ops again for the same user, and saves whose it is', () => {
    const d = driven();
    const r = recorder();
    d.session.restore(stored('alice'), () => r.sink);
    d.session.start();
    d.signIn(d.take(), jwt('alice'), 'alice');
    expect(invokes(d.frames(d.take()))).toMatchObject([{ seq: 1 }]);
    expect(d.session.stored()).toMatchObject({ session: 'stored-session', user: 'alice' });
  });

  it('never sends them under another user: they fail with SignedOut, and the storage gets a new, empty session', () => {
    for (const [was, now] of [
      ['alice', 'bob'],
      [null, 'bob'],
    ] as const) {
      const d = driven();
      const r = recorder();
      d.session.restore(stored(was), () => r.sink);
      d.session.start();
      d.signIn(d.take(), jwt(now), now);
      expect(r.errors[0]).toBeInstanceOf(SignedOut);
      // An earlier client may have sent it before it stopped.
      expect(r.errors[0]!.mayHaveTakenEffect).toBe(true);
      expect(invokes(d.frames(d.take()))).toEqual([]);
      expect(d.session.stored()).toMatchObject({ session: 'session-1-of-a-new-user', ops: [] });
    }
  });
});
