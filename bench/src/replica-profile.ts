/**
 * Replicas' CPU profiles (replica-cpu-profile.mjs) summed up by what the replica was doing, per
 * transaction: all the profiles in `--run`, less those in `--base` when given. A base run that
 * differs only in its window's length (`bench:tpcc --seconds 5` against `--seconds 25`) cancels
 * what every run pays once (start, loading the population, the consistency check's reads), so the
 * difference is the cost of the extra seconds of load alone.
 *
 *   npm run bench:replica-profile -- --run DIR [--base DIR] --tx N [--top 25]
 *
 * `--tx`: the transactions the difference stands for (e.g. 20 s × 250 tx/s = 5000).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagPairs } from './cli-flags.js';
import { summarize, type CategoryRule, type CpuProfile } from './profile-summary.js';

const USAGE = 'npm run bench:replica-profile -- --run DIR [--base DIR] --tx N [--top 25]';

/**
 * What a replica does, by the functions that do it (innermost named frame first; broad rules only
 * where no narrower one names a frame). Replicas run the built JavaScript (dist/).
 */
const RULES: readonly CategoryRule[] = [
  { category: 'executing ops', fn: /^runOperation$/ },
  { category: 'validating executions', fn: /^stillValid$/ },
  { category: 'state digest upkeep', url: /\/state-digest\.js$/ },
  {
    category: 'version store: install, remove, GC',
    fn: /^(install|remove|reposition|finalize)$/,
    url: /\/version-store\.js$/,
  },
  {
    category: 'tentative list upkeep (ordering, dependencies)',
    url: /\/core\/(ordering|dependencies|rank|own-ops|hlc|dvv)\.js$/,
  },
  {
    category: 'answers and corrections',
    url: /\/core\/corrections\.js$|\/host\/client-connections\.js$/,
  },
  { category: 'gossip', url: /\/replica\/dist\/gossip\// },
  { category: 'CAB (Multi-Paxos)', url: /\/replica\/dist\/cab\// },
  {
    category: 'storage (SQLite log, records)',
    url: /\/(storage|record-codec|record-checksums|group-commit)\.js$|better-sqlite3/,
  },
  {
    category: 'network: frames, codec, sockets',
    url: /\/(wire|frame-packing|peer-mesh|peer-outbox|client-endpoint|codec)\.js$|node_modules\/ws\//,
  },
  { category: 'garbage collection', fn: /^\(garbage collector\)$/ },
  { category: 'native, unattributed', fn: /^\(program\)$/ },
  { category: 'JSON (canonical, frozen copies)', url: /\/app\/dist\/json\.js$/, broad: true },
  { category: 'Zod checks', url: /node_modules\/zod\//, broad: true },
  { category: 'replica core, other', url: /\/replica\/dist\/core\//, broad: true },
  { category: 'replica host, other', url: /\/replica\/dist\/host\//, broad: true },
  { category: 'server runtime, other', url: /\/server\/dist\//, broad: true },
  { category: 'Node internals', url: /^node:/, broad: true },
];

interface Totals {
  busyUs: number;
  categories: Map<string, number>;
  top: Map<string, number>;
}

function totals(dir: string, top: number): Totals {
  const t: Totals = { busyUs: 0, categories: new Map(), top: new Map() };
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`${dir}: no .cpuprofile files`);
  for (const f of files) {
    const s = summarize(JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile, RULES, top);
    t.busyUs += s.busyUs;
    for (const c of s.categories)
      t.categories.set(c.category, (t.categories.get(c.category) ?? 0) + c.us);
    for (const x of s.top) {
      const key = `${x.fn} | ${x.at === '' ? '(native)' : x.at}`;
      t.top.set(key, (t.top.get(key) ?? 0) + x.us);
    }
  }
  return t;
}

function minus(a: Map<string, number>, b: Map<string, number> | undefined): Map<string, number> {
  return new Map([...a].map(([k, v]) => [k, v - (b?.get(k) ?? 0)]));
}

function main(): void {
  const f = { run: '', base: null as string | null, tx: 0, top: 25 };
  const fail = (message: string): never => {
    console.error(`bench:replica-profile: ${message}`);
    process.exit(2);
  };
  for (const [name, value] of flagPairs(
    process.argv.slice(2),
    USAGE,
    (n) => ['run', 'base', 'tx', 'top'].includes(n),
    fail,
  )) {
    if (name === 'run') f.run = value;
    else if (name === 'base') f.base = value;
    else if (!/^\d+$/.test(value) || Number(value) < 1)
      fail(`--${name} must be a whole number from 1`);
    else f[name as 'tx' | 'top'] = Number(value);
  }
  if (f.run === '' || f.tx === 0) fail(`--run and --tx are needed\n\n${USAGE}`);
  // Many functions: the difference of two top lists needs each function's total in both.
  const read = (dir: string): Totals => {
    try {
      return totals(dir, 100_000);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
  };
  const run = read(f.run);
  const base = f.base === null ? null : read(f.base);
  const busy = run.busyUs - (base?.busyUs ?? 0);
  const categories = [...minus(run.categories, base?.categories)].sort((a, b) => b[1] - a[1]);
  const us = (x: number): string => (x / f.tx).toFixed(0);
  console.log(
    `Replicas' CPU, ${f.run}${base === null ? '' : ` less ${f.base}`}, per transaction (${f.tx}): ${us(busy)} µs (all replicas together)\n`,
  );
  console.log('| what the replicas were doing | µs per transaction | share |\n|---|---|---|');
  for (const [c, v] of categories)
    console.log(`| ${c} | ${us(v)} | ${((100 * v) / busy).toFixed(1)} % |`);
  console.log(
    `\nTop ${f.top} functions by self time:\n\n| function | where | µs per transaction |\n|---|---|---|`,
  );
  for (const [k, v] of [...minus(run.top, base?.top)].sort((a, b) => b[1] - a[1]).slice(0, f.top))
    console.log(`| ${k} | ${us(v)} |`);
}

main();
