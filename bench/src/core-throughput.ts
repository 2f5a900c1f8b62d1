/**
 * Benchmark of the replica core alone, on one thread (issue: replica core).
 *
 *   npm run bench:core [-- --ops N --trials T]
 *
 * Scenarios, each at low contention (10,000 keys) and high contention (10 keys):
 *  - one replica: weak single-key ops through one core, with a strong op every 100 ops;
 *  - three replicas: every op is invoked at one replica and RB-delivered to the other two at once
 *    (zero network delay); strong ops are ordered by an in-process FIFO sequencer and CAB-delivered
 *    at once; all three cores run on this one thread;
 *  - three replicas with jitter: the same, but deliveries are held and released in random order in
 *    groups of 32, so ops land mid-list and commits reorder, as they do on a real network.
 * Baseline, measured in the same run: a plain serial interpreter (one Map, no ordering, versions or
 * validation) executing the same op stream. The ratio says what Creek's machinery costs.
 */
import { performance } from 'node:perf_hooks';
import { defineApp } from '@creek/server';
import { Replica, type Output, type Req, type OpId, type ExecutionResult } from '@creek/server';
import { InlineExecutor } from '@creek/server';
import { Prng, ReferenceInterpreter } from '@creek/server/sim';
import { recordResults } from './results.js';
import { median } from './stats.js';

const app = defineApp({});

interface Args {
  ops: number;
  trials: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { ops: 200_000, trials: 5 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = Number(argv[i + 1]);
    if ((flag === '--ops' || flag === '--trials') && Number.isInteger(v) && v > 0) {
      args[flag === '--ops' ? 'ops' : 'trials'] = v;
      i++;
    } else {
      console.error(`usage: npm run bench:core -- [--ops N] [--trials T]   (bad: ${flag})`);
      process.exit(2);
    }
  }
  return args;
}

interface GeneratedOp {
  op: string;
  args: { key: string; by?: number; value?: number };
  strong: boolean;
}

/** The op stream: weak increments and puts on `keys` keys, every 100th op strong. */
function opStream(n: number, keys: number, seed: number): GeneratedOp[] {
  const prng = new Prng(seed);
  return Array.from({ length: n }, (_, i) => {
    const key = `k${prng.int(0, keys - 1)}`;
    const strong = i % 100 === 99;
    return prng.chance(0.5)
      ? { op: 'kv.increment', args: { key, by: 1 }, strong }
      : { op: 'kv.put', args: { key, value: i }, strong };
  });
}

interface Result {
  opsPerSec: number;
  executionRatio: number;
  accuracy: number;
  peakVersions: number;
  /** Per-invoke time in the core until the tentative response, µs. */
  p50us: number;
  p99us: number;
}

function baseline(ops: GeneratedOp[]): number {
  const ref = new ReferenceInterpreter(app);
  const t0 = performance.now();
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i]!;
    ref.apply({ op: o.op, args: o.args, ts: i, id: { replica: 0, eventNo: i + 1 } });
  }
  return ops.length / ((performance.now() - t0) / 1000);
}

/** Runs `ops` through `n` in-process replicas; `jitter` holds deliveries and shuffles them. */
function creek(ops: GeneratedOp[], n: number, jitter: boolean, seed: number): Result {
  const replicas = Array.from(
    { length: n },
    (_, id) => new Replica({ id, app, noopIntervalMs: 1e12 }),
  );
  const executor = new InlineExecutor(app);
  const prng = new Prng(seed);
  const pendingReqs: { to: number; req: Req }[] = [];
  const decided: OpId[] = [];
  const delivered = Array.from({ length: n }, () => 0);
  const samples: number[] = [];
  let clock = 1_700_000_000_000;

  const drain = (r: number, out: Output[]): void => {
    const replica = replicas[r]!;
    for (let i = 0; ; i++) {
      if (i === out.length) {
        const id = decided[delivered[r]!];
        if (id === undefined || !replica.checkDep(id)) break;
        delivered[r]!++;
        out.push(...replica.deliverStrong(id));
        if (i === out.length) continue;
      }
      const o = out[i]!;
      switch (o.type) {
        case 'execute':
          out.push(...replica.executed(executor.execute(o.job) as ExecutionResult));
          break;
        case 'rbCast':
          for (let to = 0; to < n; to++) if (to !== r) pendingReqs.push({ to, req: o.req });
          break;
        case 'cabCast':
          decided.push(o.id); // FIFO sequencer, zero delay
          break;
      }
    }
  };
  const flush = (): void => {
    if (jitter) {
      for (let i = pendingReqs.length - 1; i > 0; i--) {
        const j = prng.int(0, i);
        [pendingReqs[i], pendingReqs[j]] = [pendingReqs[j]!, pendingReqs[i]!];
      }
    }
    for (const { to, req } of pendingReqs.splice(0)) drain(to, replicas[to]!.deliverReq(req));
    for (let r = 0; r < n; r++) drain(r, []);
  };

  const t0 = performance.now();
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i]!;
    const r = i % n;
    clock += 0.001;
    const sample = (i & 15) === 0;
    const s0 = sample ? performance.now() : 0;
    drain(r, replicas[r]!.invoke(clock, { op: o.op, args: o.args, strong: o.strong, tag: i }));
    if (sample) samples.push((performance.now() - s0) * 1000);
    if (!jitter || i % 32 === 31) flush();
  }
  flush();
  const seconds = (performance.now() - t0) / 1000;
  samples.sort((a, b) => a - b);
  const m = replicas.map((x) => x.metrics);
  const sum = (f: (x: (typeof m)[number]) => number): number => m.reduce((s, x) => s + f(x), 0);
  return {
    opsPerSec: ops.length / seconds,
    executionRatio:
      sum((x) => x.executionsOfFinalized) /
      Math.max(
        1,
        sum((x) => x.finalized),
      ),
    accuracy:
      sum((x) => x.speculatedCorrectly) /
      Math.max(
        1,
        sum((x) => x.speculated),
      ),
    peakVersions: Math.max(...replicas.map((x) => x.stats().peakVersions)),
    p50us: samples[Math.floor(samples.length * 0.5)] ?? 0,
    p99us: samples[Math.floor(samples.length * 0.99)] ?? 0,
  };
}

const args = parseArgs(process.argv.slice(2));
/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('core', 'text');
out.print(
  `core benchmark: ${args.ops} ops per trial, ${args.trials} trials (median reported), node ${process.version}`,
);
const rows: string[] = [];
for (const keys of [10_000, 10]) {
  for (const [label, n, jitter] of [
    ['1 replica', 1, false],
    ['3 replicas', 3, false],
    ['3 replicas, jitter', 3, true],
  ] as const) {
    const base: number[] = [];
    const runs: Result[] = [];
    for (let t = 0; t < args.trials; t++) {
      const ops = opStream(args.ops, keys, 1000 + t);
      base.push(baseline(ops));
      runs.push(creek(ops, n, jitter, t));
      process.stdout.write('.');
    }
    const ops = median(runs.map((r) => r.opsPerSec));
    const b = median(base);
    rows.push(
      [
        `${keys === 10 ? 'high (10 keys)' : 'low (10,000 keys)'}`.padEnd(18),
        label.padEnd(19),
        `${Math.round(ops).toLocaleString('en-US')}`.padStart(10),
        `${Math.round(ops * n).toLocaleString('en-US')}`.padStart(10),
        `${Math.round(b).toLocaleString('en-US')}`.padStart(10),
        `${(ops / b).toFixed(2)}`.padStart(6),
        median(runs.map((r) => r.executionRatio))
          .toFixed(3)
          .padStart(6),
        `${(100 * median(runs.map((r) => r.accuracy))).toFixed(1)}%`.padStart(7),
        `${median(runs.map((r) => r.peakVersions))}`.padStart(7),
        `${median(runs.map((r) => r.p50us)).toFixed(1)}/${median(runs.map((r) => r.p99us)).toFixed(1)}`.padStart(
          12,
        ),
      ].join(' '),
    );
  }
}
out.print('\n');
out.print(
  [
    'contention'.padEnd(18),
    'scenario'.padEnd(19),
    'ops/s'.padStart(10),
    'op-execs/s'.padStart(10),
    'baseline'.padStart(10),
    'ratio'.padStart(6),
    'exec'.padStart(6),
    'accur.'.padStart(7),
    'peakVer'.padStart(7),
    'p50/p99 µs'.padStart(12),
  ].join(' '),
);
for (const r of rows) out.print(r);
out.print(
  '\nops/s: ops invoked per second of wall time (all replicas on this one thread); op-execs/s: ops/s × replicas,\n' +
    'the work done by the cores together; baseline: serial Map interpreter on the same ops; ratio = ops/s ÷ baseline;\n' +
    'exec: executions per op; accur.: first tentative response equal to the final one; peakVer: most versions held by\n' +
    'one replica; p50/p99: time inside the core from invoke to its tentative response (every 16th op sampled).',
);
out.save();
