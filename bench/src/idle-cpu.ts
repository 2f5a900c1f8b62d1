/**
 * What an idle cluster costs: the CPU each replica of a fresh 3-replica cluster uses while no
 * client sends anything (timers, heartbeats, gossip summaries, metrics), as a share of one core.
 *
 *   npm run bench:idle [-- --seconds 20 --rounds 2 --replicas 3]
 *
 * Each round starts a cluster, lets it settle for 5 s (leader elected, connections up), then reads
 * each replica's user + system time from /proc over `seconds`. Linux only (/proc).
 */
import { LocalCluster } from '@creek/server/node';
import { available, processCpuMicros } from './cpu-time.js';
import { flagPairs } from './cli-flags.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('idle', 'text');

interface Flags {
  seconds: number;
  rounds: number;
  replicas: number;
}

const USAGE = 'npm run bench:idle [-- --seconds 20 --rounds 2 --replicas 3]';
const BOUNDS: Record<keyof Flags, [number, number]> = {
  seconds: [1, 600],
  rounds: [1, 20],
  replicas: [1, 7],
};
const SETTLE_MS = 5_000;

function parse(argv: readonly string[]): Flags {
  const f: Flags = { seconds: 20, rounds: 2, replicas: 3 };
  const fail = (message: string): never => {
    console.error(`bench:idle: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in BOUNDS, fail)) {
    const [lo, hi] = BOUNDS[name as keyof Flags];
    const n = Number(raw);
    if (!Number.isInteger(n) || n < lo || n > hi)
      fail(`--${name} must be a whole number from ${lo} to ${hi}`);
    f[name as keyof Flags] = n;
  }
  return f;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function round(flags: Flags): Promise<number[]> {
  const cluster = await LocalCluster.start({ replicas: flags.replicas, logLevel: 'error' });
  try {
    await sleep(SETTLE_MS);
    const ids = Array.from({ length: flags.replicas }, (_, i) => i);
    const before = ids.map((i) => processCpuMicros(cluster.pid(i) ?? undefined));
    await sleep(flags.seconds * 1000);
    return ids.map((i) => {
      const a = before[i];
      const b = processCpuMicros(cluster.pid(i) ?? undefined);
      if (a === null || a === undefined || b === null)
        throw new Error(`replica ${i} stopped during the round`);
      return (100 * (b - a)) / (flags.seconds * 1e6);
    });
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  if (!available) {
    console.error('bench:idle: needs /proc (Linux) to read the replicas’ CPU time');
    process.exit(2);
  }
  out.print(
    `idle ${flags.replicas}-replica cluster: CPU per replica, % of one core, over ${flags.seconds} s after ${SETTLE_MS / 1000} s to settle`,
  );
  for (let r = 1; r <= flags.rounds; r++) {
    const shares = await round(flags);
    out.print(
      `round ${r}/${flags.rounds}: ${shares.map((s, i) => `replica ${i} ${s.toFixed(1)} %`).join(', ')}`,
    );
  }
  out.save();
}

main().catch((e: unknown) => {
  console.error(`bench:idle: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
