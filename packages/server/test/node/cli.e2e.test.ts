import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { within } from './cluster-harness.js';

/**
 * The `creek` command as a user runs it: a real process, its exit status and what it prints. Most
 * cases exit before any replica starts; one starts a one-replica `creek dev`.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const SERVER = pathToFileURL(fileURLToPath(new URL('../../dist/index.js', import.meta.url))).href;
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** The environment without any CREEK_* setting the test runner may have. */
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

let dir: string;
let port: number;
let start: string[];
let held: Server;
let heldPort: number;

function listen(server: Server): Promise<number> {
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () => r((server.address() as { port: number }).port)),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'creek-cli-'));
  writeFileSync(join(dir, 'secret'), randomBytes(24).toString('hex'));
  writeFileSync(join(dir, 'not-a-dir'), '');
  // The apps below are ES modules, as in a project of this repo's kind.
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
  const app = (name: string, body: string): void =>
    writeFileSync(
      join(dir, name),
      `import { builtins, defineApp } from ${JSON.stringify(SERVER)};\n${body}\n`,
    );
  app(
    'x.js',
    `console.error('loaded x.js');\nexport default defineApp({ fromJs: builtins['kv.get'] });`,
  );
  app(
    'x.ts',
    `console.error('loaded x.ts');\nexport default defineApp({ fromTs: builtins['kv.get'] });`,
  );
  app('no-default.js', 'export const app = defineApp({});');
  app('syntax.js', 'export default defineApp({ a: 1,, });');
  app('syntax.ts', 'export default defineApp({ a: 1,, });');
  app('reserved.js', `export default defineApp({ 'kv.mine': builtins['kv.get'] });`);
  const probe = createServer();
  port = await listen(probe);
  probe.close();
  held = createServer();
  heldPort = await listen(held);
  start = [
    'start',
    '--id',
    '0',
    '--listen',
    `127.0.0.1:${port}`,
    '--peers',
    `0=ws://127.0.0.1:${port}`,
  ];
  start.push('--data', join(dir, 'data'), '--secret-file', join(dir, 'secret'));
});
afterAll(() => {
  held.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs creek to its end; the timeout only guards a command that would not exit (a bug). */
function creek(args: readonly string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...ENV, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('flags', () => {
  it.each([
    [['start', '--tokne-file', 't'], 'unknown flag --tokne-file: did you mean --token-file?'],
    [['dev', '--replica', '5'], 'unknown flag --replica: did you mean --replicas?'],
    [['start', '--fsyncc'], 'unknown flag --fsyncc: did you mean --fsync?'],
    [
      ['start', '--check-invariant'],
      'unknown flag --check-invariant: did you mean --check-invariants?',
    ],
    [['start', '--check-invariants=yes'], '--check-invariants takes no value'],
    [
      ['bogus'],
      "unknown command 'bogus'; commands: start, dev, member, backup, restore, recover, check, help",
    ],
    [['strat'], "unknown command 'strat': did you mean 'start'?"],
    [['restor'], "unknown command 'restor': did you mean 'restore'?"],
    [['backup', '--out'], '--out needs a value'],
    [['dev', 'now'], "unexpected argument 'now'"],
    [['dev', '--port', '80'], '--port 80 must be a port from 1024 to 65535'],
    [['dev', '--port', '65535', '--replicas', '2'], 'use a port from 1024 to 65534'],
  ])('creek %j exits 2 and says what is wrong', (args, message) => {
    const r = creek(args);
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(2);
  });

  it('a full start line with one misspelled flag is refused, not started without it', () => {
    const r = creek([...start, '--tokne-file', join(dir, 'secret')]);
    expect(r.stderr).toContain('did you mean --token-file?');
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it.each(['-1', '65', 'two', '1.5', 'Auto'])(
    '--workers %s is refused before anything starts',
    (n) => {
      const r = creek([...start, `--workers=${n}`]);
      expect(r.stderr).toContain(
        `--workers ${n} must be auto or a whole number of threads from 0 to 64`,
      );
      expect(r.status).toBe(2);
      expect(existsSync(join(dir, 'data'))).toBe(false);
    },
  );

  it.each(['maybe', 'OFF', '0', ''])('--speculation %j is refused before anything starts', (v) => {
    const r = creek([...start, `--speculation=${v}`]);
    expect(r.stderr).toMatch(/--speculation.* must be on or off|--speculation needs a value/);
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it.each(['-1', '256', 'two', '1.5', ''])(
    '--preferred-leader %j is refused before anything starts',
    (v) => {
      const r = creek([...start, `--preferred-leader=${v}`]);
      expect(r.stderr).toMatch(
        /--preferred-leader.* must be a replica id, a whole number from 0 to 255|--preferred-leader needs a value/,
      );
      expect(r.status).toBe(2);
      expect(existsSync(join(dir, 'data'))).toBe(false);
    },
  );

  it('--preferred-leader naming no replica of --peers is refused before anything starts', () => {
    const r = creek([...start, '--preferred-leader', '7']);
    expect(r.stderr).toMatch(/--preferred-leader 7 must name a replica of --peers \(0\)/);
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('--help on every command and --version', () => {
    for (const [args, usage] of [
      [['--help'], 'usage: creek <command>'],
      [['dev', '--help'], 'usage: creek dev'],
      [['start', '-h'], 'usage: creek start'],
      [['help', 'start'], 'usage: creek start'],
      [['backup', '--help'], 'usage: creek backup'],
      [['help', 'restore'], 'usage: creek restore'],
      [['recover', '--help'], 'usage: creek recover'],
    ] as const) {
      const r = creek(args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout).toContain(usage);
    }
    expect(creek(['dev', '--help']).stdout).toContain('--replicas N');
    expect(creek(['start', '--help']).stdout).toContain('--monitor-token-file FILE');
    const v = creek(['--version']);
    expect([v.status, v.stdout.trim()]).toEqual([0, VERSION]);
  });

  it('TLS files: both or neither, and they must exist', () => {
    const cert = creek([...start, '--tls-cert', join(dir, 'secret')]);
    expect(cert.stderr).toContain('needs --tls-key as well');
    expect(cert.status).toBe(2);
    const missing = creek([...start, '--tls-cert', 'x.pem', '--tls-key', 'x.key']);
    expect(missing.stderr).toContain('--tls-cert x.pem must name an existing file');
    expect(missing.stderr).toContain('--tls-key x.key must name an existing file');
    expect(missing.status).toBe(2);
  });

  it('--listen with an impossible port fails before the data directory is made', () => {
    const args = start.map((a) => (a === `127.0.0.1:${port}` ? '127.0.0.1:99999' : a));
    const r = creek(args);
    expect(r.stderr).toContain(
      '--listen 127.0.0.1:99999 has port 99999: a port is from 1 to 65535',
    );
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('a data directory that cannot be made is named', () => {
    const data = join(dir, 'not-a-dir', 'data');
    const r = creek([...start.slice(0, -4), '--data', data, '--secret-file', join(dir, 'secret')]);
    expect(r.stderr).toContain(`--data ${data}: cannot create or write the directory`);
    expect(r.status).toBe(1);
  });
});

describe('environment and config file', () => {
  it('CREEK_* variables are read, validated and named; a flag wins over them', () => {
    const bad = creek(['dev'], { CREEK_REPLICAS: 'many' });
    expect(bad.stderr).toContain('CREEK_REPLICAS=many must be a whole number from 1 to 15');
    expect(bad.status).toBe(2);
    const read = creek(['dev', '--port', '65535'], { CREEK_REPLICAS: '4' });
    expect(read.stderr).toContain('leaves no room for 4 replicas');
    const flagWins = creek(['dev', '--port', '65535', '--replicas', '2'], { CREEK_REPLICAS: 'x' });
    expect(flagWins.stderr).toContain('leaves no room for 2 replicas');
    const tokens = creek(start, { CREEK_TOKEN_FILE: 'nope', CREEK_CHECKPOINT_EVERY: '-1' });
    expect(tokens.stderr).toContain('CREEK_TOKEN_FILE=nope must name an existing file');
    expect(tokens.stderr).toContain('CREEK_CHECKPOINT_EVERY=-1 must be a whole number of ops');
    expect(tokens.status).toBe(2);
  });

  it('--config: keys are validated and named; the environment wins over the file', () => {
    const file = join(dir, 'creek.json');
    writeFileSync(file, JSON.stringify({ replicas: 3, port: 65535 }));
    const read = creek(['dev', '--config', file]);
    expect(read.stderr).toContain(`"port": 65535 in ${file} leaves no room for 3 replicas`);
    expect(read.status).toBe(2);
    expect(creek(['dev', '--config', file], { CREEK_REPLICAS: '5' }).stderr).toContain(
      'leaves no room for 5 replicas',
    );
    writeFileSync(file, JSON.stringify({ replicas: 'many' }));
    expect(creek(['dev'], { CREEK_CONFIG: file }).stderr).toContain(
      `"replicas": "many" in ${file} must be a whole number from 1 to 15`,
    );
    writeFileSync(file, JSON.stringify({ replica: 2 }));
    const unknown = creek(['dev', '--config', file]);
    expect(unknown.stderr).toContain(`unknown key "replica": did you mean "replicas"?`);
    expect(unknown.status).toBe(2);
  });
});

describe('creek dev', () => {
  it.each([
    ['missing.js', 'no such file ('],
    ['no-default.js', 'has no default export'],
    ['syntax.js', 'syntax error'],
    // A TypeScript app goes through tsx, whose error names the file, line and column.
    ['syntax.ts', `syntax.ts:2:`],
    ['reserved.js', "operation name 'kv.mine' uses a reserved prefix"],
  ])('--app %s: says what is wrong with the file, before any replica starts', (file, message) => {
    const r = creek(['dev', '--app', file, '--replicas', '1', '--port', String(port)]);
    expect(r.stderr).toContain(`--app ${file}: `);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain('replica 0 exited');
    expect(r.status).toBe(1);
  });

  it('a port held by another process: exits non-zero naming the port, without starting', () => {
    const r = creek(['dev', '--replicas', '1', '--port', String(heldPort), '--data', 'held']);
    expect(r.stderr).toContain(`port ${heldPort} on 127.0.0.1 already in use`);
    expect(r.stdout).not.toContain('client token');
    expect(r.status).toBe(1);
    expect(existsSync(join(dir, 'held'))).toBe(false);
  });

  // The binary is built JavaScript: a .js app is imported by Node as it is, a .ts app through tsx.
  it.each([
    ['x.js', 'fromJs', 'x.ts'],
    ['x.ts', 'fromTs', 'x.js'],
  ])(
    '--app %s loads exactly that file, in creek dev and in its replicas',
    async (file, op, other) => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'dev',
          '--app',
          file,
          '--replicas',
          '1',
          '--port',
          String(port),
          '--data',
          `dev-${file}`,
        ],
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
      await within(Promise.race([ready, exited]), 60_000, 'creek dev to say it is ready');
      child.kill('SIGINT');
      expect(await within(exited, 30_000, 'creek dev to exit')).toBe(0);
      expect(stdout).toContain(`(ops: ${op}, kv.*, queue.*)`);
      // Once by creek dev, once by its replica.
      expect(stderr.split(`loaded ${file}`)).toHaveLength(3);
      expect(stderr).not.toContain(`loaded ${other}`);
    },
  );

  it("readiness is not fooled by another cluster's replica on the port", async () => {
    // What another cluster's ready replica answers; LocalCluster's own replica cannot bind there.
    const other = createHttpServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          req.url === '/health'
            ? { ok: true, replica: 0, cluster: 'another' }
            : { id: 0, leader: 0, learning: false },
        ),
      );
    });
    const otherPort = await new Promise<number>((r) =>
      other.listen(0, '127.0.0.1', () => r((other.address() as { port: number }).port)),
    );
    try {
      await expect(
        LocalCluster.start({ replicas: 1, basePort: otherPort, logLevel: 'silent' }, 20_000),
      ).rejects.toThrow('replica 0 exited');
    } finally {
      other.close();
    }
  });
});
