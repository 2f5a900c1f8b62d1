/**
 * The systems benchmarks compare Creek with, run as local processes: their Debian packages
 * installed when missing, loopback ports found free, and a Redis server without persistence.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { isFree } from './ports.js';

/**
 * Installs, with apt-get (as root, or with sudo), the package of each `[binary, package]` whose
 * binary is not on the PATH; throws, saying what to install, if that fails.
 */
export function ensureInstalled(
  needed: readonly (readonly [binary: string, pkg: string])[],
  log: (line: string) => void,
): void {
  const missing = needed.filter(
    ([bin]) => spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0,
  );
  if (missing.length === 0) return;
  const packages = missing.map(([, pkg]) => pkg);
  log(`installing ${packages.join(' ')} (apt-get)`);
  const root = process.getuid?.() === 0;
  const run = (args: string[]) =>
    spawnSync(root ? args[0]! : 'sudo', root ? args.slice(1) : args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  run(['apt-get', 'update', '-qq']);
  const r = run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages]);
  if (r.status !== 0)
    throw new Error(
      `could not install ${packages.join(' ')}: install them (apt-get install ${packages.join(' ')}) and run again`,
    );
}

/** `n` consecutive free loopback ports from about `from`. */
export async function ports(n: number, from: number): Promise<number[]> {
  for (let base = from; base < from + 2000; base += n) {
    const ok = await Promise.all(
      Array.from({ length: n }, (_, i) => isFree(base + i, '127.0.0.1')),
    );
    if (ok.every(Boolean)) return Array.from({ length: n }, (_, i) => base + i);
  }
  throw new Error(`no ${n} free ports from ${from}`);
}

export interface RedisServer {
  readonly port: number;
  readonly pid: number;
  readonly stop: () => Promise<void>;
}

/** Whether a Redis server on `port` answers PING. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** `redis-server` on a free loopback port, without persistence (no RDB, no AOF). */
export async function startRedis(): Promise<RedisServer> {
  const [port] = await ports(1, 26_000);
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // Answering PING on a connection of its own: ioredis retries by itself and hides why.
  const deadline = Date.now() + 10_000;
  while (!(await pings(port!))) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      throw new Error('redis-server did not answer within 10 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port: port!,
    pid: proc.pid!,
    stop: () =>
      new Promise<void>((r) => {
        if (proc.exitCode !== null) return r();
        proc.once('exit', () => r());
        proc.kill('SIGTERM');
      }),
  };
}
