import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkAccess, defineApp, op, type User } from '@creek/app';
import { MAX_AUTH_TOKEN_CHARS, PROTOCOL_VERSION, type ClientFrame } from '@creek/protocol';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import {
  ClientConnections,
  type ConnectionOutput,
  type TokenVerdict,
} from '@creek/replica/host/client-connections.js';

/**
 * The replica's side of client connections with user tokens, as the pure state machine it is: the
 * driver's verdicts come in by hand, the clock is a number, and every output is kept. (The socket
 * driver and real tokens: test/node/auth.e2e.test.ts.)
 */
const app = defineApp({
  open: op({ args: z.null(), public: true, run: () => 1 }),
  mine: op({ args: z.null(), run: () => 2 }),
  admin: op({ args: z.null(), access: (u) => u.claims.role === 'admin', run: () => 3 }),
  list: op({ args: z.null(), readOnly: true, run: () => [] }),
});

const alice: User = { id: 'alice', claims: { sub: 'alice', role: 'admin' } };
const bob: User = { id: 'bob', claims: { sub: 'bob' } };

function harness(verifiesTokens = true) {
  const out: { conn: string; o: ConnectionOutput }[] = [];
  const invoked: InvokeRequest[] = [];
  const clock = { now: 0 };
  const cc = new ClientConnections<string>({
    replicaId: 0,
    opNames: () => app.names(),
    readOnlyOps: () => ['list'],
    authorize: () => true,
    verifiesTokens,
    ...(verifiesTokens ? { access: (name, user) => checkAccess(app, name, user) } : {}),
    invoke: (r) => invoked.push(r),
    unavailable: () => null,
    seen: () => [],
    received: () => false,
    changedKeys: () => new Set(),
    observe: () => undefined,
    now: () => clock.now,
    out: (conn, o) => out.push({ conn, o }),
  });
  const frames = (conn: string) =>
    out.filter((x) => x.conn === conn).map((x) => (x.o.t === 'frame' ? x.o.frame : x.o));
  const last = (conn: string) => frames(conn).at(-1);
  const send = (conn: string, f: ClientFrame) => cc.frame(conn, f);
  const hello = (conn: string, extra: Partial<Extract<ClientFrame, { t: 'hello' }>> = {}) => {
    cc.open(conn);
    send(conn, { t: 'hello', version: PROTOCOL_VERSION, ...extra });
  };
  const ok = (user: User, validForMs = 60_000): TokenVerdict => ({ ok: true, user, validForMs });
  const invoke = (conn: string, opId: string, name: string, more: object = {}) =>
    send(conn, { t: 'invoke', opId, op: name, args: null, level: 'weak', ...more });
  return { cc, out, invoked, clock, frames, last, send, hello, ok, invoke };
}

describe('user tokens at the replica’s side of a connection', () => {
  it('verifies a hello’s token before it welcomes, and runs the ops as its user', () => {
    const h = harness();
    h.hello('c', { auth: 'token-of-alice' });
    expect(h.last('c')).toEqual({ t: 'verify', token: 'token-of-alice' });
    // Nothing is taken before the welcome.
    h.invoke('c', 'op-1', 'mine');
    expect(h.last('c')).toMatchObject({ t: 'error', code: 'out-of-order', opId: 'op-1' });
    h.cc.verified('c', h.ok(alice));
    expect(h.last('c')).toMatchObject({
      t: 'welcome',
      auth: { user: 'alice', expiresInMs: 60_000 },
    });
    h.invoke('c', 'op-2', 'mine');
    expect(h.invoked).toHaveLength(1);
    expect(h.invoked[0]!.user).toEqual(alice);
    expect(Object.isFrozen(h.invoked[0]!.user!.claims)).toBe(true);
  });

  it('welcomes an anonymous client, whose ops carry no user', () => {
    const h = harness();
    h.hello('c');
    expect(h.last('c')).toMatchObject({ t: 'welcome', auth: { user: null } });
    h.invoke('c', 'op-1', 'open');
    expect(h.invoked[0]!.user).toBeUndefined();
  });

  it('refuses a hello whose token the driver refused, and closes; unavailable keys close too', () => {
    const h = harness();
    h.hello('c', { auth: 'expired' });
    h.cc.verified('c', { ok: false, code: 'unauthorized', message: 'the token expired' });
    expect(h.frames('c').slice(-2)).toEqual([
      { t: 'error', code: 'unauthorized', message: 'the token expired' },
      { t: 'refused', reason: 'user token refused' },
    ]);
    h.hello('d', { auth: 'any' });
    h.cc.verified('d', { ok: false, code: 'unavailable', message: 'the keys did not come' });
    expect(h.frames('d').slice(-2)).toEqual([
      { t: 'error', code: 'unavailable', message: 'the keys did not come' },
      { t: 'close' },
    ]);
    expect(h.invoked).toHaveLength(0);
  });

  it('refuses a token it would not read: too long, or sent to a replica that verifies none', () => {
    const h = harness();
    h.hello('c', { auth: 'x'.repeat(MAX_AUTH_TOKEN_CHARS + 1) });
    expect(h.frames('c').some((f) => f.t === 'verify')).toBe(false);
    expect(h.frames('c').at(-2)).toMatchObject({ code: 'unauthorized', message: /8192/ });
    const off = harness(false);
    off.hello('c', { auth: 'token' });
    expect(off.frames('c').at(-2)).toMatchObject({
      code: 'unauthorized',
      message: /verifies no user tokens/,
    });
    expect(off.last('c')).toMatchObject({ t: 'refused' });
  });

  it('refuses ops the caller may not call before they are ordered, saying so', () => {
    const h = harness();
    h.hello('anon');
    h.invoke('anon', 'a1', 'mine');
    expect(h.last('anon')).toMatchObject({ t: 'error', opId: 'a1', code: 'unauthorized' });
    h.invoke('anon', 'a2', 'kv.get', { args: { key: 'k' } });
    expect(h.last('anon')).toMatchObject({ t: 'error', opId: 'a2', code: 'unauthorized' });
    h.hello('bob', { auth: 'b' });
    h.cc.verified('bob', h.ok(bob));
    h.invoke('bob', 'b1', 'admin');
    expect(h.last('bob')).toMatchObject({
      t: 'error',
      opId: 'b1',
      code: 'forbidden',
      message: /not applied/,
    });
    expect(h.invoked).toHaveLength(0);
    h.invoke('bob', 'b2', 'mine');
    h.invoke('anon', 'a3', 'open');
    expect(h.invoked.map((r) => r.op)).toEqual(['mine', 'open']);
  });

  it('runs a live query as the user who watches, and refuses one the user may not read', () => {
    const h = harness();
    h.hello('anon');
    h.send('anon', { t: 'watch', watchId: 'w', op: 'list', args: null });
    expect(h.last('anon')).toMatchObject({ t: 'unwatched', watchId: 'w', code: 'unauthorized' });
    h.hello('bob', { auth: 'b' });
    h.cc.verified('bob', h.ok(bob));
    h.send('bob', { t: 'watch', watchId: 'w', op: 'list', args: null });
    expect(h.invoked.map((r) => [r.watch, r.user?.id])).toEqual([
      ['tentative', 'bob'],
      ['stable', 'bob'],
    ]);
  });

  it('asks for a fresh token at half its life, and closes the connection once it expired', () => {
    const h = harness();
    h.hello('c', { auth: 'a' });
    h.cc.verified('c', h.ok(alice, 10_000));
    h.clock.now = 4_999;
    expect(h.cc.sendsThisTurn()).toBe(false);
    h.clock.now = 5_000;
    expect(h.cc.sendsThisTurn()).toBe(true);
    h.cc.afterTurn();
    expect(h.last('c')).toEqual({ t: 'auth-expiring', inMs: 5_000 });
    h.cc.afterTurn(); // asked once per token
    expect(h.frames('c').filter((f) => f.t === 'auth-expiring')).toHaveLength(1);
    h.clock.now = 10_000;
    h.invoke('c', 'late', 'mine');
    expect(h.invoked).toHaveLength(0);
    expect(h.frames('c').slice(-2)).toEqual([
      { t: 'auth-expired', message: expect.stringMatching(/expired/) as string },
      { t: 'close' },
    ]);
    h.cc.afterTurn(); // told once
    expect(h.frames('c').filter((f) => f.t === 'auth-expired')).toHaveLength(1);
  });

  it('takes a fresh token of the same user, and refuses another user’s or a second at once', () => {
    const h = harness();
    h.send('x', { t: 'reauth', token: 't' }); // unknown connection: nothing
    h.hello('c', { auth: 'a' });
    h.cc.verified('c', h.ok(alice, 10_000));
    h.send('c', { t: 'reauth', token: 'fresh' });
    expect(h.last('c')).toEqual({ t: 'verify', token: 'fresh' });
    h.send('c', { t: 'reauth', token: 'another' });
    expect(h.last('c')).toMatchObject({ t: 'auth-refused', code: 'busy' });
    h.clock.now = 9_000;
    const promoted = { id: 'alice', claims: { sub: 'alice', role: 'owner' } };
    h.cc.verified('c', h.ok(promoted, 60_000));
    expect(h.last('c')).toEqual({ t: 'authed', user: 'alice', expiresInMs: 60_000 });
    h.clock.now = 20_000; // past the first token's end: the fresh one holds
    h.invoke('c', 'op', 'mine');
    expect(h.invoked[0]!.user).toEqual(promoted);
    h.send('c', { t: 'reauth', token: 'bob' });
    h.cc.verified('c', h.ok(bob));
    expect(h.last('c')).toMatchObject({ t: 'auth-refused', message: /new connection/ });
    h.send('c', { t: 'reauth', token: 'garbage' });
    h.cc.verified('c', { ok: false, code: 'unauthorized', message: 'bad signature' });
    expect(h.last('c')).toEqual({
      t: 'auth-refused',
      code: 'unauthorized',
      message: 'bad signature',
    });
    h.invoke('c', 'op2', 'mine'); // still alice's connection
    expect(h.invoked[1]!.user).toEqual(promoted);
  });

  it('refuses a fresh token on an anonymous connection and before the welcome', () => {
    const h = harness();
    h.cc.open('early');
    h.send('early', { t: 'reauth', token: 't' });
    expect(h.last('early')).toMatchObject({ t: 'error', code: 'out-of-order' });
    h.hello('anon');
    h.send('anon', { t: 'reauth', token: 't' });
    expect(h.last('anon')).toMatchObject({ t: 'auth-refused', message: /anonymous/ });
  });

  it("keeps a session its user's: another user naming it and an op id reaches none of its ops", () => {
    const h = harness();
    h.hello('a', { auth: 'a', session: 'shared-session' });
    h.cc.verified('a', h.ok(alice));
    h.invoke('a', 'op-1', 'mine', { seq: 1 });
    h.hello('b', { auth: 'b', session: 'shared-session' });
    h.cc.verified('b', h.ok(bob));
    // The same op id in the same session id: a new op of bob's, not a retry of alice's.
    h.invoke('b', 'op-1', 'mine', { seq: 1 });
    expect(h.invoked.map((r) => r.user?.id)).toEqual(['alice', 'bob']);
    expect(h.cc.counters.retries).toBe(0);
    // Alice's own retry is one.
    h.hello('a2', { auth: 'a', session: 'shared-session' });
    h.cc.verified('a2', h.ok(alice));
    h.invoke('a2', 'op-1', 'mine', { seq: 1 });
    expect(h.cc.counters.retries).toBe(1);
  });
});

describe('a fresh token before the welcome', () => {
  it('is taken while the hello waits for the replica to catch up (the simulator found it refused)', () => {
    const out: { conn: string; o: ConnectionOutput }[] = [];
    const clock = { now: 0 };
    let caughtUp = false;
    const cc = new ClientConnections<string>({
      replicaId: 0,
      opNames: () => [],
      readOnlyOps: () => [],
      authorize: () => true,
      verifiesTokens: true,
      invoke: () => undefined,
      unavailable: () => null,
      seen: () => [0],
      received: () => caughtUp,
      changedKeys: () => new Set(),
      observe: () => undefined,
      now: () => clock.now,
      out: (conn, o) => out.push({ conn, o }),
    });
    cc.open('c');
    cc.frame('c', {
      t: 'hello',
      version: PROTOCOL_VERSION,
      auth: 'a',
      session: 'session-1',
      seen: [3],
    });
    cc.verified('c', { ok: true, user: alice, validForMs: 1_000 });
    clock.now = 500; // half the token's life, the hello still waiting
    cc.afterTurn();
    expect(out.at(-1)?.o).toEqual({ t: 'frame', frame: { t: 'auth-expiring', inMs: 500 } });
    cc.frame('c', { t: 'reauth', token: 'fresh' });
    expect(out.at(-1)?.o).toEqual({ t: 'verify', token: 'fresh' });
    cc.verified('c', { ok: true, user: alice, validForMs: 60_000 });
    expect(out.at(-1)?.o).toMatchObject({ t: 'frame', frame: { t: 'authed', user: 'alice' } });
    caughtUp = true;
    cc.afterTurn();
    expect(out.at(-1)?.o).toMatchObject({ t: 'frame', frame: { t: 'welcome' } });
    expect(out.some((x) => x.o.t === 'violation')).toBe(false);
  });
});
