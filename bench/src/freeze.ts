/**
 * What freezing one replica under load costs a real local cluster: the liveness figures of a
 * replica that fell behind and of the clients that were on it.
 *
 *   npm run bench:freeze [-- --target leader|follower --freeze 20 --rate 300 --after 5
 *                            --strong 0.2 --keys 1000]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops) and one SDK client per replica, each
 * connected to its own replica first. An open-loop load of `--rate` ops per second (a share
 * `--strong` of them strong kv.increment, the rest weak kv.put, over `--keys` keys) runs 5 s, then
 * the target replica is frozen with SIGSTOP for `--freeze` seconds, resumed with SIGCONT, and the
 * load goes on `--after` seconds more. Then:
 *
 *  - unresponsive after resume: from SIGCONT until the frozen replica answers GET /health (polled
 *    every 100 ms, each poll given 1 s);
 *  - converged after resume: from SIGCONT until every replica is settled with the same state;
 *  - per client, the longest stretch without a successful strong op from the freeze on;
 *  - the largest frame any replica sent a peer during the run (the protocol's limit is 1 MiB).
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
const out = recordResults('freeze', 'text');

interface Flags {
  target: 'leader' | 'follower';
  freeze: number;
  rate: number;
  after: number;
  strong: number;
  keys: number;
}

const USAGE =
  'npm run bench:freeze [-- --target leader|follower --freeze 20 --rate 300 --after 5 --strong 0.2 --keys 1000]';
const WARM_S = 5;
const CONVERGE_TIMEOUT_MS = 600_000;

const log = (line: string): void => void process.stderr.write(`bench:freeze: ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function parse(argv: readonly string[]): Flags {
  const f: Flags = { target: 'leader', freeze: 20, rate: 300, after: 5, strong: 0.2, keys: 1000 };
  const fail = (message: string): never => {
    console.error(`bench:freeze: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in f, fail)) {
    if (name === 'target') {
      if (raw !== 'leader' && raw !== 'follower') fail('--target must be leader or follower');
      f.target = raw as Flags['target'];
      continue;
    }
    const n = Number(raw);
    const [lo, hi] = name === 'strong' ? [0, 1] : name === 'keys' ? [1, 1e6] : [0.1, 3600];
    if (!Number.isFinite(n) || n < lo || n > hi)
      fail(`--${name} must be a number from ${lo} to ${hi}`);
    (f as unknown as Record<string, number>)[name] = n;
  }
  return f;
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  try {
    const clients = clientsOnEachReplica(cluster);
    const load = startLoad(clients, flags);
    log(`load of ${flags.rate} ops/s (${flags.strong * 100} % strong) for ${WARM_S} s`);
    await sleep(WARM_S * 1000);
    const statuses = await cluster.statuses();
    const leader = statuses.find((s) => s !== null && s.role === 'leader')?.id;
    if (leader === undefined) throw new Error('no leader before the freeze');
    const target = flags.target === 'leader' ? leader : (leader + 1) % cluster.size;
    log(`freezing replica ${target} (${flags.target}) for ${flags.freeze} s`);
    const frozenAt = performance.now();
    cluster.signal(target, 'SIGSTOP');
    await sleep(flags.freeze * 1000);
    cluster.signal(target, 'SIGCONT');
    const resumedAt = performance.now();
    log('resumed; polling /health');
    let answeredAt: number | null = null;
    const health = (async () => {
      while (performance.now() - resumedAt < CONVERGE_TIMEOUT_MS) {
        try {
          const r = await fetch(`${cluster.httpUrl(target)}/health`, {
            signal: AbortSignal.timeout(1000),
          });
          if (r.status > 0) {
            answeredAt = performance.now();
            return;
          }
        } catch {
          // still frozen in its work
        }
        await sleep(100);
      }
    })();
    await sleep(flags.after * 1000);
    load.stop();
    log(`load stopped ${flags.after} s after resume; waiting for convergence`);
    let convergedAt: number | null = null;
    try {
      await cluster.converged(CONVERGE_TIMEOUT_MS);
      convergedAt = performance.now();
    } catch (err) {
      log(`no convergence: ${(err as Error).message}`);
    }
    await health;
    const end = performance.now();
    const gaps = longestStrongGaps(
      load.strongDone,
      frozenAt,
      Math.min(end, resumedAt + flags.after * 1000),
    );
    const frames = (await cluster.statuses()).map((s) => s?.network.largestFrameSent ?? NaN);
    const s = (ms: number | null): string =>
      ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`;
    out.print(
      `freeze of the ${flags.target} (replica ${target}) for ${flags.freeze} s under ${flags.rate} ops/s (${flags.strong * 100} % strong), 3 replicas on one machine`,
    );
    out.print(
      `unresponsive after resume (until /health answers): ${s(answeredAt === null ? null : answeredAt - resumedAt)}`,
    );
    out.print(
      `converged after resume: ${s(convergedAt === null ? null : convergedAt - resumedAt)}`,
    );
    out.print(
      `longest time without a successful strong op, per client (client i starts on replica i): ${gaps.map((g) => s(g)).join(', ')}`,
    );
    out.print(
      `largest peer frame sent, per replica: ${frames.map((b) => `${(b / 1024).toFixed(0)} KiB`).join(', ')} (limit ${MAX_FRAME_BYTES / 1024} KiB)`,
    );
    for (const c of clients) c.close();
    out.save();
  } finally {
    await cluster.stop(2_000);
  }
}

await main();
