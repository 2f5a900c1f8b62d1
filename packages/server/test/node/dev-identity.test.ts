import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevIdentity, devSignInHandler } from '../../src/node/dev-identity.js';
import { UserTokenVerifier, type UserTokenSettings } from '../../src/node/user-tokens.js';

/**
 * The dev identity provider: its tokens verify with the replica's own verifier, as a real
 * provider's do; its key is kept across restarts; its HTTP handler mints for a valid name only.
 * Replicas verifying them over the wire: dev-identity.e2e.test.ts.
 */
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'creek-dev-identity-'));
  dirs.push(d);
  return d;
};

/** The settings a replica started by a LocalCluster with `devIdentity` verifies with. */
const replicaSettings = (id: DevIdentity): UserTokenSettings => ({
  keys: { kind: 'jwks-file', file: id.jwksFile },
  issuer: id.issuer,
  audience: id.audience,
  clockSkewS: 0,
});

let identity: DevIdentity;
let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = tmp();
  identity = await DevIdentity.open(dir);
  const handle = devSignInHandler(identity);
  server = createServer((req, res) => {
    if (!handle(req, res)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('the next handler');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('DevIdentity', () => {
  it('mints tokens the replica verifies as the named user, with the issuer and audience', async () => {
    const before = Date.now();
    const { token, expiresAt } = await identity.mint('alice');
    const v = await new UserTokenVerifier(replicaSettings(identity)).verify(token);
    expect(v).toMatchObject({ ok: true, user: { id: 'alice' } });
    expect(v.ok && v.user.claims).not.toHaveProperty('role');
    expect(decodeProtectedHeader(token).alg).toBe('ES256');
    expect(decodeJwt(token)).toMatchObject({ iss: identity.issuer, aud: identity.audience });
    // An hour by default, in ms since the epoch (exp is whole seconds).
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3_600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
  });

  it('gives the admin user the admin role unless its claims say otherwise, and takes a ttl', async () => {
    const verifier = new UserTokenVerifier(replicaSettings(identity));
    const admin = await verifier.verify((await identity.mint('admin')).token);
    expect(admin.ok && admin.user.claims.role).toBe('admin');
    const demoted = await identity.mint('admin', { claims: { role: 'reader' } });
    expect(decodeJwt(demoted.token).role).toBe('reader');
    const bob = await identity.mint('bob', { claims: { role: 'admin', team: 'x' }, ttlS: 60 });
    expect(decodeJwt(bob.token)).toMatchObject({ sub: 'bob', role: 'admin', team: 'x' });
    expect(bob.expiresAt - Date.now()).toBeLessThanOrEqual(60_000);
    // Claims cannot rename the user or move the token to another issuer or audience.
    const sneaky = await identity.mint('bob', {
      claims: { sub: 'admin', iss: 'x', aud: 'y', exp: 9_999_999_999 },
    });
    expect(await verifier.verify(sneaky.token)).toMatchObject({ ok: true, user: { id: 'bob' } });
    expect(decodeJwt(sneaky.token).exp).toBeLessThan(Date.now() / 1000 + 3_601);
  });

  it('refuses a bad or oversized user name and a bad ttl', async () => {
    for (const bad of ['', 'a b', 'ali/ce', '<script>', 'é', 'x'.repeat(65)])
      await expect(identity.mint(bad)).rejects.toThrow(/must be 1 to 64 characters/);
    expect((await identity.mint('x'.repeat(64))).token).toBeTruthy();
    expect((await identity.mint('a.b_c-d@e')).token).toBeTruthy();
    for (const ttlS of [0, -1, 1.5, NaN, 86_401])
      await expect(identity.mint('alice', { ttlS })).rejects.toThrow(/from 1 to 86400/);
  });

  it('keeps its key across a reopen: earlier tokens still verify, and the files are 0600', async () => {
    const { token } = await identity.mint('alice');
    const again = await DevIdentity.open(dir);
    expect(again.jwksFile).toBe(identity.jwksFile);
    expect(await new UserTokenVerifier(replicaSettings(again)).verify(token)).toMatchObject({
      ok: true,
    });
    for (const f of ['signing-key.jwk.json', 'jwks.json'])
      expect(statSync(join(dir, 'dev-identity', f)).mode & 0o777, f).toBe(0o600);
    expect(statSync(join(dir, 'dev-identity')).mode & 0o777).toBe(0o700);
    // The public set holds no private part.
    const jwks = JSON.parse(readFileSync(again.jwksFile, 'utf8')) as { keys: object[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it("does not take another directory's tokens", async () => {
    const other = await DevIdentity.open(tmp());
    const { token } = await other.mint('alice');
    const v = await new UserTokenVerifier(replicaSettings(identity)).verify(token);
    expect(v.ok).toBe(false);
  });

  it('two opens racing on a new directory end up with one key', async () => {
    const d = tmp();
    const [a, b] = await Promise.all([DevIdentity.open(d), DevIdentity.open(d)]);
    const { token } = await a.mint('alice');
    expect((await new UserTokenVerifier(replicaSettings(b)).verify(token)).ok).toBe(true);
  });

  it('refuses a key file that is not its key, naming it, and closes a loose one', async () => {
    const d = tmp();
    await DevIdentity.open(d);
    const keyFile = join(d, 'dev-identity', 'signing-key.jwk.json');
    const good = readFileSync(keyFile, 'utf8');
    writeFileSync(keyFile, good, { mode: 0o644 });
    await DevIdentity.open(d);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    writeFileSync(keyFile, '{"kty":"oct","k":"abc"}');
    await expect(DevIdentity.open(d)).rejects.toThrow(/signing-key\.jwk\.json: not the dev/);
    writeFileSync(keyFile, 'garbage');
    await expect(DevIdentity.open(d)).rejects.toThrow(/cannot read the dev identity's key/);
  });
});

describe('devSignInHandler', () => {
  const get = async (path: string, method = 'GET') => {
    const r = await fetch(`${base}${path}`, { method });
    return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
  };

  it('lists the dev users and mints a token for a valid name', async () => {
    expect(JSON.parse((await get('/dev/users')).body)).toEqual({
      users: ['alice', 'bob', 'admin'],
    });
    const r = await get('/dev/sign-in?user=alice');
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json');
    const body = JSON.parse(r.body) as { user: string; token: string; expiresAt: number };
    expect(body).toMatchObject({ user: 'alice' });
    expect(body.expiresAt).toBeGreaterThan(Date.now());
    const v = await new UserTokenVerifier(replicaSettings(identity)).verify(body.token);
    expect(v).toMatchObject({ ok: true, user: { id: 'alice' } });
    const admin = JSON.parse((await get('/dev/sign-in?user=admin')).body) as { token: string };
    expect(decodeJwt(admin.token).role).toBe('admin');
  });

  it.each([
    ['no user', '/dev/sign-in', /give the dev user/],
    ['an empty user', '/dev/sign-in?user=', /1 to 64 characters/],
    ['an oversized user', `/dev/sign-in?user=${'a'.repeat(65)}`, /1 to 64 characters/],
    ['a user with a slash', '/dev/sign-in?user=a%2Fb', /1 to 64 characters/],
    ['two users', '/dev/sign-in?user=alice&user=bob', /one user/],
    ['a garbage query', '/dev/sign-in?%zz=%%&user', /1 to 64 characters/],
  ])('answers 400 with why for %s', async (_, path, why) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect((JSON.parse(r.body) as { error: string }).error).toMatch(why);
  });

  it('answers 405 to another method, and leaves every other path to the next handler', async () => {
    expect((await get('/dev/sign-in?user=alice', 'POST')).status).toBe(405);
    for (const path of ['/', '/dev', '/dev/sign-in/x', '/dev/users/', '/DEV/USERS', '/other'])
      expect(await get(path), path).toMatchObject({ status: 404, body: 'the next handler' });
  });

  it('takes its own list of users, and refuses a bad one at once', () => {
    expect(() => devSignInHandler(identity, { users: ['ok', 'not ok'] })).toThrow(/"not ok"/);
  });
});
