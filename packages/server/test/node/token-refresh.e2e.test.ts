import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, SignedOut, TokenExpired, type CreekClient } from '@creek/client';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { AuthClient } from './auth-client.js';

/**
 * Users' tokens that expire every few seconds, against real replicas that verify them with an
 * HS256 secret (`creek start --auth-secret-file`, a clock skew of 1 s): the SDK refreshes them
 * while its ops stream, and the replicas refuse every malformed or misplaced refresh a client can
 * send, with a clear error and nothing crashed.
 */
const APP = fileURLToPath(new URL('./fixtures/user-counter-app.mjs', import.meta.url));
/** How long each token lasts: every client sees several expire while its ops stream. */
const TOKEN_LIFE_S = 3;
/** How many of each client's tokens must have expired while its ops ran. */
const EXPIRIES = 3;

let dir: string;
let secret: Uint8Array;
let cluster: LocalCluster;

/** An HS256 token of `sub`, as the app's own sign-in would issue, expiring in `lifeS` seconds. */
async function mint(sub: string, lifeS = 600): Promise<{ token: string; exp: number }> {
  const exp = Math.floor(Date.now() / 1000) + lifeS;
  const token = await new SignJWT({ sub })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(secret);
  return { token, exp };
}

const open = async (sub?: string): Promise<AuthClient> =>
  AuthClient.open(cluster.url(0), {
    token: cluster.token,
    ...(sub === undefined ? {} : { auth: (await mint(sub)).token }),
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'creek-token-refresh-'));
  const hex = randomBytes(32).toString('hex');
  secret = new TextEncoder().encode(hex);
  writeFileSync(join(dir, 'users.secret'), hex);
  cluster = await LocalCluster.start(
    { replicas: 3, app: APP, auth: { secretFile: join(dir, 'users.secret'), clockSkewS: 1 } },
    60_000,
  );
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('token refresh under load', () => {
  it("three users' streams of weak and strong ops outlive their tokens: no op fails, none is applied twice", async () => {
    const users = ['dora', 'emil', 'fay'];
    /** Per user: the tokens its auth function minted (their exp, in s), and the ops it invoked. */
    const minted: number[][] = users.map(() => []);
    const invoked = users.map(() => 0);
    /** Per user: the connections its client opened (each hello takes a token too). */
    const connections = users.map(() => 0);
    const clients: CreekClient[] = users.map((sub, u) =>
      connect({
        // Each on another replica first.
        urls: [...cluster.urls.slice(u), ...cluster.urls.slice(0, u)],
        token: cluster.token,
        WebSocket: class extends WebSocket {
          constructor(url: string) {
            super(url);
            connections[u]!++;
          }
        },
        auth: async () => {
          const { token, exp } = await mint(sub, TOKEN_LIFE_S);
          minted[u]!.push(exp);
          return token;
        },
      }),
    );
    const expired = (u: number): number =>
      minted[u]!.filter((exp) => exp * 1000 < Date.now()).length;
    // Until enough tokens expired and at least one was refreshed on an open connection (more
    // tokens than hellos): on a loaded machine a connection can drop near an expiry, and its
    // next token then comes with a hello, so one run of EXPIRIES tokens need not show it.
    const done = (): boolean =>
      users.every((_, u) => expired(u) >= EXPIRIES && minted[u]!.length > connections[u]!);
    const deadline = Date.now() + 45_000;
    try {
      // Each user keeps a weak and a strong op in flight until enough of its tokens expired.
      await Promise.all(
        clients.map(async (c, u) => {
          while (!done()) {
            if (Date.now() > deadline)
              throw new Error(
                `in 45 s ${expired(u)} of ${users[u]}'s tokens expired; ${minted[u]!.length} minted for ${connections[u]!} connections`,
              );
            invoked[u]! += 2;
            // Rejects, and fails the test, if either op fails.
            await Promise.all([c.invokeWeak('count.add', {}), c.invokeStrong('count.add', {})]);
          }
        }),
      );
      for (let u = 0; u < users.length; u++) {
        // Each op applied once: the counter reaches the number invoked (weak ops commit a little
        // later, so wait for it) and never passes it.
        let value = 0;
        for (let t = 0; t < 200; t++) {
          value = (await clients[u]!.invokeStrong('count.get', {})) as number;
          if (value >= invoked[u]!) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(value, users[u]).toBe(invoked[u]);
        expect(await clients[u]!.invokeWeak('whoami', {})).toBe(users[u]);
        // A token for each that expired, and the current one; and refreshed on the connection,
        // not only taken at reconnections: more tokens than hellos.
        expect(minted[u]!.length, users[u]).toBeGreaterThan(expired(u));
        expect(minted[u]!.length, users[u]).toBeGreaterThan(connections[u]!);
        expect(clients[u]!.identity()).toMatchObject({
          state: 'signed-in',
          user: { id: users[u] },
        });
      }
    } finally {
      for (const c of clients) c.close();
    }
  }, 90_000);
});

describe('the SDK when a token cannot be refreshed, and when the user changes', () => {
  /** Resolves once `ok()` holds; fails after 30 s. */
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
    if (!ok()) throw new Error(`waited 30 s for ${what}`);
  };

  it('a token string that expires: the client says so (TokenExpired), and setAuth signs the user in again', async () => {
    const c = connect({
      urls: [cluster.url(2)],
      token: cluster.token,
      auth: (await mint('gus', TOKEN_LIFE_S)).token,
    });
    try {
      expect(await c.invokeStrong('count.add', {})).toBe(1);
      expect(c.identity()).toMatchObject({ state: 'signed-in', user: { id: 'gus' } });
      // The replica closes the connection once the token expired; the client cannot refresh a
      // string, and the replica refuses it at the next hello: the session ends.
      await until('the expiry', () => c.identity().error?.code === 'token-expired');
      await until('the refusal', () => c.identity().error?.message.includes('expired at') === true);
      expect(c.identity()).toMatchObject({ state: 'expired', user: { id: 'gus' } });
      const refused = await c.invokeStrong('count.add', {}).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(TokenExpired);
      expect((refused as TokenExpired).mayHaveTakenEffect).toBe(false);
      c.setAuth((await mint('gus')).token);
      // A new session of the same user: the refused op was never applied.
      expect(await c.invokeStrong('count.add', {})).toBe(2);
      expect(c.identity()).toMatchObject({ state: 'signed-in', session: 2 });
    } finally {
      c.close();
    }
  }, 60_000);

  it("setAuth to another user: the previous user's op in flight fails with SignedOut, and the next ops run as the new user", async () => {
    const c = connect({
      urls: [cluster.url(1)],
      token: cluster.token,
      auth: (await mint('hana')).token,
    });
    try {
      expect(await c.invokeStrong('count.add', {})).toBe(1);
      const inFlight = c.invokeStrong('count.add', {});
      c.setAuth(async () => (await mint('ivan')).token);
      const e = await inFlight.then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(SignedOut);
      expect(await c.invokeStrong('count.add', {})).toBe(1); // ivan's own counter
      expect(await c.invokeWeak('whoami', {})).toBe('ivan');
      expect(c.identity()).toMatchObject({ state: 'signed-in', user: { id: 'ivan' } });
      c.setAuth(null);
      expect(await c.invokeWeak('whoami', {})).toBeNull();
      expect(c.identity()).toMatchObject({ state: 'signed-out', user: null });
      // hana's op was sent before the switch: applied once as hana, or not at all; never as ivan.
      c.setAuth((await mint('hana')).token);
      expect([1, 2]).toContain(await c.invokeStrong('count.get', {}));
    } finally {
      c.close();
    }
  }, 60_000);
});

describe('refreshes a client sends wrong: each gets a clear error, and nothing crashes', () => {
  it('a malformed reauth frame is refused as a bad frame, and the connection goes on', async () => {
    const alice = await open('alice');
    for (const frame of [
      { t: 'reauth' },
      { t: 'reauth', token: 42 },
      { t: 'reauth', token: '' },
      { t: 'reauth', token: ['a.b.c'] },
    ]) {
      const before = alice.frames.length;
      alice.send(frame);
      await alice.waitFor(() => alice.frames.slice(before).some((f) => f.t === 'error'));
      expect(alice.frames.slice(before).find((f) => f.t === 'error')).toMatchObject({
        code: 'bad-frame',
        message: expect.stringMatching(/token/),
      });
    }
    expect(await alice.value('whoami', {}, { level: 'weak' })).toBe('alice');
    alice.close();
  });

  it('an oversized token is refused, as a token (over the bound) or as a frame (far over)', async () => {
    const alice = await open('alice');
    const signed = (await mint('alice')).token;
    alice.send({ t: 'reauth', token: `${signed}${'x'.repeat(9_000)}` });
    await alice.waitFor(() => alice.frames.some((f) => f.t === 'auth-refused'));
    expect(alice.frames.find((f) => f.t === 'auth-refused')).toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/more than the 8192 a replica reads/),
    });
    alice.send({ t: 'reauth', token: 'x'.repeat(20_000) });
    await alice.waitFor(() => alice.frames.some((f) => f.t === 'error'));
    expect(alice.frames.find((f) => f.t === 'error')).toMatchObject({ code: 'bad-frame' });
    expect(await alice.value('whoami', {}, { level: 'weak' })).toBe('alice');
    alice.close();
  });

  it("another user's token is refused: the connection stays its user's, never switched silently", async () => {
    const alice = await open('alice');
    alice.send({ t: 'reauth', token: (await mint('mallory')).token });
    await alice.waitFor(() => alice.frames.some((f) => f.t === 'auth-refused'));
    expect(alice.frames.find((f) => f.t === 'auth-refused')).toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(
        /fresh token is for user 'mallory', this connection's for 'alice'.*new connection/,
      ),
    });
    expect(alice.frames.some((f) => f.t === 'authed')).toBe(false);
    expect(await alice.value('whoami', {}, { level: 'weak' })).toBe('alice');
    expect(await alice.value('count.add', {})).toBeGreaterThan(0);
    alice.close();
  });

  it('a garbage, a forged or an expired fresh token is refused, and the previous one stays', async () => {
    const alice = await open('alice');
    const good = (await mint('alice')).token;
    const forged = `${good.slice(0, good.lastIndexOf('.'))}.${'A'.repeat(43)}`;
    const expired = (await mint('alice', -60)).token;
    for (const [token, why] of [
      ['not.a.token', /not a signed JSON Web Token/],
      [forged, /signature does not verify/],
      [expired, /expired at/],
    ] as const) {
      const before = alice.frames.length;
      alice.send({ t: 'reauth', token });
      await alice.waitFor(() => alice.frames.slice(before).some((f) => f.t === 'auth-refused'));
      const refused = alice.frames.slice(before).find((f) => f.t === 'auth-refused');
      expect(refused).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(why) });
    }
    expect(await alice.value('whoami', {}, { level: 'weak' })).toBe('alice');
    alice.close();
  });

  it('a reauth before hello, and one on an anonymous connection, are refused', async () => {
    const early = await AuthClient.connect(cluster.url(1));
    early.send({ t: 'reauth', token: (await mint('alice')).token });
    await early.waitFor(() => early.frames.some((f) => f.t === 'error') || early.isClosed);
    expect(early.frames.find((f) => f.t === 'error')).toMatchObject({
      code: 'out-of-order',
      message: expect.stringMatching(
        /send hello and wait for welcome before sending a fresh token/,
      ),
    });
    early.close();
    const anon = await open();
    anon.send({ t: 'reauth', token: (await mint('alice')).token });
    await anon.waitFor(() => anon.frames.some((f) => f.t === 'auth-refused'));
    expect(anon.frames.find((f) => f.t === 'auth-refused')).toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/this connection is anonymous.*sign in on a new connection/),
    });
    expect(await anon.value('whoami', {}, { level: 'weak' })).toBeNull();
    anon.close();
  });

  it('nothing crashed: every replica still serves its users', async () => {
    for (let i = 0; i < cluster.size; i++) {
      expect(cluster.isRunning(i)).toBe(true);
      const c = await AuthClient.open(cluster.url(i), {
        token: cluster.token,
        auth: (await mint('carol')).token,
      });
      expect(await c.value('whoami', {}, { level: 'weak' })).toBe('carol');
      c.close();
    }
  });
});
