import { profileNamed } from '../../geo/index.js';
import { WAN_PROFILES, type WanProfileName } from '../wan.js';
import {
  boundMs,
  fastPathLatencies,
  quantile,
  todaysPath,
  unstretchedSeeds,
  type ByRegion,
} from './latency.js';
import { runFastPath } from './run.js';

/**
 * `npm run sim:fast-path -- [--profile global|us-eu] [--seeds N] [--first F] [--keys LIST]
 * [--rate R] [--workload-ms MS] [--today on|off] [--plant fast-path-changed-deps]`
 *
 * Runs the leaderless fast-path prototype (sim/fast-path/replica.ts) on N seeds per key-space
 * size, each judged by its checker (sim/fast-path/checker.ts), and prints each region's strong-op
 * latency beside its bound (the round trip to its nearest majority) and, unless `--today off`,
 * beside today's path run by Creek's own simulator on the same seeds' profile: strong writes
 * through the leader (placed in the first region), strong reads by the leader's read index and by
 * quorum. Exits 1 when a checker failed, as `npm run sim` does (with `--plant`, which skips today's
 * path, that is the bug caught: the last lines say on how many runs), 2 on a bad flag. The caps on
 * `--rate` and `--workload-ms` keep a run to seconds: every replica keeps every op's dependencies.
 */
interface Options {
  profile: WanProfileName;
  seeds: number;
  first: number;
  keys: number[];
  rate: number;
  workloadMs: number;
  today: boolean;
  plant: boolean;
}

const USAGE = `usage: npm run sim:fast-path -- [--profile ${WAN_PROFILES.join('|')}] [--seeds N] [--first F] [--keys 10000,200,20] [--rate 20] [--workload-ms 5000] [--today on|off] [--plant fast-path-changed-deps]
  --profile      WAN profile, one replica per region (default global)
  --seeds        seeds per key-space size (default 4), from --first (default 1)
  --keys         key-space sizes, comma-separated: fewer keys, more conflicting ops
  --rate         strong ops per second asked for in each region (default 20)
  --workload-ms  simulated ms during which ops are asked for (default 5000)
  --today        also run today's leader path in Creek's simulator (default on)
  --plant        the planted bug the checker must catch`;

function fail(message: string): never {
  console.error(`sim:fast-path: ${message}\n${USAGE}`);
  process.exit(2);
}

function wholeNumber(name: string, raw: string, lo: number, hi: number): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < lo || n > hi)
    fail(`--${name} must be a whole number from ${lo} to ${hi}, got '${raw}'`);
  return n;
}

function parse(argv: readonly string[]): Options {
  const o: Options = {
    profile: 'global',
    seeds: 4,
    first: 1,
    keys: [10_000, 200, 20],
    rate: 20,
    workloadMs: 5000,
    today: true,
    plant: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const raw = argv[++i];
    if (raw === undefined || raw.startsWith('--')) fail(`${flag} needs a value`);
    switch (flag) {
      case '--profile':
        if (!(WAN_PROFILES as readonly string[]).includes(raw))
          fail(`--profile must be one of ${WAN_PROFILES.join(', ')}, got '${raw}'`);
        o.profile = raw as WanProfileName;
        break;
      case '--seeds':
        o.seeds = wholeNumber('seeds', raw, 1, 10_000);
        break;
      case '--first':
        o.first = wholeNumber('first', raw, 0, 2 ** 32 - 1);
        break;
      case '--keys':
        o.keys = raw.split(',').map((k) => wholeNumber('keys', k, 1, 10_000_000));
        break;
      case '--rate':
        o.rate = wholeNumber('rate', raw, 1, 200);
        break;
      case '--workload-ms':
        o.workloadMs = wholeNumber('workload-ms', raw, 100, 30_000);
        break;
      case '--today':
        if (raw !== 'on' && raw !== 'off') fail(`--today must be on or off, got '${raw}'`);
        o.today = raw === 'on';
        break;
      case '--plant':
        if (raw !== 'fast-path-changed-deps')
          fail(`--plant must be fast-path-changed-deps, got '${raw}'`);
        o.plant = true;
        break;
      default:
        fail(`unknown flag ${flag}`);
    }
  }
  return o;
}

const o = parse(process.argv.slice(2));
const profile = profileNamed(o.profile);
const n = profile.regions.length;
const seeds = Array.from({ length: o.seeds }, (_, i) => o.first + i);
let failed = 0;

interface Column {
  readonly title: string;
  readonly latencies: ByRegion;
  readonly slow?: number[];
}
const columns: Column[] = [];
const merge = (into: ByRegion, from: ByRegion): void =>
  from.forEach((xs, r) => into[r]!.push(...xs));
const empty = (): ByRegion => Array.from({ length: n }, () => []);

// Under --plant the question is whether the checker catches the bug: today's path is not run.
if (o.today && !o.plant) {
  // Creek's simulator on seeds whose profile is not stretched, so that its links are the same.
  const writes = empty();
  const leaderReads = empty();
  const quorumReads = empty();
  for (const seed of unstretchedSeeds(o.first, o.seeds, o.profile)) {
    for (const quorum of [false, true]) {
      const started = Date.now();
      const run = todaysPath(seed, o.profile, n, {
        leader: 0,
        quorumReads: quorum,
        workloadMs: o.workloadMs + 3000,
        warmupMs: 3000,
      });
      const verdict = run.violations.length === 0 ? 'ok' : `FAILED: ${run.violations[0]}`;
      if (run.violations.length > 0) failed++;
      console.error(
        `today's path, seed ${seed}, reads by ${quorum ? 'quorum' : 'read index'}: ${verdict} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
      if (!quorum) {
        merge(writes, run.writes);
        merge(leaderReads, run.reads);
      } else merge(quorumReads, run.reads);
    }
  }
  columns.push(
    { title: `today: write (leader ${profile.regions[0]})`, latencies: writes },
    { title: 'today: read (read index)', latencies: leaderReads },
    { title: 'quorum read', latencies: quorumReads },
  );
}

let caught = 0;
let runs = 0;
for (const keys of o.keys) {
  const commit = empty();
  const answer = empty();
  const slow = new Array<number>(n).fill(0);
  for (const seed of seeds) {
    const run = runFastPath({
      seed,
      profile: o.profile,
      keys,
      ratePerRegion: o.rate,
      workloadMs: o.workloadMs,
      unsafeIgnoreChangedDeps: o.plant,
    });
    const got = fastPathLatencies(run);
    merge(commit, got.commit);
    merge(answer, got.answer);
    got.slow.forEach((s, r) => (slow[r]! += s));
    const slowShare = got.slow.reduce((a, b) => a + b, 0) / Math.max(1, run.ops.length);
    runs++;
    if (run.violations.length > 0) {
      failed++;
      caught++;
    }
    console.log(
      `fast path, seed ${seed}, ${keys} keys: ${run.violations.length === 0 ? 'ok' : 'FAILED'} — ${run.ops.length} ops, ${(100 * slowShare).toFixed(1)} % by the slow path, ${run.messages} messages, ${run.endedAt.toFixed(0)} ms simulated`,
    );
    for (const v of run.violations) console.log(`  ${v}`);
  }
  columns.push(
    { title: `fast path, ${keys} keys: commit`, latencies: commit },
    { title: `answer (slow share)`, latencies: answer, slow },
  );
}

const cell = (xs: readonly number[], bound: number): string =>
  xs.length === 0
    ? '–'
    : `${quantile(xs, 0.5).toFixed(0)} / ${quantile(xs, 0.99).toFixed(0)} (${(quantile(xs, 0.5) / bound).toFixed(2)}×)`;
console.log('');
console.log(
  `Strong-op latency by region, \`${o.profile}\` profile, ${n} replicas, a client at each; p50 / p99 ms (p50 ÷ bound: the round trip to the region's nearest majority). Today's path: the stable answer. Fast path: ${o.rate} ops/s per region for ${o.workloadMs} ms, seeds ${seeds[0]}–${seeds.at(-1)}; commit = its order fixed at its origin, answer = executed there (the result); slow share = ops that took the second round.`,
);
console.log('');
console.log(`| region | bound | ${columns.map((c) => c.title).join(' | ')} |`);
console.log(`| --- | ---: | ${columns.map(() => '---:').join(' | ')} |`);
const ratios = columns.map(() => [] as number[]);
for (let r = 0; r < n; r++) {
  const bound = boundMs(o.profile, r, n);
  const cells = columns.map((c, i) => {
    const xs = c.latencies[r]!;
    if (xs.length > 0) ratios[i]!.push(quantile(xs, 0.5) / bound);
    const share = c.slow ? ` ${((100 * c.slow[r]!) / Math.max(1, xs.length)).toFixed(1)} %` : '';
    return cell(xs, bound) + share;
  });
  console.log(`| ${profile.regions[r]} | ${bound} | ${cells.join(' | ')} |`);
}
const mean = (xs: readonly number[]): string =>
  xs.length === 0 ? '–' : `${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2)}×`;
console.log(`| mean ÷ bound | | ${ratios.map(mean).join(' | ')} |`);
console.log('');
if (o.plant) console.log(`sim:fast-path: the planted bug was caught on ${caught} of ${runs} runs`);
console.log(
  `sim:fast-path: ${failed === 0 ? 'every run passed its checkers' : `${failed} runs failed their checkers`}`,
);
process.exit(failed === 0 ? 0 : 1);
