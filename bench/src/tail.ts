/**
 * Where the tail of an op's latency goes: each op's time split between the processes on its path,
 * from Linux's per-thread scheduler statistics (thread-times.ts), next to Redis measured the same
 * way in the same run as the machine's own floor.
 *
 *   npm run bench:tail [-- --ops 3000 --rounds 2 --fsync off|on --kinds weak,strong]
 *
 * Starts a 3-replica Creek cluster (LocalCluster, the built-in ops) and, when `redis-server` is
 * installed, a Redis server without persistence. One client in this process sends `--ops`
 * sequential ops per round: Creek weak kv.put (`invokeWeak`, done at its tentative answer) and
 * strong kv.put (`invokeStrong`, done at its stable answer), through a follower (the origin), and
 * Redis SET. Around each op it reads two schedstat files, the client's main thread's and the
 * origin's (Redis's), so every op's latency splits into:
 *
 *   waiting for a CPU    the client's and the origin's (Redis's) main thread ready to run (a
 *                        frame had arrived, a timer fired) while no CPU was free for it
 *   CPU                  the client's CPU time (all its threads), the origin's main thread's
 *
 * Ops are grouped by their rank in the round's latencies (≤ p50, p50–p90, p90–p99, above p99) and
 * each group's mean split is printed: what makes the slow ones slow. Per round: how busy the whole
 * machine was and how much of its time the hypervisor took (/proc/stat's steal); per process, the
 * CPU each op cost (main thread, and the other threads: V8's garbage collection and compiler
 * helpers), its main thread's time waiting for a CPU, how often the main thread went to sleep
 * and was woken again, and for replicas the disk transactions they committed (each a sync of the
 * WAL with `--fsync`). Reading the two files costs the client
 * some µs per op (printed); the quantiles are the client's own.
 *
 * Linux only (it reads /proc). Nothing here is asserted: it is a measurement to read.
 */
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { connect, type CreekClient } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { Redis } from 'ioredis';
import { flagPairs } from './cli-flags.js';
import { startRedis, type RedisServer } from './peer-servers.js';
import { quantileOfSorted } from './stats.js';
import {
  mainThreadFile,
  minus,
  machineMinus,
  machineTimes,
  processMinus,
  processTimes,
  type MachineTimes,
  schedAt,
  threadTimesAvailable,
  type ProcessTimes,
  type SchedTimes,
} from './thread-times.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('tail', 'markdown');

type Kind = 'weak' | 'strong' | 'redis';

interface Flags {
  ops: number;
  rounds: number;
  fsync: boolean;
  kinds: ('weak' | 'strong')[];
}

const USAGE = 'npm run bench:tail [-- --ops 3000 --rounds 2 --fsync off|on --kinds weak,strong]';
const log = (line: string): void => void process.stderr.write(`bench:tail: ${line}\n`);
const fail = (message: string): never => {
  console.error(`bench:tail: ${message}`);
  process.exit(2);
};

function parse(argv: readonly string[]): Flags {
  const f: Flags = { ops: 3000, rounds: 2, fsync: false, kinds: ['weak', 'strong'] };
  const known = ['ops', 'rounds', 'fsync', 'kinds'];
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => known.includes(n), fail)) {
    if (name === 'fsync') {
      if (raw !== 'on' && raw !== 'off') fail('--fsync must be on or off');
      f.fsync = raw === 'on';
    } else if (name === 'kinds') {
      const kinds = raw.split(',');
      if (kinds.length === 0 || kinds.some((k) => k !== 'weak' && k !== 'strong'))
        fail(`--kinds takes weak, strong or weak,strong, got '${raw}'`);
      f.kinds = [...new Set(kinds)] as Flags['kinds'];
    } else {
      const n = Number(raw);
      const [min, max] = name === 'ops' ? [100, 1_000_000] : [1, 50];
      if (!Number.isSafeInteger(n) || n < min || n > max)
        fail(`--${name} must be a whole number from ${min} to ${max}, got '${raw}'`);
      f[name as 'ops' | 'rounds'] = n;
    }
  }
  return f;
}

/** One op's latency and how its time split (µs). */
interface OpSplit {
  readonly latency: number;
  readonly clientRun: number;
  readonly clientWait: number;
  readonly originRun: number;
  readonly originWait: number;
}

interface Round {
  readonly ops: OpSplit[];
  /** Per process, CPU and run-queue time over the round (µs), and the round's wall time (µs). */
  readonly processes: Map<string, ProcessTimes>;
  readonly wallUs: number;
  /** What reading the two schedstat files cost the client per op, µs. */
  readonly probeUs: number;
  /** The whole machine over the round (every process, the kernel, the hypervisor's steal). */
  readonly machine: MachineTimes;
  /** Per replica (by process name), the disk transactions it committed over the round. */
  readonly commits: Map<string, number>;
}

/**
 * `ops` sequential ops (after 5 % warm-up), each bracketed by reads of the client's and the
 * origin's main-thread schedstat.
 */
async function round(
  op: (i: number) => PromiseLike<unknown>,
  ops: number,
  originPid: number,
  pids: Map<string, number>,
  commitsNow: () => Promise<Map<string, number>>,
): Promise<Round> {
  const self = mainThreadFile(process.pid);
  const origin = mainThreadFile(originPid);
  const warm = Math.ceil(ops * 0.05);
  for (let i = 0; i < warm; i++) await op(i);
  const commits0 = await commitsNow();
  const before = new Map([...pids].map(([name, pid]) => [name, processTimes(pid)]));
  const machine0 = machineTimes();
  const t0 = performance.now();
  const out: OpSplit[] = [];
  for (let i = 0; i < ops; i++) {
    const o0 = schedAt(origin);
    const c0 = schedAt(self);
    const u0 = process.cpuUsage();
    const t = performance.now();
    await op(warm + i);
    const latency = (performance.now() - t) * 1000;
    const u = process.cpuUsage(u0);
    const c1 = schedAt(self);
    const o1 = schedAt(origin);
    const c = minus(c1, c0);
    const o = minus(o1, o0);
    out.push({
      latency,
      clientRun: u.user + u.system,
      clientWait: c.waitUs,
      originRun: o.runUs,
      originWait: o.waitUs,
    });
  }
  const wallUs = (performance.now() - t0) * 1000;
  const machine = machineMinus(machineTimes(), machine0);
  const commits = new Map(
    [...(await commitsNow())].map(([name, n]) => [name, n - (commits0.get(name) ?? 0)]),
  );
  const processes = new Map(
    [...pids].map(([name, pid]) => [name, processMinus(processTimes(pid), before.get(name)!)]),
  );
  // What the four reads of an op cost the client: time them alone.
  const p0 = performance.now();
  for (let i = 0; i < 200; i++) {
    schedAt(origin);
    schedAt(self);
  }
  const probeUs = ((performance.now() - p0) * 1000 * 2) / 200;
  return { ops: out, processes, wallUs, probeUs, machine, commits };
}

const GROUPS: readonly [label: string, from: number, to: number][] = [
  ['≤ p50', 0, 0.5],
  ['p50–p90', 0.5, 0.9],
  ['p90–p99', 0.9, 0.99],
  ['> p99', 0.99, 1],
];

const us = (x: number): string => `${Math.round(x).toLocaleString('en-US')} µs`;

function report(kind: Kind, rounds: readonly Round[], cores: number): void {
  const title =
    kind === 'redis'
      ? 'Redis SET (the floor: the same machine, one process on the path)'
      : `Creek ${kind} kv.put through a follower (the origin)`;
  out.print(`\n### ${title}`);
  out.print(
    '| round | p50 | p90 | p99 | p99.9 | p99 ÷ p50 | machine busy | stolen by the hypervisor | probe cost per op |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  const grouped = GROUPS.map(() => [] as OpSplit[]);
  for (const [r, x] of rounds.entries()) {
    const sorted = [...x.ops].sort((a, b) => a.latency - b.latency);
    const lat = sorted.map((o) => o.latency);
    const q = (p: number): number => quantileOfSorted(lat, p);
    const m = x.machine;
    const pct = (v: number): string => `${((100 * v) / Math.max(1, m.total)).toFixed(1)} %`;
    out.print(
      `| ${r + 1} | ${us(q(0.5))} | ${us(q(0.9))} | ${us(q(0.99))} | ${us(q(0.999))} | ${(q(0.99) / q(0.5)).toFixed(1)}× | ${pct(m.busy)} of ${cores} cores | ${pct(m.steal)} | ${x.probeUs.toFixed(0)} µs |`,
    );
    for (const [g, [, from, to]] of GROUPS.entries())
      grouped[g]!.push(
        ...sorted.slice(Math.floor(from * sorted.length), Math.floor(to * sorted.length)),
      );
  }
  const who = kind === 'redis' ? 'redis-server' : 'origin';
  out.print(
    `\nwhere an op's time went, mean per op of each group (rounds pooled; client CPU counts all its threads; the two processes can run at once, so the columns need not add up to the latency):\n| ops by latency | ops | latency | client waiting for a CPU | ${who} waiting for a CPU | waiting, share of the latency | client CPU | ${who} CPU (main thread) |\n| --- | --- | --- | --- | --- | --- | --- | --- |`,
  );
  for (const [g, [label]] of GROUPS.entries()) {
    const ops = grouped[g]!;
    const mean = (f: (o: OpSplit) => number): number =>
      ops.reduce((a, o) => a + f(o), 0) / Math.max(1, ops.length);
    const m = {
      latency: mean((o) => o.latency),
      clientRun: mean((o) => o.clientRun),
      clientWait: mean((o) => o.clientWait),
      originRun: mean((o) => o.originRun),
      originWait: mean((o) => o.originWait),
    };
    const waiting = Math.min(1, (m.clientWait + m.originWait) / m.latency);
    out.print(
      `| ${label} | ${ops.length} | ${us(m.latency)} | ${us(m.clientWait)} | ${us(m.originWait)} | ${Math.round(100 * waiting)} % | ${us(m.clientRun)} | ${us(m.originRun)} |`,
    );
  }
  const names = [...rounds[0]!.processes.keys()];
  const opsTotal = rounds.reduce((a, r) => a + r.ops.length, 0);
  const per = (name: string, f: (p: ProcessTimes) => SchedTimes, field: keyof SchedTimes) =>
    rounds.reduce((a, r) => a + f(r.processes.get(name)!)[field], 0) / opsTotal;
  const sleeps = (name: string): number =>
    rounds.reduce((a, r) => a + r.processes.get(name)!.mainSleeps, 0) / opsTotal;
  const commits = (name: string): string => {
    if (!rounds[0]!.commits.has(name)) return '';
    return (rounds.reduce((a, r) => a + (r.commits.get(name) ?? 0), 0) / opsTotal).toFixed(2);
  };
  out.print(
    `\nper process, per op (rounds pooled):\n| process | main thread CPU | main thread waiting | main thread sleeps (wakes) | other threads' CPU (GC, compiler) | disk commits |\n| --- | --- | --- | --- | --- | --- |`,
  );
  for (const name of names)
    out.print(
      `| ${name} | ${us(per(name, (p) => p.main, 'runUs'))} | ${us(per(name, (p) => p.main, 'waitUs'))} | ${sleeps(name).toFixed(2)} | ${us(per(name, (p) => p.others, 'runUs'))} | ${commits(name)} |`,
    );
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  if (!threadTimesAvailable())
    fail('needs Linux with per-thread scheduler statistics (/proc/<pid>/task/<tid>/schedstat)');
  const cores = availableParallelism();
  log(`starting a 3-replica cluster${flags.fsync ? ' with --fsync' : ''}`);
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', fsync: flags.fsync });
  let client: CreekClient | null = null;
  let redis: RedisServer | null = null;
  let redisClient: Redis | null = null;
  try {
    const leader = (await cluster.statuses())[0]!.leader!;
    const origin = [0, 1, 2].find((i) => i !== leader)!;
    const other = [0, 1, 2].find((i) => i !== leader && i !== origin)!;
    // Pinned to the origin the figures name: no move to a replica that answers probes faster.
    client = connect({ urls: [cluster.url(origin)], token: cluster.token, nearest: false });
    await client.invokeStrong('kv.put', { key: 'warm', value: 0 });
    const pids = new Map<string, number>([
      ['client (this process)', process.pid],
      [`origin (replica ${origin})`, cluster.pid(origin)!],
      [`leader (replica ${leader})`, cluster.pid(leader)!],
      [`other follower (replica ${other})`, cluster.pid(other)!],
    ]);
    try {
      redis = await startRedis();
      redisClient = new Redis(redis.port, '127.0.0.1');
    } catch (e) {
      log(`no Redis floor: ${e instanceof Error ? e.message : String(e)}`);
    }
    const replicaNames = new Map([
      [origin, `origin (replica ${origin})`],
      [leader, `leader (replica ${leader})`],
      [other, `other follower (replica ${other})`],
    ]);
    // Disk transactions per replica (/status), for "disk commits" per op.
    const commitsNow = async (): Promise<Map<string, number>> => {
      const statuses = await cluster.statuses();
      return new Map(
        [...replicaNames].map(([i, name]) => [name, statuses[i]?.storage.commits ?? 0]),
      );
    };
    const value = 'v'.repeat(16);
    const key = (i: number): string => `k/${i % 100}`;
    const c = client;
    const results = new Map<Kind, Round[]>();
    for (let r = 1; r <= flags.rounds; r++) {
      for (const kind of flags.kinds) {
        const op =
          kind === 'weak'
            ? (i: number) => c.invokeWeak('kv.put', { key: key(i), value })
            : (i: number) => c.invokeStrong('kv.put', { key: key(i), value });
        results.set(kind, [
          ...(results.get(kind) ?? []),
          await round(op, flags.ops, cluster.pid(origin)!, pids, commitsNow),
        ]);
        log(`round ${r}/${flags.rounds}: ${kind} done`);
      }
      if (redis !== null && redisClient !== null) {
        const rc = redisClient;
        const redisPids = new Map([...pids, ['redis-server', redis.pid]]);
        results.set('redis', [
          ...(results.get('redis') ?? []),
          await round((i) => rc.set(key(i), value), flags.ops, redis.pid, redisPids, commitsNow),
        ]);
        log(`round ${r}/${flags.rounds}: redis done`);
      }
    }
    out.print(
      `## Tail anatomy: ${flags.rounds} rounds of ${flags.ops} sequential ops, 3 replicas${flags.fsync ? ' with --fsync' : ''} on loopback, ${cores} cores; Redis without persistence`,
    );
    for (const [kind, rounds] of results) report(kind, rounds, cores);
    out.save();
  } finally {
    redisClient?.disconnect();
    await redis?.stop();
    client?.close();
    await cluster.stop();
  }
}

main().catch((e: unknown) => {
  console.error(`bench:tail: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
