/**
 * TPC-C through a cluster of real replica processes, Creek against the replication schemes it
 * draws on, in one run (Creek §6, Figure 1):
 *
 *   npm run bench:tpcc [-- --replicas 3 --warehouses 1 --scale tiny|reduced
 *                         --modes smr,bayou,creek:1,creek:2 --start 100 --factor 1.5 --steps 10
 *                         --seconds 5 --warmup 2 --weight today|paper|paper5 --rounds 3
 *                         --p99-factor 10 --p99-bound-ms MS --misses 2 --out bench-results]
 *
 * Modes, each on a fresh cluster (`LocalCluster`, SQLite without fsync) loaded with the same
 * population and driven by the same sequence of transactions:
 *
 *  - `smr`: state machine replication on Creek's own ordering (`--speculation off`): every
 *    transaction strong, executed by each replica only once committed, one at a time.
 *  - `bayou`: Bayou-like: every replica executes speculatively in its tentative order, one
 *    execution at a time on the main thread (`--workers 0`); the final order comes from the CAB
 *    leader. (Bayou's primary orders every op itself; here weak ops are committed with the strong
 *    ops that follow them, as in Creek. The execution is what differs.)
 *  - `creek:N`: Creek with N execution worker threads per replica (`--workers N`), executions of
 *    ops beyond the validation frontier running at once (§4.4).
 *
 * `--weight` gives every transaction extra deterministic work (the TPC-C app's weight.ts): `today`
 * (the default) none, `paper` about the Creek paper's 0.37 ms per transaction executed inline,
 * `paper5` five times that (§6.3), or a whole number of rounds.
 *
 * Payment is strong (the SDK's `invoke`: a tentative view, then the stable one); the rest of the
 * mix is weak (`invokeWeak`; Order-Status and Stock-Level are read-only and read locally). Load is
 * open-loop: transactions are issued on a fixed schedule at each offered rate, whatever the
 * answers, and latency is measured from the scheduled time, so a backlog shows as latency rather
 * than as a slower client. Clients connect to every replica in turn (two connections each).
 *
 * A ladder: rates rise by `--factor` from `--start`, for at most `--steps` rates. A window is
 * cut short when a backlog of over 3 s of transactions builds up, and counts as stalled when it
 * completes under 85 % of the offered rate or answers are still missing 20 s after it.
 *
 * Each mode runs `--rounds` ladders, each on a fresh cluster, interleaved (every mode once per
 * round, alternate rounds in reverse order), and is summed up by its median sustained throughput
 * and the spread across rounds (sustained.ts): a window is sustained when it had no errors, kept up
 * with its rate (85 %) and kept weak and Payment p99 within `--p99-factor` times the ladder's
 * low-load p99s (`--p99-bound-ms`: within that bound instead, the same for every mode, since a
 * relative bound is stricter on the mode with the lower low-load latency); a ladder's figure is
 * the throughput of its highest-offered sustained window. A ladder goes on past a window that was
 * not sustained and ends after `--misses` such windows in a row, so one stall at a low rate does
 * not decide a mode's figure. The highest window throughput at any latency is reported beside it.
 *
 * Per rate: completed transactions per second; tentative latency p50/p99 of the weak transactions
 * (their only answer; under SMR their stable one); stable latency p50/p99 of Payment; speculation
 * accuracy (ops whose first answer equalled their final result, from the replicas' counters over the
 * window); execution ratio (executions per finalized op, likewise); the replicas' CPU time per
 * transaction; whether the window was sustained, or why not. After each ladder the cluster
 * settles, every replica holds the same state, and the TPC-C consistency conditions (§3.3.2, 1-10
 * and 12) are checked on it, read through `tpcc.rows`; a violation fails the run (exit status 1).
 *
 * Writes the table (markdown) to stdout and to a dated record in bench/results/ (results.ts;
 * CREEK_BENCH_RESULTS=off: none), and, with the charts (latency, accuracy and execution ratio
 * against throughput, each mode's median round), to
 * `--out`/tpcc-<W>w-<R>r.{md,html}, the figures as JSON beside them. Progress goes to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connect, OperationFailed, type Correctable, type CreekClient } from '@creek/client';
import { LocalCluster, type ReplicaStatus } from '@creek/server/node';
import type { TpccApp } from '../../packages/examples/src/tpcc/app.js';
import { checkConsistency, readState } from '../../packages/examples/src/tpcc/consistency.js';
import { TpccInputs } from '../../packages/examples/src/tpcc/inputs.js';
import { loadPlan } from '../../packages/examples/src/tpcc/population.js';
import { REDUCED, scaleOf, TINY, type Scale } from '../../packages/examples/src/tpcc/scale.js';
import { htmlReport, type Chart, type Series } from './charts.js';
import { flagPairs } from './cli-flags.js';
import { recordResults } from './results.js';
import { parseWeight, TODAY, type WeightFlag } from './tpcc-weight-flag.js';
import { quantileOfSorted } from './stats.js';
import { acrossRounds, sustainedThroughput, type LadderVerdict } from './sustained.js';

const APP_PATH = fileURLToPath(new URL('../../packages/examples/src/tpcc/app.ts', import.meta.url));
const LOAD_SEED = 11;
const INPUT_SEED = 5;
const CONNECTIONS_PER_REPLICA = 2;
const DRAIN_MS = 20_000;
const BACKLOG_SECONDS = 3;
const SATURATED_SHARE = 0.85;

type Mode =
  | { readonly kind: 'smr' }
  | { readonly kind: 'bayou' }
  | { readonly kind: 'creek'; readonly workers: number };

interface Flags {
  replicas: number;
  warehouses: number;
  scale: 'tiny' | 'reduced';
  modes: Mode[];
  start: number;
  factor: number;
  steps: number;
  seconds: number;
  warmup: number;
  /** The weight's name (or its rounds, as given) and its rounds of work per transaction. */
  weight: WeightFlag;
  /** Ladders per mode, the modes interleaved round by round. */
  rounds: number;
  /** A sustained window's p99s are within this many times the ladder's low-load p99s. */
  p99Factor: number;
  /** Instead of --p99-factor, one p99 bound for every ladder, ms; null: the factor. */
  p99BoundMs: number | null;
  /** A ladder ends after this many windows in a row that were not sustained. */
  misses: number;
  out: string;
}

/** One offered rate of one mode. */
interface Row {
  mode: string;
  /** The round (1…--rounds) whose ladder the window belongs to. */
  round: number;
  offered: number;
  throughput: number;
  issued: number;
  completed: number;
  errors: number;
  weakP50: number;
  weakP99: number;
  paymentP50: number;
  paymentP99: number;
  /** Share of ops whose first answer was final (null: nothing speculated, as under SMR). */
  accuracy: number | null;
  executionRatio: number;
  cpuMsPerTx: number;
  saturated: string | null;
}

/** One ladder: a mode's rising rates in one round, on a fresh cluster. */
interface ModeResult {
  readonly mode: string;
  readonly round: number;
  readonly rows: Row[];
  readonly verdict: LadderVerdict;
  readonly consistency: string;
  readonly ok: boolean;
}

const USAGE =
  'npm run bench:tpcc [-- --replicas 3 --warehouses 1 --scale tiny|reduced --modes smr,bayou,creek:1,creek:2 --start 100 --factor 1.5 --steps 10 --seconds 5 --warmup 2 --weight today|paper|paper5|ROUNDS --rounds 3 --p99-factor 10 --p99-bound-ms MS --misses 2 --out bench-results]';

const label = (m: Mode): string =>
  m.kind === 'creek' ? `creek ${m.workers} worker${m.workers === 1 ? '' : 's'}` : m.kind;

const tty = process.stderr.isTTY === true;
function progress(line: string, transient = false): void {
  if (tty) process.stderr.write(`\r\x1b[2K${line}${transient ? '' : '\n'}`);
  else if (!transient) process.stderr.write(`${line}\n`);
}

function bar(done: number, total: number, width = 24): string {
  const n = Math.max(0, Math.min(width, Math.round((done / total) * width)));
  return `[${'#'.repeat(n)}${'-'.repeat(width - n)}]`;
}

/** The replicas' counters summed, to difference over a window. */
interface Counters {
  finalized: number;
  executionsOfFinalized: number;
  speculated: number;
  speculatedCorrectly: number;
  rollbacks: number;
  reorderingCommits: number;
  cpuMicros: number;
}

async function counters(cluster: LocalCluster): Promise<Counters> {
  const all = await cluster.statuses();
  const sum: Counters = {
    finalized: 0,
    executionsOfFinalized: 0,
    speculated: 0,
    speculatedCorrectly: 0,
    rollbacks: 0,
    reorderingCommits: 0,
    cpuMicros: 0,
  };
  for (const [i, s] of all.entries()) {
    if (s === null) throw new Error(`replica ${i} does not answer /status`);
    sum.finalized += s.metrics.finalized;
    sum.executionsOfFinalized += s.metrics.executionsOfFinalized;
    sum.speculated += s.metrics.speculated;
    sum.speculatedCorrectly += s.metrics.speculatedCorrectly;
    sum.rollbacks += s.metrics.rollbacks;
    sum.reorderingCommits += s.metrics.reorderingCommits;
    sum.cpuMicros += s.cpuMicros;
  }
  return sum;
}

/** The cluster of one mode, loaded, with its clients. */
class Bench {
  private next = 0;
  private constructor(
    readonly cluster: LocalCluster,
    readonly clients: CreekClient<TpccApp>[],
    readonly inputs: TpccInputs,
    readonly mode: Mode,
    readonly warehouses: number,
  ) {}

  static async start(mode: Mode, scale: Scale, flags: Flags): Promise<Bench> {
    const cluster = await LocalCluster.start({
      replicas: flags.replicas,
      app: APP_PATH,
      logLevel: 'error',
      workers: mode.kind === 'creek' ? mode.workers : 0,
      speculative: mode.kind !== 'smr',
    });
    const clients: CreekClient<TpccApp>[] = [];
    for (let c = 0; c < CONNECTIONS_PER_REPLICA; c++)
      for (let i = 0; i < cluster.size; i++) {
        // Its own replica first; the others for failover.
        const urls = [...cluster.urls.slice(i), ...cluster.urls.slice(0, i)];
        clients.push(connect<TpccApp>({ urls, token: cluster.token }));
      }
    const bench = new Bench(
      cluster,
      clients,
      new TpccInputs({ seed: INPUT_SEED, scale, loadSeed: LOAD_SEED, work: flags.weight.work }),
      mode,
      scale.warehouses,
    );
    await bench.load(scale);
    return bench;
  }

  /** The population, through strong `tpcc.load` ops, eight at a time; then the cluster settles. */
  private async load(scale: Scale): Promise<void> {
    const plan = loadPlan(scale, LOAD_SEED);
    let k = 0;
    const worker = async (client: CreekClient<TpccApp>): Promise<void> => {
      while (k < plan.length) {
        const chunk = plan[k++]!;
        await client.invokeStrong('tpcc.load', chunk, { timeoutMs: 60_000 });
        progress(`  loading ${bar(k, plan.length)} ${k}/${plan.length} chunks`, true);
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => worker(this.clients[i % this.clients.length]!)),
    );
    progress(`  loaded ${plan.length} chunks (${scale.warehouses} warehouse(s))`);
    await this.cluster.converged(120_000);
  }

  /**
   * Transactions at `rate` per second for `seconds`, open-loop; then the answers still due, for at
   * most DRAIN_MS.
   */
  async run(
    rate: number,
    seconds: number,
    title: string,
  ): Promise<
    Omit<Row, 'mode' | 'round' | 'accuracy' | 'executionRatio' | 'cpuMsPerTx'> & {
      windowMs: number;
    }
  > {
    const smr = this.mode.kind === 'smr';
    const weak: number[] = [];
    const payment: number[] = [];
    let issued = 0;
    let completed = 0;
    let inWindow = 0;
    let errors = 0;
    let firstError: string | null = null;
    let saturated: string | null = null;
    const total = Math.round(rate * seconds);
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    const issue = (at: number): void => {
      const t = this.inputs.nextTransaction();
      const client = this.clients[this.next++ % this.clients.length]!;
      const strong = smr || t.level === 'strong';
      const isPayment = t.op === 'tpcc.payment';
      // The SDK's typing is per op; here the op is data.
      const invoke = client.invoke.bind(client) as (
        op: string,
        args: unknown,
        o: { levels: ('weak' | 'strong')[]; timeoutMs: number },
      ) => Correctable<unknown>;
      const levels: ('weak' | 'strong')[] = smr
        ? ['strong']
        : strong
          ? ['weak', 'strong']
          : ['weak'];
      const done = (ok: boolean, reason?: string): void => {
        const now = performance.now();
        const latency = now - at;
        if (ok) {
          completed++;
          if (now <= end) inWindow++;
          (isPayment ? payment : weak).push(latency);
        } else {
          errors++;
          firstError ??= reason ?? 'error';
        }
      };
      invoke(t.op, t.args, { levels, timeoutMs: DRAIN_MS + seconds * 1000 }).setCallbacks({
        onFinal: () => done(true),
        onError: (e) =>
          // A New-Order with an unused item rolls back (TPC-C §2.4.2.3): an answer, not an error.
          e instanceof OperationFailed ? done(true) : done(false, `${e.name}: ${e.message}`),
      });
    };
    // Issue what is due every millisecond; latency counts from each transaction's scheduled time.
    await new Promise<void>((resolveRun) => {
      const tick = (): void => {
        const now = performance.now();
        // Transaction i is due at t0 + i / rate.
        const due = Math.min(total, Math.floor(((now - t0) / 1000) * rate) + 1);
        while (issued < due) {
          issue(t0 + (issued / rate) * 1000);
          issued++;
        }
        const backlog = issued - completed - errors;
        if (saturated === null && backlog > rate * BACKLOG_SECONDS)
          saturated = `a backlog of ${backlog} transactions`;
        progress(
          `  ${title} ${bar(now - t0, seconds * 1000)} ${issued} issued, ${completed} answered, ${backlog} waiting`,
          true,
        );
        if (issued >= total || saturated !== null) resolveRun();
        else setTimeout(tick, 1);
      };
      tick();
    });
    const windowMs = Math.max(performance.now(), end) - t0;
    const drainEnd = performance.now() + DRAIN_MS;
    while (completed + errors < issued && performance.now() < drainEnd)
      await new Promise((r) => setTimeout(r, 20));
    if (completed + errors < issued)
      saturated ??= `${issued - completed - errors} answers still missing ${DRAIN_MS / 1000} s after the window`;
    if (errors > 0) progress(`  ${errors} errors, e.g. ${firstError}`);
    weak.sort((a, b) => a - b);
    payment.sort((a, b) => a - b);
    const throughput = inWindow / (Math.min(windowMs, seconds * 1000) / 1000);
    if (saturated === null && throughput < SATURATED_SHARE * rate)
      saturated = `${Math.round((100 * throughput) / rate)} % of the offered rate completed`;
    return {
      offered: rate,
      throughput,
      issued,
      completed,
      errors,
      weakP50: quantileOfSorted(weak, 0.5),
      weakP99: quantileOfSorted(weak, 0.99),
      paymentP50: quantileOfSorted(payment, 0.5),
      paymentP99: quantileOfSorted(payment, 0.99),
      saturated,
      windowMs,
    };
  }

  /** The settled cluster: one state everywhere, and that state passes TPC-C's conditions. */
  async check(): Promise<{ ok: boolean; text: string }> {
    const statuses = await this.cluster.converged(300_000);
    const client = this.clients[0]!;
    const rows = await readState(
      (a) => client.invokeStrong('tpcc.rows', a, { timeoutMs: 60_000 }),
      (key) => client.invokeStrong('kv.get', { key }, { timeoutMs: 60_000 }),
      this.warehouses,
    );
    const violations = checkConsistency(rows);
    const digests = new Set(statuses.map((s: ReplicaStatus) => s.digest)).size;
    const ok = violations.length === 0 && digests === 1;
    const text = `${rows.size} rows, ${statuses[0]!.committed} ops committed; replicas ${digests === 1 ? 'hold the same state' : `hold ${digests} different states`}; TPC-C §3.3.2 conditions 1-10, 12: ${violations.length === 0 ? 'all hold' : `${violations.length} violations, e.g. (${violations[0]!.condition}) ${violations[0]!.message}`}`;
    return { ok, text };
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    await this.cluster.stop(2_000);
  }
}

/** How a ladder's windows are judged (sustained.ts); `keepUp` is the saturation rule's share. */
const rule = (flags: Flags) => ({
  p99Factor: flags.p99Factor,
  p99BoundMs: flags.p99BoundMs,
  keepUp: SATURATED_SHARE,
});

/**
 * One ladder of `mode` on a fresh cluster: rates rising by --factor from --start, until --steps
 * rates are done or --misses windows in a row were not sustained; then the consistency check.
 */
async function runMode(mode: Mode, scale: Scale, flags: Flags, round: number): Promise<ModeResult> {
  const name = label(mode);
  progress(`${name}, round ${round}/${flags.rounds}: starting ${flags.replicas} replicas`);
  const bench = await Bench.start(mode, scale, flags);
  try {
    if (flags.warmup > 0) await bench.run(flags.start, flags.warmup, `${name} warm-up`);
    await bench.cluster.converged(300_000);
    const rows: Row[] = [];
    let rate = flags.start;
    for (let step = 0; step < flags.steps; step++) {
      const before = await counters(bench.cluster);
      const r = await bench.run(rate, flags.seconds, `${name} at ${Math.round(rate)}/s`);
      // The window's ops settle (are finalized everywhere) before the counters are read again.
      await bench.cluster.converged(300_000);
      const after = await counters(bench.cluster);
      const speculated = after.speculated - before.speculated;
      const row: Row = {
        mode: name,
        round,
        ...r,
        accuracy:
          speculated === 0
            ? null
            : (after.speculatedCorrectly - before.speculatedCorrectly) / speculated,
        executionRatio:
          (after.executionsOfFinalized - before.executionsOfFinalized) /
          Math.max(1, after.finalized - before.finalized),
        cpuMsPerTx: (after.cpuMicros - before.cpuMicros) / 1000 / Math.max(1, r.completed),
      };
      rows.push(row);
      const { reasons } = sustainedThroughput(rows, rule(flags));
      progress(
        `  ${formatRow(row, reasons.at(-1)!)} (${after.rollbacks - before.rollbacks} rollbacks, ${after.reorderingCommits - before.reorderingCommits} reordering commits)`,
      );
      // The bounds come from the ladder so far, so earlier windows' verdicts may change.
      const last = reasons.slice(-flags.misses);
      if (last.length === flags.misses && last.every((x) => x !== null)) {
        progress(`  ${flags.misses} window(s) in a row not sustained: ${last.join('; ')}`);
        break;
      }
      rate *= flags.factor;
    }
    progress(`  ${name}: waiting for the cluster to settle, then checking TPC-C consistency`);
    const { ok, text } = await bench.check();
    progress(`  consistency: ${ok ? 'ok' : 'FAILED'}: ${text}`);
    return {
      mode: name,
      round,
      rows,
      verdict: sustainedThroughput(rows, rule(flags)),
      consistency: text,
      ok,
    };
  } finally {
    await bench.stop();
  }
}

const f0 = (x: number): string => (Number.isFinite(x) ? x.toFixed(0) : '-');
const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

const HEADER =
  '| mode | round | offered tx/s | tx/s | weak tentative p50 / p99 ms | Payment stable p50 / p99 ms | accuracy | execution ratio | replica CPU ms/tx | errors | sustained |\n|---|---|---|---|---|---|---|---|---|---|---|';

/** A window's line; `verdict`: null if it was sustained, else why not. */
function formatRow(r: Row, verdict: string | null): string {
  return `| ${r.mode} | ${r.round} | ${f0(r.offered)} | ${f0(r.throughput)} | ${f1(r.weakP50)} / ${f1(r.weakP99)} | ${f1(r.paymentP50)} / ${f1(r.paymentP99)} | ${r.accuracy === null ? '-' : `${(100 * r.accuracy).toFixed(1)} %`} | ${f2(r.executionRatio)} | ${f2(r.cpuMsPerTx)} | ${r.errors} | ${verdict === null ? 'yes' : `no: ${verdict}`} |`;
}

/**
 * Per mode: the median sustained throughput over the rounds with its spread and each round's
 * figure, against SMR's when SMR ran; and the highest window throughput at any latency.
 */
function summary(ladders: readonly ModeResult[], flags: Flags): string {
  const modes = [...new Set(ladders.map((l) => l.mode))];
  const of = (mode: string) => ladders.filter((l) => l.mode === mode);
  const smr = modes.includes('smr')
    ? acrossRounds(of('smr').map((l) => l.verdict.sustained))
    : null;
  const lines = modes.map((mode) => {
    const rounds = of(mode);
    const s = acrossRounds(rounds.map((l) => l.verdict.sustained));
    const each = rounds.map((l) =>
      l.verdict.sustained === null ? 'none' : f0(l.verdict.sustained),
    );
    const vs =
      smr === null || mode === 'smr' || !(smr.median > 0)
        ? ''
        : `, ${f2(s.median / smr.median)}× SMR's`;
    const peak = acrossRounds(rounds.map((l) => Math.max(0, ...l.rows.map((r) => r.throughput))));
    return `- ${mode}: **${f0(s.median)} tx/s** (${f0(s.min)}–${f0(s.max)}; rounds: ${each.join(', ')})${vs}; highest window at any latency ${f0(peak.median)} tx/s (median)`;
  });
  return `Sustained throughput, median of ${flags.rounds} round(s) (spread; each round): the throughput of the highest offered rate whose window had no errors, completed at least ${Math.round(100 * SATURATED_SHARE)} % of the rate, and kept weak and Payment p99 within ${flags.p99BoundMs === null ? `${flags.p99Factor}× the ladder's low-load p99` : `${flags.p99BoundMs} ms`} (bench/src/sustained.ts):\n${lines.join('\n')}`;
}

/** The ladder whose sustained throughput is its mode's median: the one the charts show. */
function medianLadders(ladders: readonly ModeResult[]): ModeResult[] {
  const modes = [...new Set(ladders.map((l) => l.mode))];
  return modes.map((mode) => {
    const rounds = ladders.filter((l) => l.mode === mode);
    const m = acrossRounds(rounds.map((l) => l.verdict.sustained)).median;
    return rounds.find((l) => (l.verdict.sustained ?? 0) === m) ?? rounds[0]!;
  });
}

function charts(results: readonly ModeResult[]): Chart[] {
  const series = (pick: (r: Row) => number | null, dashed = false, suffix = ''): Series[] =>
    results.map((m) => ({
      label: `${m.mode}${suffix}`,
      dashed,
      // In offered-rate order: past saturation the throughput falls back and the curve bends.
      inOrder: true,
      points: m.rows.map((r) => ({ x: r.throughput, y: pick(r) ?? NaN })),
    }));
  return [
    {
      title: 'Weak transactions: tentative latency (p50; SMR: its only, stable answer)',
      xLabel: 'throughput (tx/s)',
      yLabel: 'ms',
      yLog: true,
      series: series((r) => r.weakP50),
    },
    {
      title: 'Payment (strong): stable latency (p50)',
      xLabel: 'throughput (tx/s)',
      yLabel: 'ms',
      yLog: true,
      series: series((r) => r.paymentP50),
    },
    {
      title: 'Tail: weak tentative p99 (solid) and Payment stable p99 (dashed)',
      xLabel: 'throughput (tx/s)',
      yLabel: 'ms',
      yLog: true,
      series: [...series((r) => r.weakP99), ...series((r) => r.paymentP99, true, ' Payment')],
    },
    {
      title: 'Speculation accuracy',
      xLabel: 'throughput (tx/s)',
      yLabel: '% of first answers that were final',
      yRange: [0, 100],
      series: series((r) => (r.accuracy === null ? null : 100 * r.accuracy)),
    },
    {
      title: 'Execution ratio (executions per finalized op)',
      xLabel: 'throughput (tx/s)',
      yLabel: 'executions / op',
      series: series((r) => r.executionRatio),
    },
  ];
}

function parseMode(s: string, fail: (m: string) => never): Mode {
  if (s === 'smr' || s === 'bayou') return { kind: s };
  const m = /^creek:(\d+)$/.exec(s);
  const workers = m === null ? NaN : Number(m[1]);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    fail(`--modes: '${s}' is not a mode: smr, bayou or creek:N (N worker threads, 1 to 64)`);
  return { kind: 'creek', workers };
}

function parse(argv: readonly string[]): Flags {
  const f: Flags = {
    replicas: 3,
    warehouses: 1,
    scale: 'tiny',
    modes: [
      { kind: 'smr' },
      { kind: 'bayou' },
      { kind: 'creek', workers: 1 },
      { kind: 'creek', workers: Math.max(2, Math.min(4, availableParallelism())) },
    ],
    start: 100,
    factor: 1.5,
    steps: 10,
    seconds: 5,
    warmup: 2,
    weight: TODAY,
    rounds: 3,
    p99Factor: 10,
    p99BoundMs: null,
    misses: 2,
    out: 'bench-results',
  };
  const fail = (message: string): never => {
    console.error(`bench:tpcc: ${message}`);
    process.exit(2);
  };
  const flagName: Record<string, string> = { p99Factor: 'p99-factor', p99BoundMs: 'p99-bound-ms' };
  const names = Object.keys(f).map((k) => flagName[k] ?? k);
  const number = (name: string, raw: string, lo: number, hi: number, whole: boolean): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < lo || n > hi || (whole && !Number.isInteger(n)))
      fail(`--${name} must be a ${whole ? 'whole ' : ''}number from ${lo} to ${hi}, not '${raw}'`);
    return n;
  };
  for (const [name, value] of flagPairs(argv, USAGE, (n) => names.includes(n), fail)) {
    if (name === 'scale') {
      if (value !== 'tiny' && value !== 'reduced') fail('--scale must be tiny or reduced');
      f.scale = value as Flags['scale'];
    } else if (name === 'modes') f.modes = value.split(',').map((m) => parseMode(m.trim(), fail));
    else if (name === 'out') f.out = value;
    else if (name === 'weight') {
      const w = parseWeight(value);
      f.weight = typeof w === 'string' ? fail(w) : w;
    } else if (name === 'replicas') f.replicas = number(name, value, 1, 15, true);
    else if (name === 'warehouses') f.warehouses = number(name, value, 1, 100, true);
    else if (name === 'start') f.start = number(name, value, 1, 1_000_000, false);
    else if (name === 'factor') f.factor = number(name, value, 1.05, 10, false);
    else if (name === 'steps') f.steps = number(name, value, 1, 50, true);
    else if (name === 'seconds') f.seconds = number(name, value, 1, 600, false);
    else if (name === 'warmup') f.warmup = number(name, value, 0, 600, false);
    else if (name === 'rounds') f.rounds = number(name, value, 1, 50, true);
    else if (name === 'p99-factor') f.p99Factor = number(name, value, 1.1, 1000, false);
    else if (name === 'misses') f.misses = number(name, value, 1, 50, true);
    else if (name === 'p99-bound-ms') f.p99BoundMs = number(name, value, 1, 600_000, false);
  }
  return f;
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const scale = scaleOf(flags.scale === 'tiny' ? TINY : REDUCED, flags.warehouses);
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}`;
  const heading = `TPC-C, ${flags.warehouses} warehouse(s) at ${flags.scale} scale, ${flags.replicas} replicas on one machine (${machine}); weight ${flags.weight.name} (${flags.weight.work} rounds per transaction); open-loop, ${flags.seconds} s per rate; Payment strong, the rest weak (SMR: all strong)`;
  progress(`bench:tpcc: ${heading}`);
  const results: ModeResult[] = [];
  // Interleaved: every mode once per round, alternate rounds in reverse order, so a slow spell of
  // the machine falls on several modes rather than on all of one mode's ladders.
  for (let round = 1; round <= flags.rounds; round++) {
    const order = round % 2 === 1 ? flags.modes : [...flags.modes].reverse();
    for (const mode of order) results.push(await runMode(mode, scale, flags, round));
  }
  const table = [
    HEADER,
    ...results.flatMap((m) => m.rows.map((r, i) => formatRow(r, m.verdict.reasons[i]!))),
  ].join('\n');
  const checks = results
    .map((m) => `- ${m.mode}, round ${m.round}: ${m.ok ? 'ok' : 'FAILED'}: ${m.consistency}`)
    .join('\n');
  const text = `${heading}\n\n${table}\n\n${summary(results, flags)}\n\nConsistency after each ladder:\n${checks}\n`;
  // Stdout and the dated record in bench/results/; the charts and the JSON go to --out below.
  const record = recordResults('tpcc', 'markdown');
  record.print(`\n${text}`);
  record.save();
  const out = resolve(flags.out);
  mkdirSync(out, { recursive: true });
  const base = join(out, `tpcc-${flags.warehouses}w-${flags.replicas}r`);
  writeFileSync(`${base}.md`, text);
  writeFileSync(`${base}.json`, `${JSON.stringify({ heading, flags, results }, null, 1)}\n`);
  writeFileSync(
    `${base}.html`,
    htmlReport(`Creek TPC-C: ${flags.warehouses} warehouse(s), ${flags.replicas} replicas`, [
      {
        heading:
          'Figure 1: latency, accuracy and execution ratio against throughput (each mode: its median round)',
        text,
        charts: charts(medianLadders(results)),
      },
    ]),
  );
  progress(`bench:tpcc: wrote ${base}.md, ${base}.html and ${base}.json`);
  if (results.some((m) => !m.ok)) process.exit(1);
}

await main();
