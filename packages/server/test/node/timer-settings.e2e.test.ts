import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from './cluster-harness.js';

/**
 * `creek start`'s Paxos timers and worker threads from outside: `--network lan|wan` and the
 * heartbeat and election timeout overriding it, and `workers`, as flags, CREEK_* variables and
 * --config keys (and the protocol claims of upgrade tests, CREEK_TEST_*). Bad values exit 2 with a
 * message before anything starts; good ones are what the replica reports it runs with.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

let dir: string;
let start: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'creek-timers-'));
  writeFileSync(join(dir, 'secret'), randomBytes(24).toString('hex'));
  const probe = createServer();
  const port = await new Promise<number>((r) =>
    probe.listen(0, '127.0.0.1', () => r((probe.address() as { port: number }).port)),
  );
  probe.close();
  start = [
    'start',
    '--id',
    '0',
    '--listen',
    `127.0.0.1:${port}`,
    '--peers',
    `0=ws://127.0.0.1:${port}`,
    '--data',
    join(dir, 'data'),
    '--secret-file',
    join(dir, 'secret'),
  ];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function creek(args: readonly string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: { ...ENV, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stderr: r.stderr };
}

describe('creek start timer settings', () => {
  it.each([
    [['--network', 'moon'], '--network moon must be one of lan, wan'],
    [['--reads', 'nearest'], '--reads nearest must be leader or quorum'],
    [
      ['--heartbeat-ms', '0'],
      '--heartbeat-ms 0 must be a whole number of milliseconds from 25 to 10000',
    ],
    [['--heartbeat-ms', 'fast'], '--heartbeat-ms fast must be a whole number of milliseconds'],
    [
      ['--election-timeout-ms', '99'],
      '--election-timeout-ms 99 must be a whole number of milliseconds from 100 to 120000',
    ],
    [['--election-timeout-ms', '2.5e3'], '--election-timeout-ms 2.5e3 must be a whole number'],
    [
      ['--heartbeat-ms', '100', '--election-timeout-ms', '300'],
      '--election-timeout-ms 300 leaves an election timeout of 300 ms, under 4 heartbeats (4 × --heartbeat-ms 100 = 400 ms)',
    ],
    [
      ['--network', 'wan', '--election-timeout-ms', '350'],
      "under 4 heartbeats (4 × --network wan's heartbeat, 100 ms = 400 ms)",
    ],
    [
      ['--heartbeat-ms', '100'],
      '--heartbeat-ms 100 leaves an election timeout of 250 ms, under 4 heartbeats',
    ],
  ])('%j exits 2 before anything starts, saying what is wrong', (flags, message) => {
    const r = creek([...start, ...flags]);
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('refuses the same mistakes from the environment and from a --config file', () => {
    const env = creek(start, { CREEK_ELECTION_TIMEOUT_MS: '50' });
    expect(env.stderr).toContain(
      'CREEK_ELECTION_TIMEOUT_MS=50 must be a whole number of milliseconds',
    );
    expect(env.status).toBe(2);
    const file = join(dir, 'timers.json');
    writeFileSync(file, JSON.stringify({ network: 'wan', 'heartbeat-ms': 500 }));
    const config = creek([...start, '--config', file]);
    expect(config.stderr).toContain(
      `"heartbeat-ms": 500 in ${file} leaves an election timeout of 1500 ms`,
    );
    expect(config.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it.each([
    [{ workers: 'automatic' }, '"workers": "automatic" in'],
    [{ workers: 65 }, '"workers": 65 in'],
    [{ workers: -1 }, '"workers": -1 in'],
  ])('refuses %j in a --config file', (settings, message) => {
    const file = join(dir, 'workers.json');
    writeFileSync(file, JSON.stringify(settings));
    const r = creek([...start, '--config', file]);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('must be auto or a whole number of threads from 0 to 64');
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it.each([
    ['CREEK_TEST_CLIENT_PROTOCOL', '9-99'],
    ['CREEK_TEST_CLIENT_PROTOCOL', '2-1'],
    ['CREEK_TEST_CLIENT_PROTOCOL', 'latest'],
    ['CREEK_TEST_PEER_PROTOCOL', '0-1'],
    ['CREEK_TEST_PEER_PROTOCOL', '1-70000'],
  ])('refuses %s=%s (for testing upgrades only) before anything starts', (name, value) => {
    const r = creek(start, { [name]: value });
    expect(r.stderr).toContain(`${name} (for testing upgrades only) must be OLDEST-NEWEST`);
    expect(r.stderr).toContain(`not '${value}'`);
    expect(r.status).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('refuses CREEK_WORKERS=many', () => {
    const r = creek(start, { CREEK_WORKERS: 'many' });
    expect(r.stderr).toContain('CREEK_WORKERS=many must be auto or a whole number of threads');
    expect(r.status).toBe(2);
  });

  it('--network wan with a heartbeat override, workers from a --config file: the replica reports what it runs with', async () => {
    const file = join(dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ workers: 'auto' }));
    const child = spawn(
      process.execPath,
      [
        BIN,
        ...start,
        '--network',
        'wan',
        '--heartbeat-ms',
        '200',
        '--reads',
        'quorum',
        '--config',
        file,
        '--log-level',
        'info',
      ],
      { cwd: dir, env: ENV },
    );
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const ready = new Promise<void>((r) => {
        child.stdout.on('data', () => (stdout.includes('replica ready') ? r() : undefined));
      });
      await within(Promise.race([ready, exited]), 60_000, 'the replica to say it is ready');
      const line = stdout.split('\n').find((l) => l.includes('replica ready'))!;
      expect(JSON.parse(line)).toMatchObject({
        network: 'wan',
        heartbeatMs: 200,
        electionTimeoutMs: 1500,
        retransmitMs: 500,
        reads: 'quorum',
        workers: 'auto',
        speculation: 'on',
      });
    } finally {
      child.kill('SIGTERM');
      await within(exited, 30_000, 'the replica to exit');
    }
  });
});
