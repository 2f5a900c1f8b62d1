/**
 * Where the main thread's time goes when a replica's core hands TPC-C executions to worker
 * threads: a CPU profile of the main thread only (the inspector's Profiler, in this process: V8
 * profiles the isolate it runs in, so the workers' own time is not in it) over the timed part of
 * one bench:tpcc-scaling configuration, summed up by what the main thread was doing, per job.
 *
 *   npm run bench:tpcc-profile [-- --warehouses 20 --workers 1 --txns 4000 --window 32
 *                                  --scale tiny|reduced --weight today|paper|paper5
 *                                  --interval 100 --top 25 --save FILE.cpuprofile]
 *
 * `--workers 0` profiles the inline executor instead, for comparison. The categories are the
 * innermost frame a rule below names (profile-summary.ts); `--save` also writes the whole profile,
 * which Chrome's DevTools (Performance, "Load profile") or speedscope open.
 *
 * The profiler itself costs the main thread time (a sample every `--interval` µs): compare
 * categories with each other, and transactions per second with bench:tpcc-scaling's, not with a
 * profiled run's.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Session } from 'node:inspector/promises';
import { REDUCED, scaleOf, TINY } from '../../packages/examples/src/tpcc/scale.js';
import { flagPairs } from './cli-flags.js';
import { summarize, type CategoryRule, type CpuProfile } from './profile-summary.js';
import { recordResults } from './results.js';
import { measureCore } from './tpcc-core-run.js';
import { parseWeight, TODAY, type WeightFlag } from './tpcc-weight-flag.js';

const USAGE =
  'npm run bench:tpcc-profile [-- --warehouses 20 --workers 1 --txns 4000 --window 32 --scale tiny|reduced --weight today|paper|paper5|ROUNDS --interval 100 --top 25 --save FILE.cpuprofile]';

/**
 * What the main thread does for a job, by the functions that do it (first match, innermost frame
 * first). The order matters only where one frame could match two rules.
 */
const RULES: readonly CategoryRule[] = [
  // Sending a job: V8's serializer runs inside postMessage.
  { category: 'structured clone + postMessage (send)', fn: /^postMessage$/ },
  // Receiving a result: the 'message' event (its payload is deserialized before the listener).
  {
    category: 'receiving results (message event, deserialize)',
    url: /node:internal\/(per_context\/messageport|worker)/,
  },
  { category: 'resolving reads', fn: /^resolve$/, url: /mirror-feed\.[jt]s$/ },
  // By name: an anonymous function of mirror-feed.ts (a predicate of `resolve`) counts as its caller.
  {
    category: 'feeding mirrors',
    fn: /^(take|installed|removed|finalized|committed|log)$/,
    url: /mirror-feed\.[jt]s$/,
  },
  { category: 'receiving results (adopt writes and answer)', fn: /^onReply$/ },
  { category: 'dispatching', url: /worker-pool-executor\.[jt]s$/ },
  { category: 'validating', fn: /^stillValid$/ },
  {
    category: 'installing versions',
    fn: /^(install|remove|reposition)$/,
    url: /version-store\.[jt]s$/,
  },
  // Finalizing: the state digest's upkeep (canonical JSON of each final write, hashed), then
  // dropping the versions a final write makes unreachable.
  { category: 'finalizing: state digest upkeep', url: /state-digest\.[jt]s$/ },
  { category: 'finalizing: version GC', fn: /^finalize$/, url: /version-store\.[jt]s$/ },
  { category: 'executing ops on the main thread', fn: /^runOperation$/ },
  {
    category: 'drawing transactions (load generator)',
    url: /examples\/src\/tpcc\/(inputs|random)\.[jt]s$/,
  },
  { category: 'garbage collection', fn: /^\(garbage collector\)$/ },
  { category: 'native, unattributed', fn: /^\(program\)$/ },
  {
    category: 'replica core: ordering, answers, finalizing',
    url: /packages\/replica\/src\//,
    broad: true,
  },
  { category: 'bench harness', url: /bench\/src\//, broad: true },
];

interface Flags {
  warehouses: number;
  workers: number;
  txns: number;
  window: number;
  scale: 'tiny' | 'reduced';
  weight: WeightFlag;
  interval: number;
  top: number;
  save: string | null;
}

function parse(argv: readonly string[]): Flags {
  const f: Flags = {
    warehouses: 20,
    workers: 1,
    txns: 4000,
    window: 32,
    scale: 'tiny',
    weight: TODAY,
    interval: 100,
    top: 25,
    save: null,
  };
  const fail = (message: string): never => {
    console.error(`bench:tpcc-profile: ${message}`);
    process.exit(2);
  };
  const limits: Record<string, [number, number]> = {
    warehouses: [1, 100],
    workers: [0, 64],
    txns: [1, 10_000_000],
    window: [1, 4096],
    interval: [10, 100_000],
    top: [1, 500],
  };
  const names = [...Object.keys(limits), 'scale', 'weight', 'save'];
  for (const [name, value] of flagPairs(argv, USAGE, (n) => names.includes(n), fail)) {
    if (name === 'scale') {
      if (value !== 'tiny' && value !== 'reduced') fail('--scale must be tiny or reduced');
      f.scale = value as Flags['scale'];
    } else if (name === 'weight') {
      const w = parseWeight(value);
      f.weight = typeof w === 'string' ? fail(w) : w;
    } else if (name === 'save') f.save = value;
    else {
      const [lo, hi] = limits[name]!;
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < lo || n > hi)
        fail(`--${name} must be a whole number from ${lo} to ${hi}, not '${value}'`);
      f[name as 'warehouses' | 'workers' | 'txns' | 'window' | 'interval' | 'top'] = n;
    }
  }
  return f;
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const out = recordResults('tpcc-profile', 'markdown');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: flags.interval });
  let profile: CpuProfile | null = null;
  const m = await measureCore({
    scale: scaleOf(flags.scale === 'tiny' ? TINY : REDUCED, flags.warehouses),
    workers: flags.workers,
    txns: flags.txns,
    window: flags.window,
    work: flags.weight.work,
    beforeTimed: async () => void (await session.post('Profiler.start')),
    afterTimed: async () => {
      profile = (await session.post('Profiler.stop')).profile as CpuProfile;
    },
  });
  session.disconnect();
  if (profile === null) throw new Error('the profiler returned no profile');
  if (flags.save !== null) {
    writeFileSync(flags.save, JSON.stringify(profile));
    process.stderr.write(`bench:tpcc-profile: profile written to ${flags.save}\n`);
  }
  const s = summarize(profile, RULES, flags.top);
  const jobs = Math.max(1, m.jobs);
  // The profiler samples on a wall clock, so on a busy machine its intervals include time the
  // thread waited for a CPU. Shares are the profile's; µs per job are the shares of the main
  // thread's CPU time per job (scheduler statistics), where those are available.
  const perJob = (us: number): number =>
    m.mainCpuPerJobUs === null ? us / jobs : (us / s.busyUs) * m.mainCpuPerJobUs;
  const executor = flags.workers === 0 ? 'the inline executor' : `${flags.workers} worker(s)`;
  out.print(
    `The main thread's CPU profile, TPC-C through one replica's core with ${executor} (${flags.warehouses} warehouse(s), ${flags.scale} scale, weight ${flags.weight.name}, ${flags.txns} transactions, ${flags.window} in flight, a sample every ${flags.interval} µs, ${availableParallelism()} cores)`,
  );
  out.print('');
  out.print(
    `${m.txPerSec.toFixed(0)} tx/s while profiled; ${m.jobs} jobs (executions of ordered ops); the profile saw the main thread busy ${(s.busyUs / 1000).toFixed(0)} ms and idle ${(s.idleUs / 1000).toFixed(0)} ms (wall clock); its CPU time per job (scheduler statistics): ${m.mainCpuPerJobUs === null ? "not available here, µs per job below are the profile's" : `${m.mainCpuPerJobUs.toFixed(0)} µs, which the µs per job below divide by share`}`,
  );
  out.print('');
  out.print('| what the main thread was doing | µs per job | share of busy time |');
  out.print('|---|---|---|');
  for (const c of s.categories)
    out.print(
      `| ${c.category} | ${perJob(c.us).toFixed(1)} | ${((100 * c.us) / s.busyUs).toFixed(1)} % |`,
    );
  out.print(`| **all** | **${perJob(s.busyUs).toFixed(1)}** | 100 % |`);
  out.print('');
  out.print(`Top ${flags.top} functions by self time:`);
  out.print('');
  out.print('| function | where | µs per job | share of busy time |');
  out.print('|---|---|---|---|');
  for (const t of s.top)
    out.print(
      `| ${t.fn} | ${t.at === '' ? '(native)' : t.at} | ${perJob(t.us).toFixed(1)} | ${((100 * t.us) / s.busyUs).toFixed(1)} % |`,
    );
  out.save();
}

await main();
