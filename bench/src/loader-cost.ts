/**
 * What running the replica through a TypeScript loader cost: start time and CPU per weak op of a
 * replica run as built JavaScript with plain Node (`bin/creek.js`, today's binary) against the
 * same sources run through tsx (`node --import tsx src/node/cli.ts`, what the binary did before
 * dist/ existed), measured in one run with the two interleaved.
 *
 *   npm run bench:loader [-- --rounds 5 --starts 10 --ops 20000]
 *
 * Start time: `--starts` times per mode and round, one `creek start` of a one-replica cluster on
 * an empty data directory, from spawn to the first 200 of its /ready (polled every 5 ms), and the
 * CPU time the replica process used by then (/proc, 10 ms ticks).
 * CPU per op: per mode and round, a 3-replica cluster (`creek start` × 3), `--ops` weak kv.put
 * sent by one client to replica 0, 64 outstanding, after a warm-up of 2,000; the CPU time of the
 * three replica processes over the measured ops (Linux /proc), divided by the ops.
 * The build (dist/) must be current: the script runs `npm run build` first. Progress on stderr,
 * results on stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { flagPairs } from './cli-flags.js';
import { processCpuMicros } from './cpu-time.js';
import { quantile } from './stats.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('loader', 'text');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODES = {
  node: [join(ROOT, 'packages/server/bin/creek.js')],
  tsx: [
    '--conditions=creek-source',
    '--import',
    'tsx',
    join(ROOT, 'packages/server/src/node/cli.ts'),
  ],
} as const;
type Mode = keyof typeof MODES;

interface Flags {
  rounds: number;
  starts: number;
  ops: number;
}
const USAGE = 'npm run bench:loader [-- --rounds 5 --starts 10 --ops 20000]';

function parse(argv: readonly string[]): Flags {
  const f: Flags = { rounds: 5, starts: 10, ops: 20_000 };
  const fail = (message: string): never => {
    console.error(`bench:loader: ${message}`);
    process.exit(2);
  };
  const known = (name: string): boolean => ['rounds', 'starts', 'ops'].includes(name);
  for (const [name, value] of flagPairs(argv, USAGE, known, fail)) {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer`);
    f[name as keyof Flags] = n;
  }
  return f;
}

const progress = (line: string): void => void process.stderr.write(`bench:loader: ${line}\n`);

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((r) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => r(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

interface Replicas {
  procs: ChildProcess[];
  ports: number[];
  stop(): Promise<void>;
}

/** `creek start` for each replica of an n-replica cluster, in `mode`, on empty data dirs. */
async function startReplicas(mode: Mode, n: number): Promise<Replicas> {
  const dir = mkdtempSync(join(tmpdir(), 'creek-loader-'));
  const secret = join(dir, 'secret');
  writeFileSync(secret, randomBytes(24).toString('hex'));
  const ports = await freePorts(n);
  const peers = ports.map((p, i) => `${i}=ws://127.0.0.1:${p}`).join(',');
  const procs = ports.map((port, i) =>
    spawn(
      process.execPath,
      [
        ...MODES[mode],
        'start',
        '--id',
        String(i),
        '--listen',
        `127.0.0.1:${port}`,
        '--peers',
        peers,
        '--data',
        join(dir, `r${i}`),
        '--secret-file',
        secret,
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], env: withoutCreekSettings() },
    ),
  );
  return {
    procs,
    ports,
    stop: async () => {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((r) => {
              if (p.exitCode !== null || p.signalCode !== null) return r();
              p.once('exit', () => r());
              p.kill('SIGKILL');
            }),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function withoutCreekSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
  ) as NodeJS.ProcessEnv;
}

async function ready(port: number, deadline: number): Promise<void> {
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/ready`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`replica on ${port} not ready in time`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** ms from spawn to the first 200 of /ready, and the replica's CPU ms by then (one replica). */
async function startTime(mode: Mode): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const r = await startReplicas(mode, 1);
  try {
    await ready(r.ports[0]!, t0 + 30_000);
    const wall = performance.now() - t0;
    return { wall, cpu: (processCpuMicros(r.procs[0]!.pid) ?? NaN) / 1000 };
  } finally {
    await r.stop();
  }
}

/** µs of replica CPU (all three) per weak kv.put. */
async function cpuPerOp(mode: Mode, ops: number): Promise<number> {
  const r = await startReplicas(mode, 3);
  try {
    const deadline = performance.now() + 60_000;
    await Promise.all(r.ports.map((p) => ready(p, deadline)));
    const client = connect({ urls: [`ws://127.0.0.1:${r.ports[0]}/client`] });
    const put = async (count: number): Promise<void> => {
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < count) {
          const i = next++;
          await client.invokeWeak('kv.put', { key: `k${i % 1000}`, value: i });
        }
      };
      await Promise.all(Array.from({ length: 64 }, lane));
    };
    await put(2000);
    const cpu = (): number => r.procs.reduce((s, p) => s + (processCpuMicros(p.pid) ?? NaN), 0);
    const before = cpu();
    await put(ops);
    // Let gossip of the last ops finish on the other replicas.
    await new Promise((res) => setTimeout(res, 300));
    const used = cpu() - before;
    client.close();
    return used / ops;
  } finally {
    await r.stop();
  }
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  if (processCpuMicros(process.pid) === null)
    throw new Error('bench:loader reads CPU time from /proc: Linux only');
  progress('npm run build');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const starts: Record<Mode, number[]> = { node: [], tsx: [] };
  const startCpu: Record<Mode, number[]> = { node: [], tsx: [] };
  const cpu: Record<Mode, number[]> = { node: [], tsx: [] };
  for (let round = 1; round <= flags.rounds; round++) {
    // Alternate which mode goes first, so neither always gets the warmer machine.
    const order: Mode[] = round % 2 === 1 ? ['node', 'tsx'] : ['tsx', 'node'];
    for (let i = 0; i < flags.starts; i++)
      for (const mode of order) {
        const t = await startTime(mode);
        starts[mode].push(t.wall);
        startCpu[mode].push(t.cpu);
      }
    for (const mode of order) cpu[mode].push(await cpuPerOp(mode, flags.ops));
    progress(
      `round ${round}/${flags.rounds}: start p50 node ${quantile(starts.node, 0.5).toFixed(0)} ms, tsx ${quantile(starts.tsx, 0.5).toFixed(0)} ms; CPU/op node ${cpu.node.at(-1)!.toFixed(1)} µs, tsx ${cpu.tsx.at(-1)!.toFixed(1)} µs`,
    );
  }
  const row = (label: string, xs: Record<Mode, number[]>, unit: string, digits: number): string => {
    const f = (m: Mode, q: number): string => quantile(xs[m], q).toFixed(digits);
    const ratio = quantile(xs.tsx, 0.5) / quantile(xs.node, 0.5);
    return `${label.padEnd(34)} node ${f('node', 0.5)} ${unit} (p99 ${f('node', 0.99)}), tsx ${f('tsx', 0.5)} ${unit} (p99 ${f('tsx', 0.99)}); tsx/node ${ratio.toFixed(2)}×`;
  };
  out.print(
    `loader cost, ${flags.rounds} interleaved rounds (${starts.node.length} starts and ${cpu.node.length} load runs of ${flags.ops} weak ops per mode)`,
  );
  out.print(row('replica start to /ready (1 replica)', starts, 'ms', 0));
  out.print(row('replica CPU until /ready', startCpu, 'ms', 0));
  out.print(row('replica CPU per weak op (3 replicas)', cpu, 'µs', 1));
  out.save();
}

await main();
