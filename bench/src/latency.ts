/**
 * Client-observed latency and throughput of a real local Creek cluster, next to a bare WebSocket
 * echo measured in the same run.
 *
 *   npm run bench:latency [-- --replicas 3 --ops N --seconds S --warmup W --keys K]
 *
 * Starts `--replicas` real `creek start` processes on 127.0.0.1 (as `creek dev` does: cluster
 * secret, client token, SQLite without fsync) and a bare `ws` echo server in its own process that
 * answers every message with the same bytes. A client in this process connects to a follower (not
 * the leader, found through GET /status) and invokes kv.increment on K keys:
 *
 *  - echo baseline: round trip of a message as large as an invoke frame (the invoke frame itself);
 *  - floors (floor-server.ts), sequential: a server that parses the frame, commits one SQLite row
 *    and answers (the least a weak op can cost on this stack), and a relay in front of it that
 *    commits on the way in and again on the way back (4 hops, 3 commits: the least a stable answer
 *    costs when a second replica's durable vote is needed); each op's ratio to its floor is shown;
 *  - sequential latency, one op outstanding, N ops after W s of warm-up, taken in 10 rounds that
 *    interleave echo, floors, weak and strong (the machine's speed drifts): a weak op is done at its
 *    first (tentative) view, a strong op at its stable view or confirm. "strong" asks for the stable
 *    view alone (`tentative: false`, as the SDK's invokeStrong does); "invoke" is a strong op that
 *    also gets its tentative view first (the SDK's invoke), whose latency is shown too;
 *  - closed loop with 1, 16 and 64 ops outstanding on one connection, for echo, weak and strong:
 *    each completion issues the next op; W s of warm-up are discarded, then S s are measured.
 *    Throughput counts completions inside the measured window, latency the ops completed in it.
 *    Between cells the cluster is left to settle (every weak op committed) so cells don't overlap.
 *    Each cell also reports the CPU time (cpu-time.ts, Linux /proc) this client and each server
 *    process spent per completed op, and how many cores were busy on average: whether an op's
 *    latency is waiting or computing.
 *
 * All processes — the replicas, the echo server and this client — share this machine's cores (with
 * whatever else runs on it), so every figure includes that contention. An echo keeps two processes
 * busy; a Creek op keeps the client and every replica busy (the origin answers and gossips, the
 * others execute; a strong op also goes through the leader), so on a machine with fewer cores than
 * processes the ops compete for cores in a way the echo does not. The issue's targets are printed
 * next to the results; they are not asserted.
 *
 * Before anything starts, the run measures what waking a sleeping process costs this machine
 * (wake-cost.ts: the CPU of an empty timer callback after 1, 5 and 25 ms asleep). An echo wakes two
 * processes per round trip, each after a sleep of one round trip; a Creek op wakes more of them, and
 * its lazy peers after longer sleeps. On a machine where one such wake costs more than a whole echo
 * round trip, no ratio to the echo can be small; the header and the targets show it.
 *
 * CREEK_BENCH_REPLICA_NODE_ARGS adds Node flags to the replica processes, e.g.
 * '--cpu-prof --cpu-prof-dir=/tmp/prof' to see where a replica's time goes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type WebSocket from 'ws';
import { flagPairs } from './cli-flags.js';
import { startFloors as startFloorServers } from './floors.js';
import { available as cpuAvailable, CpuWindow } from './cpu-time.js';
import { completion, openRaw, type RawFrame } from './raw-client.js';
import { measureWakeCost, type WakeCost } from './wake-cost.js';
import { recordResults } from './results.js';
import { quantileOfSorted } from './stats.js';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CREEK_BIN = join(ROOT, 'packages/server/bin/creek.js');
const STARTUP_TIMEOUT_MS = 45_000;
const SETTLE_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 30_000;
const OUTSTANDING = [1, 16, 64] as const;
/** Sleep lengths (ms) at which the cost of waking a process is measured, and for how long each. */
const WAKE_SLEEPS_MS = [1, 5, 25] as const;
const WAKE_SECONDS = 1;
/** Sequential measurements are split in this many interleaved rounds. */
const SEQUENTIAL_ROUNDS = 10;

const TARGETS = {
  weakP50VsEcho: 1.5,
  strongP50VsEcho: 4,
  weakOpsPerSec: 20_000,
  strongOpsPerSec: 5_000,
};

// ---------------------------------------------------------------------------------------------
// Flags

interface Flags {
  replicas: number;
  ops: number;
  seconds: number;
  warmup: number;
  keys: number;
}

const USAGE = `npm run bench:latency [-- --replicas 3 --ops 2000 --seconds 5 --warmup 1 --keys 16]
  --replicas  replicas in the local cluster (default 3)
  --ops       ops per sequential measurement (default 2000)
  --seconds   measured seconds per closed-loop cell (default 5)
  --warmup    discarded warm-up seconds before every measurement (default 1)
  --keys      kv.increment key set size (default 16)`;

function parseArgs(argv: readonly string[]): Flags {
  const flags: Flags = { replicas: 3, ops: 2000, seconds: 5, warmup: 1, keys: 16 };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in flags, fail)) {
    const value = Number(raw);
    const integer = name !== 'seconds' && name !== 'warmup';
    if (!Number.isFinite(value) || (integer && !Number.isInteger(value)))
      fail(`--${name} needs a ${integer ? 'whole ' : ''}number, got '${raw}'`);
    flags[name as keyof Flags] = value;
  }
  if (flags.replicas < 1 || flags.replicas > 15) fail('--replicas must be between 1 and 15');
  if (flags.ops < 10) fail('--ops must be at least 10');
  if (flags.seconds <= 0) fail('--seconds must be positive');
  if (flags.warmup < 0) fail('--warmup must not be negative');
  if (flags.keys < 1) fail('--keys must be at least 1');
  return flags;
}

function fail(message: string): never {
  console.error(`bench:latency: ${message}`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Child processes: every one is tracked and stopped on success, error, Ctrl-C and exit.

interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  /** The last lines it wrote, shown when it dies or the cluster does not come up. */
  readonly tail: string[];
}

const children: Child[] = [];
let dataDir: string | null = null;
/** The floor servers' SQLite files. */
let floorDir: string | null = null;
let stopping = false;

function track(name: string, proc: ChildProcess): Child {
  const child: Child = { name, proc, tail: [] };
  const keep = (data: Buffer): void => {
    for (const line of data.toString().split('\n')) {
      if (line.trim() === '') continue;
      child.tail.push(line);
      if (child.tail.length > 20) child.tail.shift();
    }
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`\nbench:latency: ${name} exited (${signal ?? `code ${code}`}) during the run`);
    printTail(child);
    void shutdown(1);
  });
  proc.on('error', (err) => {
    if (stopping) return;
    console.error(`\nbench:latency: could not run ${name}: ${err.message}`);
    void shutdown(1);
  });
  children.push(child);
  return child;
}

function printTail(child: Child): void {
  if (child.tail.length === 0) return;
  console.error(`  last output of ${child.name}:`);
  for (const line of child.tail) console.error(`    ${line}`);
}

const alive = (c: Child): boolean => c.proc.exitCode === null && c.proc.signalCode === null;

/** SIGTERM, up to 2 s to exit, then SIGKILL; removes the data directory; exits with `code`. */
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    const running = children.filter(alive);
    for (const c of running) c.proc.kill('SIGTERM');
    const deadline = Date.now() + 2000;
    while (running.some(alive) && Date.now() < deadline) await sleep(20);
    for (const c of running) if (alive(c)) c.proc.kill('SIGKILL');
    removeDataDir();
  }
  process.exit(code);
}

function removeDataDir(): void {
  for (const dir of [dataDir, floorDir])
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dataDir = null;
  floorDir = null;
}

// The last line of defence: a synchronous exit (an uncaught error, process.exit anywhere).
process.on('exit', () => {
  for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
  removeDataDir();
});
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(code); // a second Ctrl-C: the exit handler kills what is left
    console.error(`\nbench:latency: ${signal}, stopping every child process`);
    void shutdown(code);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Ports free right now on 127.0.0.1 (held together so that they differ). */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (s) =>
        new Promise<number>((resolve, reject) => {
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
        }),
    ),
  );
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

// ---------------------------------------------------------------------------------------------
// The echo server and the cluster

/** Plain CommonJS so it starts without tsx; exits when this process goes (its stdin closes). */
const ECHO_SERVER = `
const { WebSocketServer } = require('ws');
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('listening', () => console.log('echo-port ' + wss.address().port));
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

/** The echo server: its URL, and its pid for its CPU time. */
function startEcho(): Promise<{ url: string; pid: number | undefined }> {
  return startServer('echo server', ['-e', ECHO_SERVER]);
}

/**
 * The floor servers (floors.ts, as bench:peers starts them, without fsync as this cluster runs):
 * their directory is removed with the cluster's, even on an abrupt exit, and they exit when this
 * process does (their stdin closes).
 */
async function startFloors(): Promise<{ durable: string; relay: string }> {
  const floors = await startFloorServers(false);
  floorDir = floors.dir;
  return floors;
}

/** Starts a child that prints `port N` (or `echo-port N`) once listening; its ws:// URL and pid. */
async function startServer(
  name: string,
  args: string[],
): Promise<{ url: string; pid: number | undefined }> {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const child = track(name, proc);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 10 s`)), 10_000);
    proc.stdout.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  }).catch((err: unknown) => {
    printTail(child);
    throw err;
  });
  return { url: `ws://127.0.0.1:${port}`, pid: proc.pid };
}

class Cluster {
  readonly token = randomBytes(16).toString('hex');
  ports: number[] = [];
  /** The replica processes' pids, by replica id (for their CPU time). */
  readonly pids: (number | undefined)[] = [];

  constructor(readonly size: number) {}

  async start(): Promise<void> {
    const dir = mkdtempSync(join(os.tmpdir(), 'creek-bench-'));
    dataDir = dir;
    writeFileSync(join(dir, 'secret'), randomBytes(24).toString('hex'), { mode: 0o600 });
    writeFileSync(join(dir, 'token'), this.token, { mode: 0o600 });
    this.ports = await freePorts(this.size);
    const peers = this.ports.map((p, i) => `${i}=ws://127.0.0.1:${p}`).join(',');
    // Node flags for the replicas only, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' to profile them
    // (NODE_OPTIONS refuses --cpu-prof); a profile is written when the replica exits on SIGTERM.
    const nodeArgs = (process.env.CREEK_BENCH_REPLICA_NODE_ARGS ?? '').split(' ').filter(Boolean);
    for (let i = 0; i < this.size; i++) {
      const args = [
        ...nodeArgs,
        CREEK_BIN,
        'start',
        '--id',
        String(i),
        '--listen',
        `127.0.0.1:${this.ports[i]!}`,
        '--peers',
        peers,
        '--data',
        join(dir, `r${i}`),
        '--secret-file',
        join(dir, 'secret'),
        '--token-file',
        join(dir, 'token'),
        // The same token reads /status and /metrics (a benchmark's cluster has one operator).
        '--admin-token-file',
        join(dir, 'token'),
      ];
      const proc = spawn(process.execPath, args, {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CREEK_LOG_LEVEL: process.env.CREEK_LOG_LEVEL ?? 'warn' },
      });
      track(`replica ${i}`, proc);
      this.pids[i] = proc.pid;
    }
  }

  clientUrl(i: number): string {
    return `ws://127.0.0.1:${this.ports[i]!}/client`;
  }

  async status(i: number): Promise<ReplicaStatus | null> {
    let body: unknown;
    try {
      const r = await fetch(`http://127.0.0.1:${this.ports[i]!}/status`, {
        signal: AbortSignal.timeout(2000),
        headers: { authorization: `Bearer ${this.token}` },
      });
      body = await r.json();
    } catch {
      return null;
    }
    return ReplicaStatusSchema.parse(body);
  }

  /**
   * The replica's own response-time histogram (invoke arrives → view leaves), cumulative: the sum
   * and count per level ('tentative': first view, 'stable': stable view or confirm).
   */
  async serverTimes(
    i: number,
  ): Promise<Record<'tentative' | 'stable', { sum: number; n: number }>> {
    const text = await (
      await fetch(`http://127.0.0.1:${this.ports[i]!}/metrics`, {
        headers: { authorization: `Bearer ${this.token}` },
      })
    ).text();
    const read = (suffix: string, level: string): number => {
      const re = new RegExp(
        `^creek_response_seconds_${suffix}\\{[^}]*level="${level}"[^}]*\\} (\\S+)$`,
        'm',
      );
      return Number(re.exec(text)?.[1] ?? 0); // absent until the level's first observation
    };
    return {
      tentative: { sum: read('sum', 'tentative') * 1000, n: read('count', 'tentative') },
      stable: { sum: read('sum', 'stable') * 1000, n: read('count', 'stable') },
    };
  }

  statuses(): Promise<(ReplicaStatus | null)[]> {
    return Promise.all(this.ports.map((_, i) => this.status(i)));
  }

  /** Every replica answers /status and names the same leader; null on timeout. */
  async awaitLeader(timeoutMs: number): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const s = await this.statuses();
      const leader = s[0]?.leader ?? null;
      if (leader !== null && s.every((x) => x !== null && x.leader === leader)) return leader;
      await sleep(100);
    }
    return null;
  }

  /** All replicas settled with the same committed list; the time it took, or null on timeout. */
  async awaitSettled(timeoutMs: number): Promise<number | null> {
    const t0 = performance.now();
    while (performance.now() - t0 < timeoutMs) {
      const s = await this.statuses();
      const first = s[0];
      if (
        first !== null &&
        first !== undefined &&
        s.every(
          (x) =>
            x !== null && x.settled && x.committed === first.committed && x.digest === first.digest,
        )
      )
        return performance.now() - t0;
      await sleep(50);
    }
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Connections: one client-side shape for echo and for Creek, so both pay the same client costs
// (build a frame, JSON.parse the answer, look the op up by id).

/**
 * strong: a strong op that asks for the stable view alone (invokeStrong); invoke: a strong op's
 * tentative view, then its stable one.
 */
type Kind = 'echo' | 'weak' | 'strong' | 'invoke';
/** sentAt/doneAt/tentativeAt are performance.now() ms; tentativeAt is a strong op's first view. */
type Done = (sentAt: number, doneAt: number, ok: boolean, tentativeAt: number | null) => void;

interface Pending {
  readonly sentAt: number;
  readonly strong: boolean;
  tentativeAt: number | null;
  readonly done: Done;
}

/** A connection that fails outside a measurement ends the run. */
const failRun = (err: Error): void => {
  if (stopping) return;
  console.error(`\nbench:latency: ${err.message}`);
  void shutdown(1);
};

class Conn {
  private readonly pending = new Map<string, Pending>();
  /** Called if the connection fails or closes while this benchmark still uses it. */
  onFail: (err: Error) => void = failRun;
  firstError: string | null = null;
  private closing = false;
  private ws!: WebSocket;

  private constructor(
    private readonly echo: boolean,
    private readonly keys: number,
  ) {}

  /** Without a token: an echo or floor server, whose every answer completes the op. */
  static async open(url: string, opts: { token?: string; keys: number }): Promise<Conn> {
    const conn = new Conn(opts.token === undefined, opts.keys);
    const ws = await openRaw(url, opts.token, (f) => conn.onFrame(f));
    conn.ws = ws;
    ws.on('close', () => {
      if (!conn.closing) conn.onFail(new Error(`connection to ${url} closed during the run`));
    });
    ws.on('error', (err) => conn.onFail(new Error(`connection to ${url}: ${err.message}`)));
    return conn;
  }

  /** An invoke frame; the echo connection sends the very same frame as its message. */
  frame(kind: Exclude<Kind, 'echo'>, n: number): { opId: string; text: string } {
    const opId = randomUUID();
    const key = `k${n % this.keys}`;
    const level = kind === 'weak' ? 'weak' : 'strong';
    const text = JSON.stringify({
      t: 'invoke',
      opId,
      op: 'kv.increment',
      args: { key },
      level,
      ...(kind === 'strong' ? { tentative: false } : {}),
    });
    return { opId, text };
  }

  private seq = 0;

  issue(kind: Kind, done: Done): void {
    // The echo is sent the weak invoke frame.
    const { opId, text } = this.frame(kind === 'echo' ? 'weak' : kind, this.seq++);
    this.pending.set(opId, {
      sentAt: performance.now(),
      strong: kind === 'strong' || kind === 'invoke',
      tentativeAt: null,
      done,
    });
    this.ws.send(text);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  private onFrame(f: RawFrame): void {
    const now = performance.now();
    const op = f.opId === undefined ? undefined : this.pending.get(f.opId);
    if (op === undefined) return;
    const c = this.echo ? { ok: true as const } : completion(f, op.strong);
    if (c === null) {
      op.tentativeAt ??= now; // a strong op's tentative view: not done yet
      return;
    }
    if (!c.ok) this.firstError ??= c.error;
    this.pending.delete(f.opId!);
    op.done(op.sentAt, now, c.ok, op.tentativeAt);
  }

  close(): void {
    this.closing = true;
    this.ws.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement

interface Result {
  /** Latencies (ms) of ops completed in the measured part. */
  readonly lat: Float64Array;
  /** For strong ops: invoke → first tentative view (ms), same ops. */
  readonly tentative: Float64Array;
  readonly completed: number;
  readonly errors: number;
  readonly seconds: number;
}

/** Discard `warmupSeconds`, then measure `ops` completions or `seconds`. */
type Stop = { warmupSeconds: number } & ({ ops: number } | { seconds: number });

/** A closed loop: `outstanding` ops in flight; each completion issues the next. */
function closedLoop(
  conn: Conn,
  kind: Kind,
  outstanding: number,
  stop: Stop,
  /** Started and stopped with the measured window. */
  cpu?: CpuWindow,
): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    const lat: number[] = [];
    const tentative: number[] = [];
    let errors = 0;
    let completed = 0; // counted completions
    let measuring = false;
    let issuing = true;
    let windowStart = 0;
    let windowEnd = 0;
    let drainTimer: NodeJS.Timeout | null = null;
    const timers: NodeJS.Timeout[] = [];
    conn.onFail = reject;

    const finish = (): void => {
      for (const t of timers) clearTimeout(t);
      if (drainTimer !== null) clearTimeout(drainTimer);
      resolve({
        lat: Float64Array.from(lat),
        tentative: Float64Array.from(tentative),
        completed,
        errors,
        seconds: (windowEnd - windowStart) / 1000,
      });
    };
    const stopIssuing = (): void => {
      issuing = false;
      windowEnd = performance.now();
      cpu?.stop();
      if (conn.inFlight === 0) return finish();
      drainTimer = setTimeout(
        () =>
          reject(
            new Error(
              `${conn.inFlight} ${kind} ops still unanswered ${DRAIN_TIMEOUT_MS / 1000} s after the cell ended`,
            ),
          ),
        DRAIN_TIMEOUT_MS,
      );
    };
    const onDone: Done = (sentAt, doneAt, ok, tentativeAt) => {
      if (measuring && (issuing || doneAt <= windowEnd)) {
        completed++;
        if (!ok) errors++;
        else {
          lat.push(doneAt - sentAt);
          if (tentativeAt !== null) tentative.push(tentativeAt - sentAt);
        }
      }
      if ('ops' in stop && issuing && completed >= stop.ops) stopIssuing();
      if (issuing) conn.issue(kind, onDone);
      else if (conn.inFlight === 0) finish();
    };

    const begin = (): void => {
      measuring = true;
      cpu?.start();
      windowStart = performance.now();
      if ('seconds' in stop) timers.push(setTimeout(stopIssuing, stop.seconds * 1000));
    };
    if (stop.warmupSeconds > 0) timers.push(setTimeout(begin, stop.warmupSeconds * 1000));
    else begin();
    for (let i = 0; i < outstanding; i++) conn.issue(kind, onDone);
  }).finally(() => {
    conn.onFail = failRun;
  });
}

interface Summary {
  mean: number;
  p50: number;
  p99: number;
  tentMean: number;
  tentP50: number;
  tentP99: number;
  opsPerSec: number;
  completed: number;
  errors: number;
}

/** One Result from several measurements of the same kind (sequential rounds). */
function mergeResults(rs: readonly Result[]): Result {
  const cat = (f: (r: Result) => Float64Array): Float64Array => {
    const out = new Float64Array(rs.reduce((n, r) => n + f(r).length, 0));
    let at = 0;
    for (const r of rs) {
      out.set(f(r), at);
      at += f(r).length;
    }
    return out;
  };
  return {
    lat: cat((r) => r.lat),
    tentative: cat((r) => r.tentative),
    completed: rs.reduce((n, r) => n + r.completed, 0),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    seconds: rs.reduce((n, r) => n + r.seconds, 0),
  };
}

function summarize(r: Result): Summary {
  const lat = r.lat.sort();
  const tent = r.tentative.sort();
  return {
    mean: lat.reduce((a, b) => a + b, 0) / lat.length,
    p50: quantileOfSorted(lat, 0.5),
    p99: quantileOfSorted(lat, 0.99),
    tentMean: tent.reduce((a, b) => a + b, 0) / tent.length,
    tentP50: quantileOfSorted(tent, 0.5),
    tentP99: quantileOfSorted(tent, 0.99),
    opsPerSec: r.seconds > 0 ? r.completed / r.seconds : NaN,
    completed: r.completed,
    errors: r.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// Output

const ms = (x: number): string => (Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(3) : x.toFixed(1));
const ratio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '-');
const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en') : '-');
const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
const progress = (line: string): void => console.log(`· ${line}`);

function table(rows: string[][], align: ('l' | 'r')[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map(
      (r) =>
        '  ' +
        r
          .map((cell, c) =>
            align[c] === 'r' ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!),
          )
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const flags = parseArgs(process.argv.slice(2));
  /** The report: stdout, and the dated record in bench/results/ (progress lines stay out of it). */
  const out = recordResults('latency', 'text');
  const cpus = os.cpus();
  const cores = cpus.length;
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  out.print('Creek latency benchmark: a local cluster against a bare WebSocket echo');
  out.print(
    `  machine: ${cores} cores, ${model}; ${os.platform()} ${os.release()}; node ${process.version}`,
  );
  out.print(
    `  load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out.print(
    `  ${flags.replicas} replicas + echo server + this client share the ${cores} cores: figures include that contention`,
  );

  const t0 = performance.now();
  progress('measuring what it costs this machine to wake a sleeping process (quiet machine first)');
  const wakes = await measureWakeCost(WAKE_SLEEPS_MS, WAKE_SECONDS).catch((err: unknown) => {
    console.error(`bench:latency: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  if (wakes !== null) out.print(`  ${wakeLine(wakes)}`);
  progress(`starting ${flags.replicas} replicas (creek start) and the echo server on 127.0.0.1`);
  const cluster = new Cluster(flags.replicas);
  const [echoServer, floorUrls] = await Promise.all([startEcho(), startFloors(), cluster.start()]);
  const leader = await cluster.awaitLeader(STARTUP_TIMEOUT_MS);
  if (leader === null) {
    const s = await cluster.statuses();
    console.error(
      `bench:latency: the cluster did not come up: no leader agreed by every replica within ${
        STARTUP_TIMEOUT_MS / 1000
      } s\n  statuses: ${JSON.stringify(s.map((x) => (x === null ? null : { id: x.id, leader: x.leader })))}`,
    );
    for (const c of children) printTail(c);
    await shutdown(1);
  }
  const follower = Array.from({ length: flags.replicas }, (_, i) => i).find((i) => i !== leader);
  const target = follower ?? leader!;
  progress(
    `cluster up in ${((performance.now() - t0) / 1000).toFixed(1)} s: leader ${leader}, client on ` +
      (follower === undefined
        ? `replica ${target} (the leader: there is no follower)`
        : `follower ${target}`),
  );

  const echo = await Conn.open(echoServer.url, { keys: flags.keys });
  // Floor servers answer like the echo (no hello), with a view-sized frame.
  const floor = await Conn.open(floorUrls.durable, { keys: flags.keys });
  const relay = await Conn.open(floorUrls.relay, { keys: flags.keys });
  const creek = await Conn.open(cluster.clientUrl(target), {
    token: cluster.token,
    keys: flags.keys,
  });
  const frameBytes = Buffer.byteLength(creek.frame('weak', 0).text);
  out.print(
    `  invoke frame ${frameBytes} bytes (kv.increment on ${flags.keys} keys); echo messages are that frame`,
  );
  out.print(
    `  sequential: ${flags.ops} ops each; closed loop: ${flags.seconds} s per cell after ${flags.warmup} s warm-up\n`,
  );

  // Sequential latency, one outstanding, in interleaved rounds: this machine's speed drifts
  // (the echo's p50 moved between 0.05 and 0.12 ms from one run to the next), so each kind is
  // measured a little in every round, in a rotating order, rather than all at once.
  type SeqKind = 'echo' | 'durable' | 'relay' | 'weak' | 'strong' | 'invoke';
  const seqKinds: readonly SeqKind[] = ['echo', 'durable', 'relay', 'weak', 'strong', 'invoke'];
  const connOf: Record<SeqKind, Conn> = {
    echo,
    durable: floor,
    relay,
    weak: creek,
    strong: creek,
    invoke: creek,
  };
  const isCreek = (k: SeqKind): k is Exclude<Kind, 'echo'> =>
    k === 'weak' || k === 'strong' || k === 'invoke';
  // The floors answer any frame: they are driven like the echo.
  const frameKind = (k: SeqKind): Kind => (isCreek(k) ? k : 'echo');
  const perRound = Math.max(1, Math.ceil(flags.ops / SEQUENTIAL_ROUNDS));
  const parts = Object.fromEntries(seqKinds.map((k) => [k, [] as Result[]])) as Record<
    SeqKind,
    Result[]
  >;
  /** Sum and count of the target replica's own times (ms), over the measured ops. */
  const insideSum = { weak: [0, 0], strong: [0, 0], invoke: [0, 0], invokeTentative: [0, 0] };
  for (const kind of seqKinds) {
    progress(`sequential ${kind}: ${flags.warmup} s warm-up`);
    await closedLoop(connOf[kind], frameKind(kind), 1, {
      warmupSeconds: 0,
      seconds: flags.warmup,
    });
    if (isCreek(kind)) await settle(cluster);
  }
  progress(
    `sequential: ${SEQUENTIAL_ROUNDS} rounds of ${perRound} ops per kind (${seqKinds.join(', ')})`,
  );
  for (let round = 0; round < SEQUENTIAL_ROUNDS; round++) {
    for (let j = 0; j < seqKinds.length; j++) {
      const kind = seqKinds[(round + j) % seqKinds.length]!;
      // The replica's histogram is read around the measured ops only.
      const before = isCreek(kind) ? await cluster.serverTimes(target) : null;
      parts[kind].push(
        await closedLoop(connOf[kind], frameKind(kind), 1, { warmupSeconds: 0, ops: perRound }),
      );
      if (before !== null) {
        const after = await cluster.serverTimes(target);
        const add = (into: number[], l: 'tentative' | 'stable'): void => {
          into[0]! += after[l].sum - before[l].sum;
          into[1]! += after[l].n - before[l].n;
        };
        if (kind === 'weak') add(insideSum.weak, 'tentative');
        else if (kind === 'strong') add(insideSum.strong, 'stable');
        else {
          add(insideSum.invoke, 'stable');
          add(insideSum.invokeTentative, 'tentative');
        }
        await settle(cluster);
      }
    }
    if ((round + 1) % 5 === 0 || round + 1 === SEQUENTIAL_ROUNDS)
      progress(`  round ${round + 1}/${SEQUENTIAL_ROUNDS}`);
  }
  floor.close();
  relay.close();
  const seqAll = Object.fromEntries(
    seqKinds.map((k) => [k, summarize(mergeResults(parts[k]))]),
  ) as Record<SeqKind, Summary>;
  const seq: Record<Kind, Summary> = {
    echo: seqAll.echo,
    weak: seqAll.weak,
    strong: seqAll.strong,
    invoke: seqAll.invoke,
  };
  const floors = { durable: seqAll.durable, relay: seqAll.relay };
  /** Mean ms inside the replica the client talks to, over the measured ops. */
  const meanOf = ([sum, n]: number[]): number => sum! / n!;
  const inside = {
    weak: meanOf(insideSum.weak),
    strong: meanOf(insideSum.strong),
    invoke: meanOf(insideSum.invoke),
    invokeTentative: meanOf(insideSum.invokeTentative),
  };
  for (const kind of seqKinds) {
    const x = seqAll[kind];
    progress(
      `  ${kind}: p50 ${ms(x.p50)} ms, p99 ${ms(x.p99)} ms` +
        (kind === 'invoke' ? ` (first tentative view: p50 ${ms(x.tentP50)} ms)` : '') +
        (x.errors > 0 ? `, ${x.errors} errors: ${creek.firstError}` : ''),
    );
  }

  // Closed loop.
  const loop: { kind: Kind; outstanding: number; s: Summary; cpu: CpuWindow; n: number }[] = [];
  for (const kind of ['echo', 'weak', 'strong'] as const) {
    for (const outstanding of OUTSTANDING) {
      const conn = kind === 'echo' ? echo : creek;
      const cpu = new CpuWindow(kind === 'echo' ? [echoServer.pid] : cluster.pids);
      const r = await closedLoop(
        conn,
        kind,
        outstanding,
        { warmupSeconds: flags.warmup, seconds: flags.seconds },
        cpu,
      );
      const s = summarize(r);
      loop.push({ kind, outstanding, s, cpu, n: r.completed });
      progress(
        `${kind} × ${outstanding} outstanding: ${int(s.opsPerSec)} ops/s, p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms` +
          (s.errors > 0 ? `, ${s.errors} errors: ${creek.firstError}` : ''),
      );
      if (kind !== 'echo') await settle(cluster);
    }
  }

  echo.close();
  creek.close();

  // Report.
  const e = seq.echo;
  /** A sequential-latency row: p50 and p99, each also as a ratio to the echo's. */
  const row = (
    label: string,
    x: { p50: number; p99: number },
    errors: string,
    target = '',
  ): string[] => [
    label,
    ms(x.p50),
    ms(x.p99),
    ratio(x.p50 / e.p50),
    ratio(x.p99 / e.p99),
    errors,
    target,
  ];
  out.print(
    `\nSequential latency, 1 outstanding, ${perRound * SEQUENTIAL_ROUNDS} ops each in ${SEQUENTIAL_ROUNDS} interleaved rounds (client on ${follower === undefined ? 'the leader' : 'a follower'})`,
  );
  out.print(
    table(
      [
        ['', 'p50 ms', 'p99 ms', 'p50/echo', 'p99/echo', 'errors', 'target (issue)'],
        row('echo round trip', e, '-'),
        row('floor: durable reply', floors.durable, String(floors.durable.errors)),
        row('floor: durable relay', floors.relay, String(floors.relay.errors)),
        row(
          'weak → tentative',
          seq.weak,
          String(seq.weak.errors),
          `p50 ≤ ${TARGETS.weakP50VsEcho}× echo: ${verdict(seq.weak.p50 <= TARGETS.weakP50VsEcho * e.p50)}`,
        ),
        row(
          'strong → stable',
          seq.strong,
          String(seq.strong.errors),
          `p50 ≤ ${TARGETS.strongP50VsEcho}× echo: ${verdict(seq.strong.p50 <= TARGETS.strongP50VsEcho * e.p50)}`,
        ),
        row('invoke → stable', seq.invoke, String(seq.invoke.errors)),
        row('  (its tentative)', { p50: seq.invoke.tentP50, p99: seq.invoke.tentP99 }, ''),
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  out.print(
    `\n  strong: a strong op that asks for its stable view alone (invokeStrong); invoke: one that` +
      `\n  also gets its tentative view first (invoke), one more frame to the client per op.` +
      `\n\n  Floors (bench/src/floor-server.ts): no Creek, only what an answer needs on this stack.` +
      `\n  durable reply: parse the frame, commit one SQLite row, answer (least for a weak op);` +
      `\n  durable relay: client → A → B → A → client with a commit at each of A, B, A (least for a` +
      `\n  stable answer from a replica that needs one other replica's durable vote).` +
      `\n  weak p50 is ${ratio(seq.weak.p50 / floors.durable.p50)} its floor, strong p50 ${ratio(seq.strong.p50 / floors.relay.p50)} its floor.` +
      `\n  No server on this stack and machine answers faster than its floor, so what a target leaves` +
      `\n  for all of Creek's own work on the critical path (validation, execution, consensus logic)` +
      `\n  is target − floor: weak ${headroom(TARGETS.weakP50VsEcho * e.p50 - floors.durable.p50)},` +
      ` strong ${headroom(TARGETS.strongP50VsEcho * e.p50 - floors.relay.p50)}.`,
  );
  out.print(
    `\n  Where the time goes (means, ms): the client's time vs the time inside replica ${target}, from` +
      `\n  its /metrics histogram (invoke frame arrives → view frame leaves)`,
  );
  out.print(
    table(
      [
        ['', 'client', 'inside', 'rest (ws, parse, scheduling)', 'echo mean'],
        ...(
          [
            ['weak → tentative', seq.weak.mean, inside.weak],
            ['strong → stable', seq.strong.mean, inside.strong],
            ['invoke → stable', seq.invoke.mean, inside.invoke],
            ['invoke → tentative', seq.invoke.tentMean, inside.invokeTentative],
          ] as const
        ).map(([label, client, ins]) => [label, ms(client), ms(ins), ms(client - ins), ms(e.mean)]),
      ],
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );

  out.print(
    `\nClosed loop, ${flags.seconds} s per cell after ${flags.warmup} s warm-up, one connection`,
  );
  const echoAt = (n: number): Summary =>
    loop.find((x) => x.kind === 'echo' && x.outstanding === n)!.s;
  out.print(
    table(
      [
        ['', 'outstanding', 'ops/s', 'vs echo', 'p50 ms', 'p99 ms', 'p50/echo', 'errors'],
        ...loop.map(({ kind, outstanding, s }) => [
          kind === 'echo' ? 'echo' : kind === 'weak' ? 'weak → tentative' : 'strong → stable',
          String(outstanding),
          int(s.opsPerSec),
          kind === 'echo' ? '' : ratio(s.opsPerSec / echoAt(outstanding).opsPerSec),
          ms(s.p50),
          ms(s.p99),
          kind === 'echo' ? '' : ratio(s.p50 / echoAt(outstanding).p50),
          kind === 'echo' ? '' : String(s.errors),
        ]),
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );

  if (cpuAvailable) {
    const role = (i: number): string =>
      i === leader ? 'leader' : i === target ? 'origin' : 'other';
    out.print(
      `\nCPU per completed op in the closed loop (µs of user + system time, from /proc); cores busy:` +
        `\n  all of it over the cell's wall time (this machine has ${cores}: near ${cores}, ops wait for CPU)`,
    );
    out.print(
      table(
        [
          ['', 'outstanding', 'client', 'servers', 'total', 'cores busy'],
          ...loop.map(({ kind, outstanding, s, cpu, n }) => {
            const others = cpu.othersMicros;
            const total = cpu.selfMicros + others.reduce<number>((a, b) => a + (b ?? 0), 0);
            const per = (us: number | null): string => (us === null ? '?' : int(us / n));
            const servers =
              kind === 'echo'
                ? `echo ${per(others[0] ?? null)}`
                : others.map((us, i) => `${role(i)} ${per(us)}`).join(' · ');
            return [
              kind === 'echo' ? 'echo' : kind === 'weak' ? 'weak → tentative' : 'strong → stable',
              String(outstanding),
              per(cpu.selfMicros),
              servers,
              per(total),
              (total / ((n / s.opsPerSec) * 1e6)).toFixed(2),
            ];
          }),
        ],
        ['l', 'r', 'r', 'l', 'r', 'r'],
      ),
    );
  }

  const best = (kind: Kind): { opsPerSec: number; outstanding: number } =>
    loop
      .filter((x) => x.kind === kind)
      .reduce(
        (a, b) =>
          b.s.opsPerSec > a.opsPerSec
            ? { opsPerSec: b.s.opsPerSec, outstanding: b.outstanding }
            : a,
        {
          opsPerSec: -1,
          outstanding: 0,
        },
      );
  const bw = best('weak');
  const bs = best('strong');
  out.print('\nTargets (from the issue; printed, not asserted)');
  out.print(
    table(
      [
        [
          'weak p50 ≤ 1.5× echo RTT',
          `${ratio(seq.weak.p50 / e.p50)}`,
          verdict(seq.weak.p50 <= TARGETS.weakP50VsEcho * e.p50),
        ],
        [
          'strong p50 ≤ 4× echo RTT',
          `${ratio(seq.strong.p50 / e.p50)}`,
          verdict(seq.strong.p50 <= TARGETS.strongP50VsEcho * e.p50),
        ],
        [
          `≥ ${int(TARGETS.weakOpsPerSec)} weak ops/s`,
          `${int(bw.opsPerSec)} (${bw.outstanding} outstanding)`,
          verdict(bw.opsPerSec >= TARGETS.weakOpsPerSec),
        ],
        [
          `≥ ${int(TARGETS.strongOpsPerSec)} strong ops/s`,
          `${int(bs.opsPerSec)} (${bs.outstanding} outstanding)`,
          verdict(bs.opsPerSec >= TARGETS.strongOpsPerSec),
        ],
      ],
      ['l', 'r', 'l'],
    ),
  );
  if (wakes !== null) out.print(`\n  ${wakeLine(wakes)}`);
  out.print(
    `\n  ${cores} cores (${model}), node ${process.version}, load average at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; total ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  out.save();
  await shutdown(0);
}

/** A target's room above its floor, in µs ('none' when the floor is at or above the target). */
const headroom = (ms: number): string => (ms > 0 ? `${int(ms * 1000)} µs` : 'none');

/** One line: the CPU a wake costs here, by how long the process slept (wake-cost.ts). */
function wakeLine(wakes: readonly WakeCost[]): string {
  const each = wakes
    .map((w) => `${int(w.cpuMicrosPerWake)} µs after ${w.sleptMs} ms asleep`)
    .join(' · ');
  return `CPU to wake a sleeping process (an empty timer callback): ${each}`;
}

/** Lets the cluster commit what the last measurement left tentative, so cells don't overlap. */
async function settle(cluster: Cluster): Promise<void> {
  const took = await cluster.awaitSettled(SETTLE_TIMEOUT_MS);
  if (took === null)
    progress(
      `  warning: the cluster did not settle within ${SETTLE_TIMEOUT_MS / 1000} s; going on`,
    );
  else if (took > 500) progress(`  cluster settled in ${(took / 1000).toFixed(1)} s`);
}

main().catch(async (err: unknown) => {
  if (stopping) return; // Ctrl-C or a dead child: shutdown() is already under way
  console.error(`bench:latency: ${err instanceof Error ? err.message : String(err)}`);
  for (const c of children) if (!alive(c)) printTail(c);
  await shutdown(1);
});
