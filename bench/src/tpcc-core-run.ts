/**
 * TPC-C driven through one replica's core in this process (no network, no disk): the population
 * is loaded through `tpcc.load` ops, then transactions of the standard mix (Payment strong, ordered
 * by an in-process sequencer; the rest weak) are kept `window` at a time in flight, each counted
 * done at its first answer. The executor is the inline one (`workers: 0`) or a pool of worker
 * threads. What bench:tpcc-scaling measures and bench:tpcc-profile profiles.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { App } from '@creek/app';
import {
  InlineExecutor,
  Replica,
  type ExecutionJob,
  type ExecutionResult,
  type Executor,
  type OpId,
  type Output,
} from '@creek/server';
import { WorkerPoolExecutor } from '@creek/server/node';
import tpcc from '../../packages/examples/src/tpcc/app.js';
import { checkConsistency } from '../../packages/examples/src/tpcc/consistency.js';
import { TpccInputs } from '../../packages/examples/src/tpcc/inputs.js';
import { loadPlan } from '../../packages/examples/src/tpcc/population.js';
import type { Scale } from '../../packages/examples/src/tpcc/scale.js';
import { processMinus, processTimes, threadTimesAvailable } from './thread-times.js';

const APP_PATH = fileURLToPath(new URL('../../packages/examples/src/tpcc/app.ts', import.meta.url));
const LOAD_SEED = 11;

export interface CoreRunOptions {
  readonly scale: Scale;
  /** 0: the inline executor; N: a pool of N worker threads. */
  readonly workers: number;
  readonly txns: number;
  readonly window: number;
  /** Rounds of extra work per transaction (the TPC-C app's weight.ts). */
  readonly work: number;
  /** Called once the population is loaded, before the timed transactions (a profiler starts). */
  readonly beforeTimed?: () => void | Promise<void>;
  /** Called right after the timed transactions. */
  readonly afterTimed?: () => void | Promise<void>;
}

export interface CoreMeasure {
  txPerSec: number;
  executionRatio: number;
  conflicts: number;
  staleReads: number;
  /** Executions of ordered ops in the timed part (each a job for the executor). */
  jobs: number;
  /**
   * The main thread's CPU time in the timed part per job, µs (Linux's per-thread scheduler
   * statistics); null where they are not exposed. It includes drawing the transactions' inputs
   * and answering weak reads, which the main thread does in both modes.
   */
  mainCpuPerJobUs: number | null;
  /**
   * CPU time of the process's other threads per job, µs (null where per-thread times are not
   * available): the workers, and V8's helpers (parallel and concurrent garbage collection, of the
   * workers' heaps too, and background compilation). On a machine with few cores they compete
   * with the main thread and the workers, so this is what the executor costs the machine beyond
   * the main thread.
   */
  otherCpuPerJobUs: number | null;
  /**
   * Inline executor only: the main thread's CPU time inside `execute` per job, µs (the job's
   * execution cost). The clock around `execute` is a wall clock, which on a busy machine also
   * counts time the thread waited for a CPU; the inline main thread never idles, so its share of
   * the timed wall time spent in `execute` is taken of its CPU time (the wall time itself where
   * per-thread CPU time is not available).
   */
  executePerJobUs: number | null;
  /**
   * The TPC-C consistency conditions (§3.3.2, 1–10 and 12) violated by the replica's state once
   * every transaction is executed and valid: their count and the first one's message.
   */
  violations: { count: number; first: string | null };
}

/** The inline executor, timed: how long its jobs take, on the thread that runs them. */
class TimedInline implements Executor {
  private readonly inner: InlineExecutor;
  micros = 0;
  constructor(app: App) {
    this.inner = new InlineExecutor(app);
  }
  execute(job: ExecutionJob): ExecutionResult {
    const t = performance.now();
    const r = this.inner.execute(job);
    this.micros += (performance.now() - t) * 1000;
    return r;
  }
}

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

/** One configuration: loads a fresh replica, runs `txns` transactions through it, measures. */
export async function measureCore(o: CoreRunOptions): Promise<CoreMeasure> {
  let core: Core | null = null;
  const pool =
    o.workers === 0
      ? null
      : await WorkerPoolExecutor.start({
          appPath: APP_PATH,
          app: tpcc,
          workers: o.workers,
          onResult: (r) => core!.executed(r),
          onWorkerLost: (e) => {
            throw e;
          },
        });
  try {
    const slots = pool === null ? 1 : o.workers * pool.pipeline;
    const inline = pool === null ? new TimedInline(tpcc) : null;
    core = new Core(tpcc, pool ?? inline!, slots, pool);
    let clock = 1_700_000_000_000;
    let tag = 0;
    let inflight = 0;
    let done = 0;
    /** Wakes the driver waiting for an answer (see `answered`). */
    let wake: (() => void) | null = null;
    core.onFirstAnswer = () => {
      inflight--;
      done++;
      const w = wake;
      wake = null;
      w?.();
    };
    /**
     * Until the next answer. With workers, answers come with their results (message events), so
     * the driver sleeps until one does rather than polling the event loop: a poll by `setImmediate`
     * kept the main thread spinning while it waited for a worker, and that spinning counted in its
     * CPU time per job. The timer only bounds the wait, so a lost wake-up cannot hang the run.
     */
    const answered = (): Promise<void> =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          wake = null;
          resolve();
        }, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const drive = async (
      total: number,
      next: () => { op: string; args: unknown; strong: boolean },
    ): Promise<void> => {
      const target = done + total;
      let issued = 0;
      while (done < target) {
        while (inflight < o.window && issued < total) {
          const t = next();
          issued++;
          inflight++;
          clock += 0.01;
          core!.handle(core!.replica.invoke(clock, { ...t, tag: ++tag }));
        }
        if (done >= target) break;
        // Inline, every answer comes within `handle`, and a turn of the loop is all it waits for.
        if (pool === null) await new Promise((r) => setImmediate(r));
        else await answered();
      }
    };
    const plan = loadPlan(o.scale, LOAD_SEED);
    let k = 0;
    await drive(plan.length, () => ({ op: 'tpcc.load', args: plan[k++]!, strong: false }));
    const inputs = new TpccInputs({ seed: 5, scale: o.scale, loadSeed: LOAD_SEED, work: o.work });
    await o.beforeTimed?.();
    const m0 = { ...core.replica.metrics };
    const exec0 = inline?.micros ?? 0;
    const threads = threadTimesAvailable();
    const times0 = threads ? processTimes(process.pid) : null;
    const t0 = performance.now();
    await drive(o.txns, () => {
      const t = inputs.nextTransaction();
      return { op: t.op, args: t.args, strong: t.level === 'strong' };
    });
    const seconds = (performance.now() - t0) / 1000;
    const times = times0 === null ? null : processMinus(processTimes(process.pid), times0);
    const cpu = times === null ? null : times.main.runUs;
    await o.afterTimed?.();
    const m = { ...core.replica.metrics };
    // A strong op's first answer comes once the frontier has validated every op before it, so
    // after it the latest versions are the serial execution of the order: check that state.
    await drive(1, () => ({
      op: 'tpcc.rows',
      args: { prefix: 'tpcc/w/', limit: 1 },
      strong: true,
    }));
    const violations = checkConsistency(core.replica.state());
    const jobs = m.executions - m0.executions;
    return {
      txPerSec: o.txns / seconds,
      executionRatio:
        (m.executionsOfFinalized - m0.executionsOfFinalized) /
        Math.max(1, m.finalized - m0.finalized),
      conflicts: m.aheadConflicts - m0.aheadConflicts,
      staleReads: pool?.staleReads ?? 0,
      jobs,
      mainCpuPerJobUs: cpu === null ? null : cpu / Math.max(1, jobs),
      otherCpuPerJobUs: times === null ? null : times.others.runUs / Math.max(1, jobs),
      executePerJobUs:
        inline === null
          ? null
          : (cpu === null
              ? inline.micros - exec0
              : cpu * Math.min(1, (inline.micros - exec0) / (seconds * 1e6))) / Math.max(1, jobs),
      violations: {
        count: violations.length,
        first:
          violations[0] === undefined
            ? null
            : `(${violations[0].condition}) ${violations[0].message}`,
      },
    };
  } finally {
    await pool?.close();
  }
}
