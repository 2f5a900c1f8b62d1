import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevIdentity } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePage, type ServedPage } from '../src/shared/page-server.js';

/**
 * The examples' page server with the dev sign-in mounted (what a page's "sign in as" fetches,
 * same origin) and without it, asked from outside over HTTP: good and bad requests alike.
 */
let dir: string;
let withSignIn: ServedPage;
let without: ServedPage;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'creek-page-server-'));
  const entry = join(dir, 'page.ts');
  writeFileSync(entry, 'document.title = "page";\n');
  const identity = await DevIdentity.open(dir);
  const page = { title: 'test', entry, config: {} };
  withSignIn = await servePage({ ...page, signIn: identity, users: ['alice', 'admin'] });
  without = await servePage(page);
});

afterAll(async () => {
  await withSignIn?.close();
  await without?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (served: ServedPage, path: string, init?: RequestInit): Promise<Response> =>
  fetch(new URL(path, served.url), init);

/** The claims of a JWT (its payload, unverified: the replicas verify it). */
function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<
    string,
    unknown
  >;
}

describe('the page server with the dev sign-in', () => {
  it("lists the picker's users and signs one in with a token of that user", async () => {
    expect(await (await get(withSignIn, '/dev/users')).json()).toEqual({
      users: ['alice', 'admin'],
    });
    const res = await get(withSignIn, '/dev/sign-in?user=alice');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { user: string; token: string; expiresAt: number };
    expect(body.user).toBe('alice');
    expect(body.expiresAt).toBeGreaterThan(Date.now());
    expect(claims(body.token)).toMatchObject({ sub: 'alice' });
    expect(claims(body.token).role).toBeUndefined();
    const admin = (await (await get(withSignIn, '/dev/sign-in?user=admin')).json()) as {
      token: string;
    };
    expect(claims(admin.token)).toMatchObject({ sub: 'admin', role: 'admin' });
    // The page itself is still served.
    expect((await get(withSignIn, '/')).status).toBe(200);
    expect((await get(withSignIn, '/page.js')).status).toBe(200);
  });

  it.each([
    ['/dev/sign-in', 400, /give the dev user/],
    ['/dev/sign-in?user=', 400, /user must be 1 to 64 characters/],
    ['/dev/sign-in?user=a%2Fb', 400, /user must be/],
    [`/dev/sign-in?user=${'x'.repeat(65)}`, 400, /user must be/],
    ['/dev/sign-in?user=alice&user=bob', 400, /give one user/],
  ])('refuses %s with %i and why', async (path, status, why) => {
    const res = await get(withSignIn, path);
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: string }).error).toMatch(why);
  });

  it('refuses another method on its paths, and on the page', async () => {
    const res = await get(withSignIn, '/dev/sign-in?user=alice', { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect((await get(withSignIn, '/', { method: 'POST' })).status).toBe(405);
  });
});

describe('the page server without it', () => {
  it('signs nobody in: its paths are not found', async () => {
    expect((await get(without, '/dev/sign-in?user=alice')).status).toBe(404);
    expect((await get(without, '/dev/users')).status).toBe(404);
  });
});
