import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, Forbidden } from '@creek/client';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { AuthClient } from './auth-client.js';

/**
 * End users against real replicas: tokens from an identity provider (here jose, in the test,
 * with the provider's key pair and a JWKS file the replicas read), and everything an end user
 * might try to get past them. Each attempt must get a clear error, apply nothing and crash
 * nothing; the replicas keep serving the users whose tokens are good.
 */
const APP = fileURLToPath(new URL('./fixtures/todo-auth-app.mjs', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const ISSUER = 'https://id.creek.test/';
const AUDIENCE = 'creek-todos';

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let provider: KeyPair;
let otherProvider: KeyPair;
let publicJwk: JWK;
let dir: string;
let cluster: LocalCluster;

/** A token as the identity provider issues it (claims override the defaults), valid for 10 min. */
async function mint(
  claims: Record<string, unknown> = {},
  o: { key?: Parameters<SignJWT['sign']>[0]; alg?: string; kid?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    sub: 'alice',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now,
    exp: now + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'provider-1' })
    .sign(o.key ?? provider.privateKey);
}

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');

/** Opens a connection to replica `i` as the holder of `auth` (none: anonymous). */
const open = (i: number, auth?: string, session?: string): Promise<AuthClient> =>
  AuthClient.open(cluster.url(i), {
    token: cluster.token,
    ...(auth === undefined ? {} : { auth }),
    ...(session === undefined ? {} : { session }),
  });

beforeAll(async () => {
  provider = await generateKeyPair('RS256');
  otherProvider = await generateKeyPair('RS256');
  publicJwk = {
    ...(await exportJWK(provider.publicKey)),
    kid: 'provider-1',
    alg: 'RS256',
    use: 'sig',
  };
  dir = mkdtempSync(join(tmpdir(), 'creek-auth-'));
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [publicJwk] }));
  cluster = await LocalCluster.start(
    {
      replicas: 3,
      app: APP,
      auth: { jwks: join(dir, 'jwks.json'), issuer: ISSUER, audience: AUDIENCE, clockSkewS: 0 },
    },
    60_000,
  );
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('signed-in users at real replicas', () => {
  it('runs each op as its caller on every replica, and anonymous callers as nobody', async () => {
    const alice = await open(0, await mint({ role: 'member' }));
    expect(alice.welcome?.auth).toMatchObject({ user: 'alice' });
    expect(await alice.value('whoami', {}, { level: 'weak' })).toEqual({
      id: 'alice',
      role: 'member',
    });
    expect(await alice.value('stamp', { key: 'first' })).toBe('alice');
    // Every replica executed it as alice: each one's own state says so.
    for (let i = 0; i < cluster.size; i++) {
      const anon = await open(i);
      let seen: unknown = null;
      for (let t = 0; t < 200 && seen === null; t++) {
        seen = await anon.value('stamp.get', { key: 'first' }, { level: 'weak' });
        if (seen === null) await new Promise((r) => setTimeout(r, 50));
      }
      expect(seen, `replica ${i}`).toBe('alice');
      anon.close();
    }
    const anon = await open(1);
    expect(anon.welcome?.auth).toEqual({ user: null });
    expect(await anon.value('whoami', {}, { level: 'weak' })).toBeNull();
    expect(await anon.value('stamp', { key: 'anon' })).toBe('anonymous');
    expect(await anon.value('todos.add', { text: 'x' })).toMatch(
      /^error: unauthorized: 'todos.add' needs a signed-in user.*not applied/,
    );
    alice.close();
    anon.close();
  });
});

describe('tokens an attacker presents: each hello refused, with why', () => {
  it.each<[string, () => Promise<string>, RegExp]>([
    [
      'a forged signature',
      async () => {
        const t = await mint();
        return `${t.slice(0, t.lastIndexOf('.'))}.${b64({ forged: true })}`;
      },
      /signature does not verify/,
    ],
    [
      'a token signed with another key',
      () => mint({}, { key: otherProvider.privateKey }),
      /signature does not verify/,
    ],
    [
      'alg none',
      async () =>
        `${b64({ alg: 'none', kid: 'provider-1' })}.${b64({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 })}.`,
      /algorithm this cluster does not accept/,
    ],
    [
      "HS/RS confusion (HS256 keyed with the key set's public key)",
      () => mint({}, { alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(publicJwk)) }),
      /algorithm this cluster does not accept .*never HS\* or none/,
    ],
    [
      'an expired token',
      () => mint({ exp: Math.floor(Date.now() / 1000) - 60 }),
      /expired at .*get a fresh one/,
    ],
    [
      'a token not valid yet',
      () => mint({ nbf: Math.floor(Date.now() / 1000) + 3600 }),
      /not valid before/,
    ],
    ['a wrong issuer', () => mint({ iss: 'https://evil.test/' }), /issued by "https:\/\/evil/],
    ['a wrong audience', () => mint({ aud: 'another-app' }), /meant for "another-app"/],
    ['a token without sub', () => mint({ sub: undefined }), /no 'sub' claim/],
    [
      'an oversized token',
      () => mint({ padding: 'x'.repeat(9000) }),
      /more than the 8192 a replica reads/,
    ],
    ['garbage', async () => 'not.a.token', /not a signed JSON Web Token/],
    [
      "another cluster's token (its provider's key and audience)",
      () => mint({ aud: 'creek-other' }, { key: otherProvider.privateKey, kid: 'other-1' }),
      /no key of this cluster's key set matches/,
    ],
  ])('%s', async (_, token, why) => {
    const c = await open(0, await token());
    expect(c.welcome).toBeNull();
    expect(c.refusal).toMatchObject({ code: 'unauthorized' });
    expect(c.refusal!.message).toMatch(why);
    await c.closed;
  });
});

describe('what end users try once signed in: refused, and nothing applied', () => {
  let alice: AuthClient;
  let bob: AuthClient;
  beforeAll(async () => {
    alice = await open(0, await mint({ sub: 'alice', role: 'member' }));
    bob = await open(1, await mint({ sub: 'bob', role: 'member' }));
    for (const text of ['milk', 'eggs', 'bread']) await alice.value('todos.add', { text });
  });
  afterAll(() => {
    alice.close();
    bob.close();
  });

  it('a user calling an admin-only op gets forbidden, and the op never took effect', async () => {
    expect(await bob.value('admin.clear', { user: 'alice' })).toMatch(
      /^error: forbidden: 'admin.clear' is not allowed for user 'bob'.*not applied/,
    );
    expect(await alice.value('todos.list', {})).toHaveLength(3);
    const admin = await open(2, await mint({ sub: 'root', role: 'admin' }));
    expect(await admin.value('todos.of', { user: 'alice' })).toHaveLength(3);
    admin.close();
  });

  it("user B reads only B's todos through an op, and not A's through the admin's", async () => {
    expect(await bob.value('todos.list', {})).toEqual([]);
    expect(await bob.value('todos.of', { user: 'alice' })).toMatch(/^error: forbidden/);
  });

  it("user B's live query runs as B: A's todos neither through B's list nor the admin's", async () => {
    bob.send({ t: 'watch', watchId: 'w1', op: 'todos.of', args: { user: 'alice' } });
    bob.send({ t: 'watch', watchId: 'w2', op: 'todos.list', args: {} });
    await bob.waitFor(
      () =>
        bob.frames.some((f) => f.t === 'unwatched' && f.watchId === 'w1') &&
        bob.frames.some((f) => f.t === 'watched' && f.watchId === 'w2'),
    );
    expect(bob.frames.find((f) => f.t === 'unwatched')).toMatchObject({ code: 'forbidden' });
    const w2 = bob.frames.filter((f) => f.t === 'watched' && f.watchId === 'w2');
    for (const f of w2) expect(f).toMatchObject({ outcome: { ok: true, value: [] } });
  });

  it("user B naming A's session and A's op id gets neither A's result nor A's session", async () => {
    const session = `sess-${randomUUID()}`;
    const opId = `op-${randomUUID()}`;
    const a = await open(0, await mint({ sub: 'alice' }), session);
    expect(await a.value('todos.add', { text: 'secret' }, { opId, seq: 1 })).toBe(3);
    const b = await open(0, await mint({ sub: 'bob' }), session);
    // A's op id in A's session: a retry of A's op if the session were not A's alone.
    const answer = await b.value('todos.add', { text: 'mine' }, { opId, seq: 1 });
    expect(answer).toBe(0); // bob's own first todo, run as bob
    expect(await b.value('todos.list', {})).toEqual([{ text: 'mine', by: 'bob' }]);
    // A's exactly-once is untouched: A's retry is answered with A's result, not applied again.
    const again = await open(2, await mint({ sub: 'alice' }), session);
    expect(await again.value('todos.add', { text: 'secret' }, { opId, seq: 1 })).toBe(3);
    expect(await again.value('todos.list', {})).toHaveLength(4);
    for (const c of [a, b, again]) c.close();
  });

  it("the built-in kv.* ops are closed: B cannot read or overwrite A's keys through them", async () => {
    expect(await bob.value('kv.get', { key: 'todo/alice/000000' })).toMatch(
      /^error: forbidden: 'kv.get' is not open to end users/,
    );
    expect(await bob.value('kv.put', { key: 'todo/alice/000000', value: 'pwned' })).toMatch(
      /^error: forbidden/,
    );
    const anon = await open(2);
    expect(await anon.value('kv.get', { key: 'todo/alice/000000' })).toMatch(
      /^error: unauthorized/,
    );
    anon.close();
    expect((await alice.value('todos.list', {})) as unknown[]).toContainEqual({
      text: 'milk',
      by: 'alice',
    });
  });

  it('opens shared contexts to the members the app admits, and refuses malformed and oversized merges', async () => {
    // The app opens the creek.context.* built-ins to signed-in users (its kv.* stay closed), and
    // a context named private-<user> to that user alone.
    expect(await bob.value('creek.context.merge', { id: 'doc-1', seen: [[1, 1]] })).toBe(null);
    expect(await alice.value('creek.context.frontier', { id: 'doc-1' })).toEqual([[1, 1]]);
    expect(await alice.value('creek.context.merge', { id: 'private-alice', seen: [[1, 3]] })).toBe(
      null,
    );
    for (const [op, args] of [
      ['creek.context.merge', { id: 'private-alice', seen: [[1, 9]] }],
      ['creek.context.frontier', { id: 'private-alice' }],
    ] as const)
      expect(await bob.value(op, args)).toMatch(
        /^error: forbidden: .* not allowed for user 'bob' in context 'private-alice'/,
      );
    expect(await alice.value('creek.context.frontier', { id: 'private-alice' })).toEqual([[1, 3]]);
    const anon = await open(2);
    for (const [op, args] of [
      ['creek.context.frontier', { id: 'doc-1' }],
      ['creek.context.merge', { id: 'doc-1', seen: [[0, 9]] }],
    ] as const)
      expect(await anon.value(op, args)).toMatch(/^error: unauthorized: .*signed-in user/);
    anon.close();
    // Frontiers and ids past their bounds, or not frontiers at all: refused, nothing merged.
    const tooMany = Array.from({ length: 129 }, (_, i) => [i, 1]);
    for (const args of [
      { id: 'doc-1', seen: tooMany },
      { id: 'x'.repeat(129), seen: [[1, 2]] },
      { id: '', seen: [[1, 2]] },
      { id: 'doc-1', seen: [[1, -2]] },
      { id: 'doc-1', seen: [[1, 2.5]] },
      { id: 'doc-1', seen: [[1]] },
      { id: 'doc-1', seen: 'all' },
      { id: 'doc-1' },
    ])
      expect(
        await bob.value('creek.context.merge', args),
        JSON.stringify(args).slice(0, 80),
      ).toMatch(/^error: invalid-arguments/);
    // A merge that would take the frontier past its bound fails when it runs, and changes nothing.
    const near = Array.from({ length: 128 }, (_, i) => [i + 2, 1]);
    expect(await bob.value('creek.context.merge', { id: 'doc-1', seen: near })).toMatch(
      /^failed: .*would name more than 128 origins/,
    );
    // A frame over the protocol's size limit is refused before it is parsed.
    const raw = await open(1, await mint({ sub: 'bob' }));
    const huge = Array.from({ length: 150_000 }, (_, i) => [i, 1]);
    raw.send({
      t: 'invoke',
      opId: 'huge',
      op: 'creek.context.merge',
      args: { id: 'doc-1', seen: huge },
      level: 'strong',
    });
    await raw.waitFor(() => raw.frames.some((f) => f.t === 'error'));
    expect(raw.frames).toContainEqual(
      expect.objectContaining({
        t: 'error',
        code: 'bad-frame',
        message: expect.stringMatching(/exceeds the limit/),
      }),
    );
    raw.close();
    expect(await alice.value('creek.context.frontier', { id: 'doc-1' })).toEqual([[1, 1]]);
  });

  it('nothing crashed: every replica still serves', async () => {
    for (let i = 0; i < cluster.size; i++) {
      expect(cluster.isRunning(i)).toBe(true);
      const c = await open(i, await mint({ sub: 'carol' }));
      expect(await c.value('whoami', {}, { level: 'weak' })).toMatchObject({ id: 'carol' });
      c.close();
    }
  });
});

describe("a connection's token expires while it runs", () => {
  const soon = async (seconds: number, sub = 'alice') =>
    mint({ sub, exp: Math.floor(Date.now() / 1000) + seconds });

  it('is asked for a fresh token, keeps going with one, and is closed once one expired', async () => {
    // Long enough to be welcomed on a loaded machine; the replica asks at half of it.
    const kept = await open(0, await soon(8));
    const lapsed = await open(1, await soon(8));
    expect(kept.welcome?.auth?.expiresInMs).toBeLessThanOrEqual(8_000);
    await kept.waitFor(() => kept.frames.some((f) => f.t === 'auth-expiring'));
    kept.send({ t: 'reauth', token: await soon(600) });
    await kept.waitFor(() => kept.frames.some((f) => f.t === 'authed'));
    expect(kept.frames.find((f) => f.t === 'authed')).toMatchObject({ user: 'alice' });
    // Another user's token is no refresh: a session is one user's.
    kept.send({ t: 'reauth', token: await soon(600, 'bob') });
    await kept.waitFor(() => kept.frames.some((f) => f.t === 'auth-refused'));
    // The one that was not refreshed is told, then closed.
    await lapsed.waitFor(() => lapsed.frames.some((f) => f.t === 'auth-expired'));
    await lapsed.closed;
    // The refreshed one outlives its first token.
    expect(kept.isClosed).toBe(false);
    expect(await kept.value('whoami', {}, { level: 'weak' })).toMatchObject({ id: 'alice' });
    kept.close();
  });
});

describe('the SDK signs in with connect({ auth })', () => {
  it('joinContext: a member runs ops in its context; a user the app keeps out gets Forbidden', async () => {
    const as = (sub: string) =>
      connect({ urls: [cluster.url(0)], token: cluster.token, auth: () => mint({ sub }) });
    const [gail, hank] = [as('gail'), as('hank')];
    const own = gail.joinContext('private-gail');
    expect(await own.invokeWeak('whoami', {})).toMatchObject({ id: 'gail' });
    const refused = await hank
      .joinContext('private-gail')
      .invokeWeak('whoami', {})
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(Forbidden);
    expect(String(refused)).toMatch(/not allowed for user 'hank' in context 'private-gail'/);
    // Hank's own ops, and his contexts, go on.
    expect(await hank.joinContext('shared-board').invokeWeak('whoami', {})).toMatchObject({
      id: 'hank',
    });
    gail.close();
    hank.close();
  });

  it("keeps three users' streams of ops going while their tokens expire every few seconds: no op fails, none is applied twice", async () => {
    // Tokens valid for 3 s: the replica asks for a fresh one after 1.5 s, so over 9 s each client
    // refreshes about six times, with ops in flight each time.
    const users = ['dora', 'emil', 'fay'];
    let minted = 0;
    const clients = users.map((sub, i) =>
      connect({
        urls: cluster.urls.slice(i).concat(cluster.urls.slice(0, i)),
        token: cluster.token,
        auth: () => {
          minted++;
          return mint({ sub, exp: Math.floor(Date.now() / 1000) + 3 });
        },
      }),
    );
    const started = Date.now();
    const calls: PromiseLike<unknown>[][] = users.map(() => []);
    let n = 0;
    while (Date.now() - started < 9_000) {
      for (let u = 0; u < users.length; u++) {
        const text = `op-${n}`;
        calls[u]!.push(
          n % 3 === 0
            ? clients[u]!.invokeWeak('todos.add', { text })
            : clients[u]!.invokeStrong('todos.add', { text }),
        );
      }
      n++;
      await new Promise((r) => setTimeout(r, 60));
    }
    // No op failed.
    for (const list of calls) await Promise.all(list);
    for (let u = 0; u < users.length; u++) {
      const todos = (await clients[u]!.invokeStrong('todos.list', {})) as { text: string }[];
      // Each op applied exactly once, as its user.
      expect(todos.map((t) => t.text).sort()).toEqual(
        Array.from({ length: n }, (_, i) => `op-${i}`).sort(),
      );
      expect(new Set(todos.map((t) => (t as { by?: string }).by))).toEqual(new Set([users[u]]));
    }
    expect(minted).toBeGreaterThan(users.length * 3);
    for (const c of clients) c.close();
  });
});

describe('a JWKS URL that hangs or serves garbage', () => {
  let mode: 'garbage' | 'hang' | 'good' = 'garbage';
  let server: Server;
  let remote: LocalCluster;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      if (mode === 'hang') return; // never answers
      res.setHeader('content-type', 'application/json');
      res.end(mode === 'good' ? JSON.stringify({ keys: [publicJwk] }) : '{"keys": "nope"');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    remote = await LocalCluster.start(
      {
        replicas: 1,
        app: APP,
        auth: { jwks: `http://127.0.0.1:${port}/jwks.json`, audience: AUDIENCE },
        // Its ops run in a worker thread: the caller travels there too.
        workers: 1,
      },
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await remote?.stop();
    server.closeAllConnections();
    server.close();
  });

  const hello = async () =>
    AuthClient.open(remote.url(0), { token: remote.token, auth: await mint() });

  it('makes the replica unavailable to signed-in users, not the token wrong, and crashes nothing', async () => {
    mode = 'garbage';
    const g = await hello();
    expect(g.refusal).toMatchObject({ code: 'unavailable' });
    expect(g.refusal!.message).toMatch(
      /key set at http:\/\/127\.0\.0\.1:\d+\/jwks\.json could not be read/,
    );
    mode = 'hang';
    const h = await hello();
    expect(h.refusal).toMatchObject({ code: 'unavailable' });
    expect(h.refusal!.message).toMatch(/did not answer within 5 s/);
    // Anonymous clients are served all along, and once the keys come, users sign in.
    const anon = await AuthClient.open(remote.url(0), { token: remote.token });
    expect(await anon.value('whoami', {}, { level: 'weak' })).toBeNull();
    mode = 'good';
    const ok = await hello();
    expect(ok.welcome?.auth).toMatchObject({ user: 'alice' });
    expect(await ok.value('stamp', { key: 'in-a-worker' })).toBe('alice');
    for (const c of [g, h, anon, ok]) c.close();
  });
});

describe('auth settings given wrong: refused before a replica starts', () => {
  /** `creek start` with `args` and `env`, `@file` standing for a file that exists. */
  const start = (given: string[], givenEnv: Record<string, string> = {}) => {
    const file = join(dir, 'jwks.json');
    const args = given.map((a) => (a === '@file' ? file : a));
    const env = Object.fromEntries(
      Object.entries(givenEnv).map(([k, v]) => [k, v === '@file' ? file : v]),
    );
    const base = [
      BIN,
      'start',
      '--id',
      '0',
      '--listen',
      '127.0.0.1:1',
      '--peers',
      '0=ws://127.0.0.1:1',
      '--data',
      join(dir, 'never'),
      '--secret-file',
      join(dir, 'jwks.json'),
    ];
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
    );
    const r = spawnSync(process.execPath, [...base, ...args], {
      env: { ...clean, ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { status: r.status, stderr: r.stderr };
  };

  it.each<[string, string[], Record<string, string>, RegExp]>([
    [
      'a JWKS URL in the clear',
      ['--auth-jwks', 'http://id.example/jwks.json', '--auth-audience', 'a'],
      {},
      /--auth-jwks http:\/\/id\.example\/jwks\.json must be an https:\/\/ URL/,
    ],
    [
      'a JWKS file that does not exist',
      ['--auth-jwks', 'nope.json', '--auth-audience', 'a'],
      {},
      /must name an existing file or an https:\/\/ URL/,
    ],
    [
      'a JWKS without an audience',
      ['--auth-jwks', 'https://id.example/jwks.json'],
      {},
      /--auth-audience is required with --auth-jwks/,
    ],
    [
      'two kinds of key',
      ['--auth-jwks', 'https://id.example/jwks.json', '--auth-audience', 'a'],
      { CREEK_AUTH_SECRET_FILE: '@file' },
      /and --auth-jwks both given/,
    ],
    [
      'an audience with no keys',
      ['--auth-audience', 'a'],
      {},
      /needs --auth-jwks or --auth-secret-file/,
    ],
    [
      'a clock skew out of range',
      ['--auth-secret-file', '@file'],
      { CREEK_AUTH_CLOCK_SKEW: '3600' },
      /CREEK_AUTH_CLOCK_SKEW=3600 must be a whole number of seconds, 0-300/,
    ],
  ])('%s', (_, args, env, message) => {
    const r = start(args, env);
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(2);
  });

  it('a short HS256 secret and a key set holding a secret key are refused at start', () => {
    writeFileSync(join(dir, 'short.secret'), 'x'.repeat(20));
    const short = start(['--auth-secret-file', join(dir, 'short.secret')]);
    expect(short.stderr).toMatch(/fewer than 32/);
    expect(short.status).toBe(1);
    writeFileSync(join(dir, 'oct.json'), '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}');
    const oct = start(['--auth-jwks', join(dir, 'oct.json'), '--auth-audience', 'a']);
    expect(oct.stderr).toMatch(/symmetric key/);
    expect(oct.status).toBe(1);
  });
});
