import { defineApp } from '@creek/app';
import { PROTOCOL_VERSION } from '@creek/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type CreekClient } from '../src/client.js';
import type { Identity } from '../src/creek-binding.js';
import { SignedOut } from '../src/errors.js';
import { connectInMemory } from '../src/memory/index.js';
import { scriptedSockets } from './scripted-sockets.js';
import { failure } from './support.js';

/**
 * The signed-in user through `connect({ auth })` and `client.setAuth`, with the replica played
 * by the test through scripted sockets: tokens are asked of the app's function, refreshed before
 * they expire on the client's own timer, and a new user's session never inherits the previous
 * user's ops, live queries or cached results. Every wait is for an event, with a deadline.
 */
const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
/** An unsigned JWT the client only reads (the replicas verify; here the test is the replica). */
const jwt = (sub: string, lifeMs = 600_000): string =>
  `${b64({ alg: 'HS256' })}.${b64({ sub, exp: (Date.now() + lifeMs) / 1000 })}.c2ln`;

const made: CreekClient[] = [];
afterEach(() => {
  for (const c of made.splice(0)) c.close();
});

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
}

function signedIn(auth: Parameters<typeof connect>[0]['auth']) {
  const scripted = scriptedSockets();
  const creek = connect({
    urls: ['ws://127.0.0.1:7100/client'],
    WebSocket: scripted.WebSocket,
    ...(auth === undefined ? {} : { auth }),
  });
  made.push(creek);
  const identities: Identity[] = [];
  creek.onIdentity((i) => identities.push(i));
  /** Opens socket `n`, waits for its hello and welcomes it as `user`; returns it and the hello. */
  const welcome = async (n: number, user: string | null, readOnly: string[] = []) => {
    const s = await scripted.socket(n);
    s.open();
    await until('the hello', () => s.sent.some((f) => f.t === 'hello'));
    s.receive({
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: 0,
      levels: ['weak', 'strong'],
      ops: [],
      readOnly,
      auth: { user, expiresInMs: 600_000 },
    });
    return { s, hello: s.sent.find((f) => f.t === 'hello')! };
  };
  return { creek, identities, welcome, ...scripted };
}

describe('connect({ auth }) with a function', () => {
  it('refreshes a short-lived token before it expires, on the same connection, without the replica asking', async () => {
    let calls = 0;
    const c = signedIn(() => {
      calls++;
      return jwt('alice', 1_200);
    });
    const { s, hello } = await c.welcome(0, 'alice');
    expect(hello).toMatchObject({ auth: expect.any(String) });
    await until('the identity', () => c.creek.identity().state === 'signed-in');
    expect(c.creek.identity().user).toMatchObject({ id: 'alice', claims: { sub: 'alice' } });
    await until('a refresh', () => s.sent.some((f) => f.t === 'reauth'));
    expect(calls).toBe(2);
    expect(c.sockets).toHaveLength(1);
  });

  it('says when the function throws, and asks it again at the next connection', async () => {
    let fail = true;
    const c = signedIn(() => {
      if (fail) throw new Error('the identity provider is down');
      return jwt('alice');
    });
    const s = await c.socket(0);
    s.open();
    await until('the error', () => c.creek.identity().error !== null);
    expect(c.creek.identity()).toMatchObject({
      state: 'signing-in',
      error: { code: 'auth-failed' },
    });
    expect(c.creek.identity().error!.message).toMatch(/the identity provider is down/);
    expect(s.sent.filter((f) => f.t === 'hello')).toEqual([]);
    fail = false;
    await c.welcome(1, 'alice');
    await until('signed in', () => c.creek.identity().state === 'signed-in');
    expect(c.creek.identity().error).toBeNull();
  });
});

describe('client.setAuth', () => {
  it('refuses what is not a token, a function or null', () => {
    const c = signedIn(undefined);
    for (const bad of ['', 42, {}, undefined])
      expect(() => c.creek.setAuth(bad as never)).toThrow(/setAuth must be the user's token/);
    const m = connectInMemory({ app: defineApp({}) });
    expect(() => m.client.setAuth('x')).toThrow(/the in-memory one has none/);
    expect(m.client.identity()).toMatchObject({ state: 'signed-out', user: null });
    m.cluster.close();
  });

  it("signing out ends alice's session: her op fails with SignedOut, and the next session is anonymous", async () => {
    const c = signedIn(jwt('alice'));
    await c.welcome(0, 'alice');
    const op = c.creek.invokeStrong('kv.put', { key: 'k', value: 1 });
    const live = c.creek.watch('kv.get', { key: 'k' });
    const s0 = await c.socket(0);
    await until('the invoke', () => s0.invokes().length === 1);
    c.creek.setAuth(null);
    const e = await failure(op, 5_000);
    expect(e).toBeInstanceOf(SignedOut);
    expect(e.mayHaveTakenEffect).toBe(true);
    expect(live.error).toBeInstanceOf(SignedOut);
    const { hello } = await c.welcome(1, null);
    expect(hello).not.toHaveProperty('auth');
    expect(hello.session).not.toBe(s0.sent[0]!.session);
    expect(c.creek.identity()).toMatchObject({ state: 'signed-out', session: 2 });
    expect(c.identities.map((i) => i.state)).toEqual(['signed-in', 'signed-out']);
  });

  it('shows the next user nothing the previous one read (no cached view)', async () => {
    const c = signedIn(jwt('alice'));
    const { s } = await c.welcome(0, 'alice', ['todos.list']);
    const first = c.creek.invoke('todos.list', {}, { levels: ['cached', 'weak'] });
    await until('the invoke', () => s.invokes().length === 1);
    s.receive({
      t: 'view',
      opId: String(s.invokes()[0]!.opId),
      level: 'tentative',
      outcome: { ok: true, value: ['alice’s todo'] },
    });
    await first;
    const read = () => c.creek.invoke('todos.list', {}, { levels: ['cached', 'weak'] });
    // Alice's next read shows her result at once (level cached)…
    expect(read().latest()).toMatchObject({ level: 'cached', value: ['alice’s todo'] });
    c.creek.setAuth(jwt('bob'));
    await c.welcome(1, 'bob', ['todos.list']);
    // …and bob's shows nothing until his own replica's answer.
    expect(read().latest()).toBeUndefined();
    expect(c.creek.identity()).toMatchObject({ state: 'signed-in', user: { id: 'bob' } });
  });

  it('a new token string of the same user refreshes the session in place', async () => {
    const c = signedIn(jwt('alice'));
    const { s } = await c.welcome(0, 'alice');
    await until('signed in', () => c.creek.identity().state === 'signed-in');
    const fresh = jwt('alice', 900_000);
    c.creek.setAuth(fresh);
    await until('the reauth', () => s.sent.some((f) => f.t === 'reauth'));
    expect(s.sent.find((f) => f.t === 'reauth')).toEqual({ t: 'reauth', token: fresh });
    expect(c.creek.identity().session).toBe(1);
    expect(c.sockets).toHaveLength(1);
  });

  it('does nothing once the client is closed', () => {
    const c = signedIn(jwt('alice'));
    c.creek.close();
    c.creek.setAuth(jwt('bob'));
    expect(c.creek.identity().session).toBe(1);
  });
});
