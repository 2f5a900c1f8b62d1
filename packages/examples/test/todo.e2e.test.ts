import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect, Forbidden, OperationFailed, Unauthorized, type LiveQuery } from '@creek/client';
import { devSignInHandler, LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type app from '../src/todo/app.js';
import { serveTodoPage } from '../src/todo/serve.js';

/**
 * The todo example against real replicas that verify users' tokens (a dev identity provider):
 * two users' live queries each show only their own list, no op lets one user reach another's
 * todos, anonymous callers are refused, and the plain Node client and the page's server answer
 * what they should, bad input included.
 */
const APP = fileURLToPath(new URL('../src/todo/app.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('../src/todo/client.js', import.meta.url));

type TodoApp = typeof app;
type Todo = { id: string; text: string; done: boolean; at: number };

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start(
    { replicas: 3, app: APP, devIdentity: true, logLevel: 'error' },
    60_000,
  );
}, 90_000);

afterAll(async () => {
  await cluster?.stop(2_000);
});

/** A client signed in as dev user `user`, preferring replica `first`. */
function signIn(user: string, first = 0) {
  const urls = [...cluster.urls.slice(first), ...cluster.urls.slice(0, first)];
  return connect<TodoApp>({
    urls,
    token: cluster.token,
    auth: async () => (await cluster.identity!.mint(user)).token,
  });
}

/** Resolves once `check` holds, polling; fails with `what` after the deadline. */
async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every value a live query showed, in order. */
function record(query: LiveQuery<Todo[]>): Todo[][] {
  const seen: Todo[][] = [];
  query.subscribe({ onView: (v) => seen.push(v), onStable: (v) => seen.push(v) });
  return seen;
}

const texts = (todos: readonly Todo[] | undefined): string[] | undefined =>
  todos?.map((t) => t.text);

describe('two users on one cluster', () => {
  it("each live query shows only its own user's todos, and no op reaches another user's", async () => {
    const alice = signIn('alice', 0);
    const bob = signIn('bob', 1);
    try {
      const aliceList = alice.watch('todo.list', {});
      const bobList = bob.watch('todo.list', {});
      const aliceSaw = record(aliceList);
      const bobSaw = record(bobList);
      await alice.invokeWeak('todo.add', { id: 'a1', text: 'alice: milk' });
      await bob.invokeWeak('todo.add', { id: 'b1', text: 'bob: bread' });
      await alice.invokeWeak('todo.add', { id: 'a2', text: 'alice: post' });
      await until(
        () =>
          texts(aliceList.latestStable()?.value)?.join() === 'alice: milk,alice: post' &&
          texts(bobList.latestStable()?.value)?.join() === 'bob: bread',
        "both users' stable lists",
      );

      // Bob names alice's ids: his toggle finds no such todo in his list, his remove nothing.
      await expect(bob.invokeWeak('todo.toggle', { id: 'a1' })).rejects.toThrow(OperationFailed);
      expect(await bob.invokeStrong('todo.remove', { id: 'a1' })).toBe(false);
      // Bob adding a todo under alice's id makes one of his own.
      await bob.invokeStrong('todo.add', { id: 'a2', text: 'bob: same id' });
      expect(texts(await bob.invokeStrong('todo.list', {}))).toEqual([
        'bob: bread',
        'bob: same id',
      ]);
      expect(await alice.invokeStrong('todo.list', {})).toEqual([
        expect.objectContaining({ id: 'a1', text: 'alice: milk', done: false }),
        expect.objectContaining({ id: 'a2', text: 'alice: post', done: false }),
      ]);
      // Alice toggles and removes her own.
      expect(await alice.invokeStrong('todo.toggle', { id: 'a1' })).toMatchObject({ done: true });
      expect(await alice.invokeStrong('todo.remove', { id: 'a2' })).toBe(true);
      await until(
        () =>
          JSON.stringify(aliceList.latestStable()?.value?.map((t) => [t.id, t.done])) ===
          '[["a1",true]]',
        "alice's list after her toggle and remove",
      );

      // Nothing of one user ever showed in the other's query, at any level.
      expect(aliceSaw.length).toBeGreaterThan(0);
      expect(bobSaw.length).toBeGreaterThan(0);
      expect(aliceSaw.flat().filter((t) => !t.text.startsWith('alice:'))).toEqual([]);
      expect(bobSaw.flat().filter((t) => !t.text.startsWith('bob:'))).toEqual([]);
    } finally {
      alice.close();
      bob.close();
    }
  });

  it('refuses anonymous callers every op and the live query, and users the built-in ops', async () => {
    const anon = connect<TodoApp>({ urls: cluster.urls, token: cluster.token });
    const carol = signIn('carol', 2);
    try {
      await expect(anon.invokeWeak('todo.add', { id: 'x', text: 'x' })).rejects.toThrow(
        Unauthorized,
      );
      await expect(anon.invokeWeak('todo.toggle', { id: 'a1' })).rejects.toThrow(Unauthorized);
      await expect(anon.invokeWeak('todo.remove', { id: 'a1' })).rejects.toThrow(Unauthorized);
      await expect(anon.invokeStrong('todo.list', {})).rejects.toThrow(Unauthorized);
      const query = anon.watch('todo.list', {});
      const ended = new Promise<unknown>((resolve) => query.subscribe({ onError: resolve }));
      expect(await ended).toBeInstanceOf(Unauthorized);
      // The built-in kv.* ops would reach any key: closed to every end user.
      const kv = carol as unknown as ReturnType<typeof connect>;
      await expect(kv.invokeStrong('kv.get', { key: 'todo/alice/a1' })).rejects.toThrow(Forbidden);
    } finally {
      anon.close();
      carol.close();
    }
  });
});

/** Runs client.js on this cluster to its end, with `args` and `env` (TODO_USER_TOKEN empty unless given). */
function runClient(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [CLIENT, '--data', cluster.dir, '--urls', cluster.urls.join(','), ...args],
      { env: { ...process.env, TODO_USER_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const tokenOf = async (user: string): Promise<Record<string, string>> => ({
  TODO_USER_TOKEN: (await cluster.identity!.mint(user)).token,
});

describe('the plain Node client (client.js)', () => {
  it("adds as its user, and lists that user's todos only", async () => {
    const dave = await tokenOf('dave');
    const added = await runClient(['add', 'buy milk'], dave);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toBe(
      'tentative: added "buy milk"\nstable:    added "buy milk"\ntodos:\n  [ ] buy milk\n',
    );
    expect(await runClient(['list'], dave)).toMatchObject({
      code: 0,
      stdout: 'todos:\n  [ ] buy milk\n',
    });
    expect(await runClient(['list'], await tokenOf('erin'))).toMatchObject({
      code: 0,
      stdout: 'no todos\n',
    });
  });

  it('says what is wrong with a missing or refused token, a bad command or bad text', async () => {
    const noToken = await runClient(['list']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/no user token: set TODO_USER_TOKEN/);
    const forged = await runClient(['list'], { TODO_USER_TOKEN: 'not.a.token' });
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(/unauthorized|token/i);
    const dave = await tokenOf('dave');
    for (const args of [[], ['add'], ['remove', 'x'], ['list', 'extra'], ['--nope', 'list']]) {
      const r = await runClient(args, dave);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/usage:/);
    }
    const empty = await runClient(['add', '   '], dave);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/must not be empty/);
    const noData = await runClient(['--data', '/nonexistent', 'list'], dave);
    expect(noData.code).toBe(2);
    expect(noData.stderr).toMatch(/no client token in \/nonexistent/);
  });
});

describe("the page's server", () => {
  it('serves the page, the SDK bundle its import map names, its settings and dev sign-in; nothing else', async () => {
    const page = await serveTodoPage({
      urls: cluster.urls,
      token: cluster.token,
      signIn: devSignInHandler(cluster.identity!),
    });
    try {
      const get = (path: string, init?: RequestInit) => fetch(new URL(path, page.url), init);
      const html = await (await get('/')).text();
      expect(html).toMatch(/"@creek\/client": "\/creek-client\.js"/);
      expect(html).toMatch(/<script type="module" src="\/page\.js"><\/script>/);
      const sdk = await get('/creek-client.js');
      expect(sdk.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(await sdk.text()).toMatch(/export\s*\{[^}]*\bconnect\b/);
      expect((await get('/page.js')).headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(await (await get('/config.json')).json()).toEqual({
        urls: cluster.urls,
        token: cluster.token,
        offlineAfterMs: 3_000,
      });
      const signedIn = (await (await get('/dev/sign-in?user=alice')).json()) as { token: string };
      expect(signedIn).toMatchObject({ user: 'alice' });
      expect((await get('/dev/sign-in?user=no%20spaces')).status).toBe(400);
      expect((await get('/dev/sign-in')).status).toBe(400);
      expect((await get('/app.js')).status).toBe(404);
      expect((await get('/../package.json')).status).toBe(404);
      expect((await get('/', { method: 'POST' })).status).toBe(405);
    } finally {
      await page.close();
    }
  });
});

describe('npm run example:todo', () => {
  const MAIN = fileURLToPath(new URL('../src/todo/main.ts', import.meta.url));
  const run = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--conditions=creek-source', MAIN, ...args],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });

  it('refuses bad flags with why, before it starts anything', async () => {
    const urls = cluster.urls.join(',');
    for (const [args, why] of [
      [['--urls', urls, '--token', cluster.token], /--urls and --data go together/],
      [['--data', cluster.dir], /--urls and --data go together/],
      [['--urls', urls, '--token', cluster.token, '--data', '/nonexistent'], /no dev identity/],
      [['--urls', urls, '--data', cluster.dir], /--urls needs --token/],
      [['--serve', 'http'], /--serve/],
      [['--replicas', '0'], /--replicas/],
      [['--bogus'], /Unknown option '--bogus'/],
    ] as const) {
      const r = await run([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(why);
    }
  });
});
