import { createServer, type Server } from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserTokenVerifier, type UserTokenSettings } from '../../src/node/user-tokens.js';

/**
 * The replica's verification of user tokens (jose underneath), token by token: every refusal says
 * what was wrong. Real replicas refusing them over the wire: auth.e2e.test.ts.
 */
const NOW = 1_800_000_000_000;
const SECRET = 'a-secret-of-at-least-32-characters-for-hs256!';
const hs = (): Uint8Array => new TextEncoder().encode(SECRET);

let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
let other: Awaited<ReturnType<typeof generateKeyPair>>;
let publicJwk: JWK;
let tmp: string;
let jwksFile: string;
const servers: Server[] = [];

beforeAll(async () => {
  rsa = await generateKeyPair('RS256');
  other = await generateKeyPair('RS256');
  publicJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-user-tokens-'));
  jwksFile = path.join(tmp, 'jwks.json');
  fs.writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwk] }));
});

afterAll(() => {
  for (const s of servers) s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A token with `claims`, signed by `sign` (a key, or the shared secret), at NOW. */
async function token(
  claims: Record<string, unknown> = {},
  opts: { key?: Parameters<SignJWT['sign']>[0]; alg?: string; kid?: string } = {},
): Promise<string> {
  const alg = opts.alg ?? 'HS256';
  const jwt = new SignJWT({
    sub: 'alice',
    role: 'admin',
    iat: NOW / 1000,
    iss: 'https://id.example',
    aud: 'creek-app',
    exp: NOW / 1000 + 600,
    ...claims,
  }).setProtectedHeader({ alg, ...(opts.kid === undefined ? {} : { kid: opts.kid }) });
  return jwt.sign(opts.key ?? hs());
}

const hsSettings: UserTokenSettings = {
  keys: { kind: 'secret', secret: SECRET },
  issuer: 'https://id.example',
  audience: 'creek-app',
  clockSkewS: 30,
};
const verify = (t: string, s: UserTokenSettings = hsSettings) =>
  new UserTokenVerifier(s).verify(t, NOW);

/** The message of a refusal (a verdict that is not ok). */
async function refusal(t: string | Promise<string>, s?: UserTokenSettings): Promise<string> {
  const v = await verify(await t, s);
  if (v.ok) throw new Error('the token was accepted');
  return `${v.code}: ${v.message}`;
}

describe('user tokens', () => {
  it('accepts a good token: its sub is the user, its claims come along, valid until exp + skew', async () => {
    const v = await verify(await token());
    expect(v).toMatchObject({ ok: true, user: { id: 'alice', claims: { role: 'admin' } } });
    expect(v.ok && v.validForMs).toBe((600 + 30) * 1000);
  });

  it('refuses a forged signature, another key, and garbage', async () => {
    const good = await token();
    const forged = `${good.slice(0, good.lastIndexOf('.'))}.${'A'.repeat(43)}`;
    expect(await refusal(forged)).toMatch(/unauthorized: .*signature does not verify/);
    const otherKey = token({}, { key: new TextEncoder().encode(`${SECRET}-other`) });
    expect(await refusal(otherKey)).toMatch(/signature does not verify/);
    expect(await refusal('garbage')).toMatch(/not a signed JSON Web Token/);
    expect(await refusal('a.b.c')).toMatch(/not a signed JSON Web Token/);
  });

  it('refuses alg none and algorithms the keys do not allow', async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none' })}.${b64({ sub: 'alice', exp: NOW / 1000 + 600, aud: 'creek-app', iss: 'https://id.example' })}.`;
    expect(await refusal(none)).toMatch(/algorithm this cluster does not accept/);
    expect(await refusal(token({}, { key: rsa.privateKey, alg: 'RS256' }))).toMatch(
      /algorithm this cluster does not accept \(HS256\)/,
    );
  });

  it('refuses the HS/RS confusion: HS256 signed with the key set’s public key', async () => {
    const settings: UserTokenSettings = {
      ...hsSettings,
      keys: { kind: 'jwks-file', file: jwksFile },
    };
    const pem = new TextEncoder().encode(JSON.stringify(publicJwk));
    expect(await refusal(token({}, { key: pem, kid: 'k1' }), settings)).toMatch(
      /algorithm this cluster does not accept \(RS256.*never HS\* or none/,
    );
    // And the key set's own tokens pass.
    const v = await verify(
      await token({}, { key: rsa.privateKey, alg: 'RS256', kid: 'k1' }),
      settings,
    );
    expect(v.ok).toBe(true);
    expect(
      await refusal(token({}, { key: other.privateKey, alg: 'RS256', kid: 'k1' }), settings),
    ).toMatch(/signature does not verify/);
    expect(
      await refusal(token({}, { key: other.privateKey, alg: 'RS256', kid: 'k9' }), settings),
    ).toMatch(/no key of this cluster's key set matches/);
  });

  it('refuses an expired token and one not valid yet, allowing the clock skew', async () => {
    expect(await refusal(token({ exp: NOW / 1000 - 31 }))).toMatch(
      /expired at .*30 s of clock skew/,
    );
    expect((await verify(await token({ exp: NOW / 1000 - 29 }))).ok).toBe(true);
    expect(await refusal(token({ nbf: NOW / 1000 + 31 }))).toMatch(/not valid before/);
    expect((await verify(await token({ nbf: NOW / 1000 + 29 }))).ok).toBe(true);
  });

  it('refuses another issuer, another audience (a token for another cluster), a missing sub or exp', async () => {
    expect(await refusal(token({ iss: 'https://evil.example' }))).toMatch(
      /issued by "https:\/\/evil/,
    );
    expect(await refusal(token({ aud: 'other-cluster' }))).toMatch(
      /meant for "other-cluster".*another cluster/,
    );
    expect(await refusal(token({ sub: undefined }))).toMatch(/no 'sub' claim/);
    const noExp = await new SignJWT({ sub: 'alice' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('https://id.example')
      .setAudience('creek-app')
      .sign(hs());
    expect(await refusal(noExp)).toMatch(/no 'exp' claim/);
    expect(await refusal(token({ sub: '' }))).toMatch(/sub/);
  });

  it('refuses a token over the size bound unread', async () => {
    expect(await refusal(token({ padding: 'x'.repeat(9000) }))).toMatch(/over 8192/);
  });

  it('says a JWKS URL that hangs or serves garbage makes it unavailable, not the token bad', async () => {
    const serve = async (handler: Parameters<typeof createServer>[1]) => {
      const server = createServer(handler);
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as { port: number };
      return new URL(`http://127.0.0.1:${port}/jwks.json`);
    };
    const hang = await serve(() => undefined);
    const garbage = await serve((_req, res) => res.end('<html>not a key set</html>'));
    const good = await serve((_req, res) => res.end(JSON.stringify({ keys: [publicJwk] })));
    const t = await token({}, { key: rsa.privateKey, alg: 'RS256', kid: 'k1' });
    const at = (url: URL): UserTokenSettings => ({
      ...hsSettings,
      keys: { kind: 'jwks-url', url },
      jwksTimeoutMs: 300,
    });
    expect(await refusal(t, at(hang))).toMatch(/^unavailable: .*did not answer within 0.3 s/);
    expect(await refusal(t, at(garbage))).toMatch(/^unavailable: .*could not be read/);
    expect((await verify(t, at(good))).ok).toBe(true);
  });

  it('refuses a JWKS file that is not a public key set', () => {
    const bad = (content: string) => {
      const f = path.join(tmp, `bad-${Math.random()}.json`);
      fs.writeFileSync(f, content);
      return () => new UserTokenVerifier({ ...hsSettings, keys: { kind: 'jwks-file', file: f } });
    };
    expect(bad('not json')).toThrow(/cannot read it as JSON/);
    expect(bad('{"keys": []}')).toThrow(/not a JSON Web Key Set/);
    expect(bad('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}')).toThrow(/symmetric key/);
  });
});
