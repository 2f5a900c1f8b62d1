/**
 * A real local cluster under load through a mixed sequence of faults, for the liveness figures of
 * a run in which replicas keep falling behind and catching up.
 *
 *   npm run bench:faults [-- --seconds 60 --rate 300 --strong 0.2 --keys 1000 --after 5]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops) and one SDK client per replica, each
 * connected to its own replica first, and runs an open-loop load (bench/src/open-loop-load.ts).
 * After 5 s of warm-up, for `--seconds` it cycles through these faults, each followed by 4 s with
 * none: a follower frozen (SIGSTOP) 6 s; the leader cut off from both peers (/admin/block) 6 s; a
 * follower paused (/admin/pause: it refuses clients and ignores peers) 4 s; the leader frozen 6 s;
 * a follower's links delayed 200 ms 6 s. Everything is healed at the end, the load goes on
 * `--after` seconds, and the cluster must converge. Then:
 *
 *  - the largest frame each replica sent a peer during the run (the protocol's limit is 1 MiB),
 *    and how many messages were too large to send at all;
 *  - per client, the longest stretch without a successful strong op during the faults;
 *  - how long the cluster took to converge once the load stopped.
 *
 * Progress on stderr, the figures on stdout. Nothing is asserted: this measures.
 */
import { performance } from 'node:perf_hooks';
import { MAX_FRAME_BYTES } from '@creek/protocol';
import { LocalCluster } from '@creek/server/node';
import { flagPairs } from './cli-flags.js';
import { clientsOnEachReplica, longestStrongGaps, startLoad } from './open-loop-load.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('faults', 'text');

interface Flags {
  seconds: number;
  rate: number;
  strong: number;
  keys: number;
  after: number;
}

const USAGE =
  'npm run bench:faults [-- --seconds 60 --rate 300 --strong 0.2 --keys 1000 --after 5]';
const WARM_S = 5;
const HEALED_S = 4;
const CONVERGE_TIMEOUT_MS = 600_000;

const log = (line: string): void => void process.stderr.write(`bench:faults: ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function parse(argv: readonly string[]): Flags {
  const f: Flags = { seconds: 60, rate: 300, strong: 0.2, keys: 1000, after: 5 };
  const fail = (message: string): never => {
    console.error(`bench:faults: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in f, fail)) {
    const n = Number(raw);
    const [lo, hi] = name === 'strong' ? [0, 1] : name === 'keys' ? [1, 1e6] : [0.1, 3600];
    if (!Number.isFinite(n) || n < lo || n > hi)
      fail(`--${name} must be a number from ${lo} to ${hi}`);
    f[name as keyof Flags] = n;
  }
  return f;
}

/** One fault: what it does to the cluster, and how it is undone; `seconds` it lasts. */
interface Fault {
  readonly name: string;
  readonly seconds: number;
  start(cluster: LocalCluster, leader: number): Promise<() => Promise<void>>;
}

const others = (cluster: LocalCluster, i: number): number[] =>
  Array.from({ length: cluster.size }, (_, j) => j).filter((j) => j !== i);

const FAULTS: readonly Fault[] = [
  {
    name: 'a follower frozen',
    seconds: 6,
    async start(cluster, leader) {
      const target = (leader + 1) % cluster.size;
      cluster.signal(target, 'SIGSTOP');
      return async () => void cluster.signal(target, 'SIGCONT');
    },
  },
  {
    name: 'the leader cut off',
    seconds: 6,
    async start(cluster, leader) {
      for (const peer of others(cluster, leader)) await cluster.admin(leader, 'block', { peer });
      return async () => void (await cluster.admin(leader, 'unblock'));
    },
  },
  {
    name: 'a follower paused',
    seconds: 4,
    async start(cluster, leader) {
      const target = (leader + 2) % cluster.size;
      await cluster.admin(target, 'pause');
      return async () => void (await cluster.admin(target, 'resume'));
    },
  },
  {
    name: 'the leader frozen',
    seconds: 6,
    async start(cluster, leader) {
      cluster.signal(leader, 'SIGSTOP');
      return async () => void cluster.signal(leader, 'SIGCONT');
    },
  },
  {
    name: "a follower's links delayed 200 ms",
    seconds: 6,
    async start(cluster, leader) {
      const target = (leader + 1) % cluster.size;
      for (const peer of others(cluster, target))
        await cluster.admin(target, 'delay', { peer, ms: 200 });
      return async () => {
        for (const peer of others(cluster, target))
          await cluster.admin(target, 'delay', { peer, ms: 0 });
      };
    },
  },
];

async function leaderOf(cluster: LocalCluster): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const leader = (await cluster.statuses()).find((s) => s !== null && s.role === 'leader')?.id;
    if (leader !== undefined) return leader;
    await sleep(100);
  }
  throw new Error('no leader for 5 s');
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  try {
    const clients = clientsOnEachReplica(cluster);
    const load = startLoad(clients, flags);
    log(`load of ${flags.rate} ops/s (${flags.strong * 100} % strong) for ${WARM_S} s`);
    await sleep(WARM_S * 1000);
    const faultsFrom = performance.now();
    const until = faultsFrom + flags.seconds * 1000;
    const ran: string[] = [];
    for (let k = 0; performance.now() < until; k++) {
      const fault = FAULTS[k % FAULTS.length]!;
      const leader = await leaderOf(cluster);
      const left = until - performance.now();
      const ms = Math.min(fault.seconds * 1000, left);
      log(`${fault.name} (leader ${leader}) for ${(ms / 1000).toFixed(1)} s`);
      const undo = await fault.start(cluster, leader);
      await sleep(ms);
      await undo();
      ran.push(fault.name);
      await sleep(Math.min(HEALED_S * 1000, Math.max(0, until - performance.now())));
    }
    const faultsTo = performance.now();
    log(`faults over; load for ${flags.after} s more`);
    await sleep(flags.after * 1000);
    load.stop();
    const stoppedAt = performance.now();
    let converged: number | null = null;
    try {
      await cluster.converged(CONVERGE_TIMEOUT_MS);
      converged = performance.now() - stoppedAt;
    } catch (err) {
      log(`no convergence: ${(err as Error).message}`);
    }
    const gaps = longestStrongGaps(load.strongDone, faultsFrom, faultsTo);
    const statuses = await cluster.statuses();
    const s = (ms: number | null): string =>
      ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`;
    out.print(
      `${flags.seconds} s of faults under ${flags.rate} ops/s (${flags.strong * 100} % strong), 3 replicas on one machine: ${ran.join(', ')}`,
    );
    out.print(
      `largest peer frame sent, per replica: ${statuses.map((x) => (x === null ? 'down' : `${(x.network.largestFrameSent / 1024).toFixed(0)} KiB`)).join(', ')} (limit ${MAX_FRAME_BYTES / 1024} KiB); messages too large to send: ${statuses.map((x) => x?.network.oversized ?? 'down').join(', ')}`,
    );
    out.print(
      `longest time without a successful strong op during the faults, per client (client i starts on replica i): ${gaps.map((g) => s(g)).join(', ')}`,
    );
    out.print(`converged after the load stopped: ${s(converged)}`);
    for (const c of clients) c.close();
    out.save();
  } finally {
    await cluster.stop(2_000);
  }
}

await main();
