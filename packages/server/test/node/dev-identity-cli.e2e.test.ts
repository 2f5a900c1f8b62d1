import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeRun } from '../../src/node/local-cluster.js';
import { AuthClient } from './auth-client.js';
import { within } from './cluster-harness.js';

/**
 * `creek dev` with its dev identity provider, and `creek dev token`, as a developer runs them:
 * real processes. An app given, the replicas verify the dev provider's tokens and refuse anonymous
 * callers; `creek dev token` prints tokens they accept, across a restart; every malformed
 * invocation of it says what is wrong; `--dev-identity off` opens the ops again.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const APP = fileURLToPath(new URL('./fixtures/todo-auth-app.mjs', import.meta.url));

/** The environment without any CREEK_* setting the test runner may have. */
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

let dir: string;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'creek-dev-identity-cli-'));
  writeFileSync(join(dir, 'secret'), 'x'.repeat(40));
  port = await freeRun(1, '127.0.0.1');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function creek(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...ENV, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A running one-replica `creek dev`, once it said it is ready. */
interface Dev {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  /** SIGINT, as Ctrl-C; resolves with the exit status. */
  stop(): Promise<number | null>;
}

async function startDev(args: string[]): Promise<Dev> {
  const child = spawn(
    process.execPath,
    [BIN, 'dev', '--replicas', '1', '--port', String(port), ...args],
    { cwd: dir, env: ENV },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = new Promise<void>((r) => {
    const check = (): void => (stdout.includes('Press Ctrl-C') ? r() : void 0);
    child.stdout.on('data', check);
  });
  await within(
    Promise.race([ready, exited.then(() => Promise.reject(new Error(`exited: ${stderr}`)))]),
    60_000,
    'creek dev to say it is ready',
  );
  return {
    child,
    stdout: () => stdout,
    stop: async () => {
      child.kill('SIGINT');
      return within(exited, 30_000, 'creek dev to exit');
    },
  };
}

const clientToken = (dev: Dev): string => /client token: (\S+)/.exec(dev.stdout())![1]!;
const url = `ws://127.0.0.1:PORT/client`;
const open = (dev: Dev, auth?: string): Promise<AuthClient> =>
  AuthClient.open(url.replace('PORT', String(port)), {
    token: clientToken(dev),
    ...(auth === undefined ? {} : { auth }),
  });

/** `creek dev token` for data dir `data`: its token, or a failure with its status and stderr. */
function token(args: string[]): string {
  const r = creek(['dev', 'token', ...args]);
  if (r.status !== 0) throw new Error(`creek dev token ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

describe('creek dev with an app signs dev users in', () => {
  it('prints how to get a token; its tokens sign in, anonymous calls are refused, and a token outlives a restart', async () => {
    let dev = await startDev(['--app', APP, '--data', 'data']);
    let kept: string;
    try {
      expect(dev.stdout()).toContain('creek dev token --user alice --data data');
      expect(dev.stdout()).toContain('ops are closed to anonymous clients unless public');

      const t = token(['--user', 'alice', '--data', 'data']);
      // Only the token on stdout: a JWT, three base64url parts.
      expect(t).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const alice = await open(dev, t);
      expect(alice.welcome?.auth).toMatchObject({ user: 'alice' });
      expect(await alice.value('todos.add', { text: 'milk' })).toBe(0);
      // Not an admin unless the token says so.
      expect(await alice.value('todos.of', { user: 'alice' }, { level: 'weak' })).toMatch(
        /^error: forbidden:/,
      );
      const bob = await open(dev, token(['--user', 'bob', '--role', 'admin', '--data', 'data']));
      expect(await bob.value('todos.of', { user: 'alice' }, { level: 'weak' })).toEqual([
        { text: 'milk', by: 'alice' },
      ]);
      const admin = await open(dev, token(['--user', 'admin', '--data', 'data']));
      expect(await admin.value('whoami', {}, { level: 'weak' })).toEqual({
        id: 'admin',
        role: 'admin',
      });
      const anon = await open(dev);
      expect(anon.welcome?.auth).toEqual({ user: null });
      expect(await anon.value('todos.add', { text: 'x' })).toMatch(/^error: unauthorized:/);

      const short = decodeJwt(token(['--user', 'alice', '--ttl', '60', '--data', 'data']));
      expect(short.exp! - short.iat!).toBe(60);
      // A replica's HTTP port serves no sign-in: that is for dev page servers only.
      const r = await fetch(`http://127.0.0.1:${port}/dev/sign-in?user=alice`);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain('token');
      for (const c of [alice, bob, admin, anon]) c.close();
      kept = t;
    } finally {
      expect(await dev.stop()).toBe(0);
    }

    dev = await startDev(['--app', APP, '--data', 'data']);
    try {
      const again = await open(dev, kept);
      expect(again.welcome?.auth).toMatchObject({ user: 'alice' });
      again.close();
    } finally {
      expect(await dev.stop()).toBe(0);
    }
  });

  it('--dev-identity off: no users, every op open', async () => {
    const dev = await startDev(['--app', APP, '--data', 'open', '--dev-identity', 'off']);
    try {
      expect(dev.stdout()).toContain('users: none (--dev-identity off)');
      const anon = await open(dev);
      // The built-in ops, closed to end users once tokens are verified, answer anyone.
      expect(await anon.value('kv.increment', { key: 'k' })).toBe(1);
      anon.close();
    } finally {
      expect(await dev.stop()).toBe(0);
    }
    // It made no dev identity there, so creek dev token has none to mint with.
    const r = creek(['dev', 'token', '--user', 'alice', '--data', 'open']);
    expect(r.stderr).toContain('creek dev token: --data open: no dev identity in');
    expect(r.status).toBe(1);
  });
});

describe('creek dev token, malformed', () => {
  it.each<[string, string[], Record<string, string>, string, number]>([
    ['a missing data dir', ['--user', 'alice', '--data', 'nowhere'], {}, 'no dev identity in', 1],
    ['the default data dir, absent', ['--user', 'alice'], {}, 'run creek dev --app APP first', 1],
    ['a typo’d flag', ['--usr', 'alice'], {}, 'unknown flag --usr: did you mean --user?', 2],
    ['no user', ['--data', 'data'], {}, '--user is required', 2],
    ['an oversized user', ['--user', 'a'.repeat(65)], {}, 'must be 1 to 64 characters', 2],
    ['a user with a space', ['--user', 'a b'], {}, '--user "a b" must be 1 to 64', 2],
    ['a ttl of 0', ['--user', 'alice', '--ttl', '0'], {}, '--ttl 0 must be a whole number', 2],
    ['a ttl over a day', ['--user', 'alice', '--ttl', '86401'], {}, 'from 1 to 86400', 2],
    ['a ttl in words', ['--user', 'alice', '--ttl', 'long'], {}, '--ttl long must be', 2],
    ['a bad ttl variable', ['--user', 'alice'], { CREEK_TTL: '1.5' }, 'CREEK_TTL=1.5 must be', 2],
    ['a bad role', ['--user', 'alice', '--role', 'a b'], {}, '--role "a b" must be', 2],
    ['an argument', ['alice'], {}, "unexpected argument 'alice'", 2],
  ])('%s: says so and exits %#', (_, args, env, message, status) => {
    const r = creek(['dev', 'token', ...args], env);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toMatch(/^creek dev token: /);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(status);
  });

  it('takes its settings from a --config file too, and lists them in --help', () => {
    writeFileSync(join(dir, 'token.json'), JSON.stringify({ user: 'alice', ttl: 0 }));
    const r = creek(['dev', 'token', '--config', 'token.json']);
    expect(r.stderr).toContain('"ttl": 0 in token.json must be');
    const help = creek(['dev', 'token', '--help']);
    expect(help.status).toBe(0);
    for (const flag of ['--user NAME', '--data DIR', '--role ROLE', '--ttl SECONDS'])
      expect(help.stdout).toContain(flag);
  });
});

describe('creek dev --dev-identity, malformed', () => {
  it.each<[string, string[], Record<string, string>, string]>([
    [
      'a value other than on or off',
      ['--dev-identity', 'yes'],
      {},
      '--dev-identity yes must be on or off',
    ],
    ['a bad variable', [], { CREEK_DEV_IDENTITY: '1' }, 'CREEK_DEV_IDENTITY=1 must be on or off'],
    [
      'on with another provider',
      ['--dev-identity', 'on', '--auth-secret-file', 'secret'],
      {},
      '--dev-identity on and --auth-secret-file both given',
    ],
  ])('%s: refused before anything starts', (_, args, env, message) => {
    const r = creek(['dev', '--port', String(port), ...args], env);
    expect(r.stderr).toContain(message);
    expect(r.stdout).not.toContain('client token');
    expect(r.status).toBe(2);
  });
});
