/**
 * TPC-C executions per second through one replica's core: the inline executor (one execution at a
 * time, on the main thread) against the worker-thread executor with 1…N workers, at each
 * contention level (1, 5 and 20 warehouses by default). Creek §4.4 ("concurrent execution").
 *
 *   npm run bench:tpcc-scaling [-- --warehouses 1,5,20 --workers 1,2 --txns 4000 --window 32
 *                                  --scale tiny|reduced --rounds 3]
 *
 * One Replica (no network, no disk): the population is loaded through `tpcc.load` ops, then
 * `--txns` transactions of the standard mix (Payment strong, ordered by an in-process sequencer;
 * the rest weak) are kept `--window` at a time in flight, each counted done at its first answer.
 * Per configuration: transactions per second, the execution ratio (executions per finalized op),
 * conflicts of executions started beside earlier ones, and mirror reads found stale. Rounds
 * alternate the order of the modes; medians are printed. Progress on stderr, the table on stdout.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { App } from '@creek/app';
import {
  InlineExecutor,
  Replica,
  type ExecutionResult,
  type Executor,
  type OpId,
  type Output,
} from '@creek/server';
import { WorkerPoolExecutor } from '@creek/server/node';
import tpcc from '../../packages/examples/src/tpcc/app.js';
import { TpccInputs } from '../../packages/examples/src/tpcc/inputs.js';
import { loadPlan } from '../../packages/examples/src/tpcc/population.js';
import { REDUCED, scaleOf, TINY, type Scale } from '../../packages/examples/src/tpcc/scale.js';
import { flagPairs } from './cli-flags.js';
import { median } from './stats.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('tpcc-scaling', 'markdown');

const APP_PATH = fileURLToPath(new URL('../../packages/examples/src/tpcc/app.ts', import.meta.url));
const LOAD_SEED = 11;

interface Flags {
  warehouses: number[];
  workers: number[];
  txns: number;
  window: number;
  scale: 'tiny' | 'reduced';
  rounds: number;
}
const USAGE =
  'npm run bench:tpcc-scaling [-- --warehouses 1,5,20 --workers 1,2 --txns 4000 --window 32 --scale tiny|reduced --rounds 3]';

interface Measure {
  txPerSec: number;
  executionRatio: number;
  conflicts: number;
  staleReads: number;
}

const progress = (line: string): void => void process.stderr.write(`bench:tpcc-scaling: ${line}\n`);

/** One replica driven in-process: strong ops decided at once, in cast order. */
class Core {
  readonly replica: Replica;
  private readonly decided: OpId[] = [];
  private delivered = 0;
  private answered = new Set<number>();
  onFirstAnswer: () => void = () => undefined;

  constructor(
    app: App,
    private readonly executor: Executor,
    slots: number,
    pool: WorkerPoolExecutor | null,
  ) {
    this.replica = new Replica({
      id: 0,
      app,
      noopIntervalMs: 1e12,
      executionSlots: slots,
      ...(pool === null ? {} : { storeObserver: pool }),
    });
  }

  handle(out: Output[]): void {
    for (let i = 0; ; i++) {
      if (i === out.length) {
        const id = this.decided[this.delivered];
        if (id === undefined || !this.replica.checkDep(id)) break;
        this.delivered++;
        out.push(...this.replica.deliverStrong(id));
        if (i === out.length) continue;
      }
      const o = out[i]!;
      if (o.type === 'execute') {
        const r = this.executor.execute(o.job);
        if (r !== undefined) out.push(...this.replica.executed(r));
      } else if (o.type === 'cabCast') this.decided.push(o.id);
      else if (o.type === 'respond' && !this.answered.has(o.tag)) {
        this.answered.add(o.tag);
        this.onFirstAnswer();
      }
    }
  }

  executed(r: ExecutionResult): void {
    this.handle(this.replica.executed(r));
  }
}

async function measure(scale: Scale, workers: number, flags: Flags): Promise<Measure> {
  let core: Core | null = null;
  const pool =
    workers === 0
      ? null
      : await WorkerPoolExecutor.start({
          appPath: APP_PATH,
          app: tpcc,
          workers,
          onResult: (r) => core!.executed(r),
          onWorkerLost: (e) => {
            throw e;
          },
        });
  try {
    const slots = pool === null ? 1 : workers * pool.pipeline;
    core = new Core(tpcc, pool ?? new InlineExecutor(tpcc), slots, pool);
    let clock = 1_700_000_000_000;
    let tag = 0;
    let inflight = 0;
    let done = 0;
    core.onFirstAnswer = () => {
      inflight--;
      done++;
    };
    const drive = async (
      total: number,
      next: () => { op: string; args: unknown; strong: boolean },
    ): Promise<void> => {
      const target = done + total;
      let issued = 0;
      while (done < target) {
        while (inflight < flags.window && issued < total) {
          const t = next();
          issued++;
          inflight++;
          clock += 0.01;
          core!.handle(core!.replica.invoke(clock, { ...t, tag: ++tag }));
        }
        if (done < target) await new Promise((r) => setImmediate(r));
      }
    };
    const plan = loadPlan(scale, LOAD_SEED);
    let k = 0;
    await drive(plan.length, () => ({ op: 'tpcc.load', args: plan[k++]!, strong: false }));
    const inputs = new TpccInputs({ seed: 5, scale, loadSeed: LOAD_SEED });
    const m0 = { ...core.replica.metrics };
    const t0 = performance.now();
    await drive(flags.txns, () => {
      const t = inputs.nextTransaction();
      return { op: t.op, args: t.args, strong: t.level === 'strong' };
    });
    const seconds = (performance.now() - t0) / 1000;
    const m = core.replica.metrics;
    return {
      txPerSec: flags.txns / seconds,
      executionRatio:
        (m.executionsOfFinalized - m0.executionsOfFinalized) /
        Math.max(1, m.finalized - m0.finalized),
      conflicts: m.aheadConflicts - m0.aheadConflicts,
      staleReads: pool?.staleReads ?? 0,
    };
  } finally {
    await pool?.close();
  }
}

function parse(argv: readonly string[]): Flags {
  const f: Flags = {
    warehouses: [1, 5, 20],
    workers: [1, Math.min(2, availableParallelism())],
    txns: 4000,
    window: 32,
    scale: 'tiny',
    rounds: 3,
  };
  const fail = (message: string): never => {
    console.error(`bench:tpcc-scaling: ${message}`);
    process.exit(2);
  };
  const names = ['warehouses', 'workers', 'txns', 'window', 'scale', 'rounds'];
  for (const [name, value] of flagPairs(argv, USAGE, (n) => names.includes(n), fail)) {
    if (name === 'scale') {
      if (value !== 'tiny' && value !== 'reduced') fail('--scale must be tiny or reduced');
      f.scale = value as Flags['scale'];
      continue;
    }
    const list = value.split(',').map(Number);
    const max = name === 'txns' ? 10_000_000 : name === 'warehouses' ? 100 : 64;
    if (list.some((n) => !Number.isInteger(n) || n < 1 || n > max))
      fail(`--${name} must be whole numbers from 1 to ${max}, comma-separated where a list`);
    if (name === 'warehouses') f.warehouses = list;
    else if (name === 'workers') f.workers = [...new Set(list)].sort((a, b) => a - b);
    else f[name as 'txns' | 'window' | 'rounds'] = list[0]!;
  }
  return f;
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const modes = [0, ...flags.workers];
  const label = (w: number): string => (w === 0 ? 'inline' : `${w} worker${w > 1 ? 's' : ''}`);
  const rows: string[] = [];
  for (const w of flags.warehouses) {
    const scale = scaleOf(flags.scale === 'tiny' ? TINY : REDUCED, w);
    const results = new Map<number, Measure[]>(modes.map((m) => [m, []]));
    for (let round = 1; round <= flags.rounds; round++) {
      const order = round % 2 === 1 ? modes : [...modes].reverse();
      for (const mode of order) {
        const r = await measure(scale, mode, flags);
        results.get(mode)!.push(r);
        progress(
          `${w} warehouse(s), round ${round}/${flags.rounds}, ${label(mode)}: ${r.txPerSec.toFixed(0)} tx/s, execution ratio ${r.executionRatio.toFixed(2)}, ${r.conflicts} conflicts, ${r.staleReads} stale mirror reads`,
        );
      }
    }
    const inline = median(results.get(0)!.map((r) => r.txPerSec));
    for (const mode of modes) {
      const rs = results.get(mode)!;
      const tx = median(rs.map((r) => r.txPerSec));
      rows.push(
        `| ${w} | ${label(mode)} | ${tx.toFixed(0)} | ${(tx / inline).toFixed(2)}× | ${median(rs.map((r) => r.executionRatio)).toFixed(2)} | ${median(rs.map((r) => r.conflicts))} | ${median(rs.map((r) => r.staleReads))} |`,
      );
    }
  }
  out.print(
    `TPC-C through one replica's core (${flags.scale} scale, ${flags.txns} transactions, ${flags.window} in flight, medians of ${flags.rounds} rounds, ${availableParallelism()} cores)`,
  );
  out.print(
    '| warehouses | executor | tx/s | vs inline | execution ratio | conflicts | stale mirror reads |',
  );
  out.print('|---|---|---|---|---|---|---|');
  for (const row of rows) out.print(row);
  out.save();
}

await main();
