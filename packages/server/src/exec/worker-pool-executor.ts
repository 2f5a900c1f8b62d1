import { Worker } from 'node:worker_threads';
import { adoptFrozenJson, type App, type JsonValue } from '@creek/app';
import type { Entry, Version } from '@creek/replica/core/entry.js';
import { opKey } from '@creek/replica/core/op-id.js';
import type { RecordingSnapshot } from '@creek/replica/core/snapshot.js';
import type { ExecutionJob, ExecutionResult, Outcome, Write } from '@creek/replica/core/types.js';
import type { StoreObserver, VersionStore } from '@creek/replica/core/version-store.js';
import type { Executor } from '@creek/replica/exec/executor.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { MirrorFeed } from '@creek/replica/exec/mirror-feed.js';
import type { WorkerReply } from '@creek/replica/exec/mirror-messages.js';
import { WorkerPayoff, type WorkerChoice } from './worker-choice.js';

export interface WorkerPoolOptions {
  /** The app's module, loaded by every worker as `creek start --app` loads it. */
  readonly appPath: string | undefined;
  /** The same app, loaded on the main thread: jobs that must read the exact snapshot run here. */
  readonly app: App;
  readonly workers: number;
  /**
   * Jobs a worker may hold at once (default PIPELINE): it runs them one after the other, so the
   * message round trip of one overlaps the execution of the others.
   */
  readonly pipeline?: number;
  /** A deferred job finished: hand it to the host (a `{ kind: 'executed' }` step). */
  readonly onResult: (result: ExecutionResult) => void;
  /**
   * A worker failed (it threw outside an op, or exited): its job, and every job once no worker is
   * left, runs on the main thread instead. For the log.
   */
  readonly onWorkerLost: (error: Error) => void;
  /**
   * `--workers auto` (worker-choice.ts): measure the first `window` worker jobs and turn the
   * workers off for good if handing a job over costs the main thread as much as running it;
   * `why` says how many workers were started and why. Absent: the workers stay on.
   */
  readonly auto?: {
    readonly window?: number;
    readonly why: string;
    /** What judges the measurements (default: a WorkerPayoff of `window` jobs); tests give one. */
    readonly payoff?: WorkerPayoff;
  };
  /** Told when `auto` turned the workers off (for the log). */
  readonly onWorkersOff?: (reason: string) => void;
}

interface Slot {
  readonly worker: Worker;
  /** Its log in the feed: the store's changes since its last job, sent with its next one. */
  readonly index: number;
  /** Jobs sent and not answered yet. */
  inflight: number;
  lost: boolean;
}

/**
 * Default jobs per worker at once. One at a time left each worker idle for a round trip per job
 * (about 0.8 ms of a TPC-C job's 1 ms here); a few queued hide it.
 */
export const PIPELINE = 4;

/**
 * Concurrent execution on worker threads (Creek §4.4). The core starts entries beyond the
 * validation frontier while earlier ones run (ReplicaOptions.executionSlots); this executor runs
 * each first execution of an ordered op on a pool of workers, each reading its own mirror of the
 * version store (mirror-store.ts), and runs the rest inline, on the exact snapshot: a
 * re-execution after a conflict or a reorder, a weak read. A worker's result counts only once the
 * core has validated what it read, and a retry never depends on a mirror, so the frontier always
 * advances. (The frontier's first execution goes to a worker too: the main thread stays free for
 * the network, ordering and validation, and ops that arrive meanwhile start beside it.)
 *
 * Why mirrors: `tx.get` is synchronous, and a worker that asks the main thread for each read
 * (SharedArrayBuffer + Atomics.wait) pays about 59 µs per read here against 3 µs for the read
 * itself (`npm run bench:sync-read`). A mirror costs memory (each worker holds the store's
 * versions) and one structured clone of every change per worker, batched with its next job (a
 * worker's own results go back to it without their values: MirrorFeed.installed).
 *
 * It must also be the replica's store observer (`ReplicaOptions.storeObserver`): the changes it
 * hears are what it sends the mirrors.
 */
export class WorkerPoolExecutor implements Executor, StoreObserver {
  private readonly slots: Slot[] = [];
  private readonly inline: InlineExecutor;
  private readonly waiting: ExecutionJob[] = [];
  /** Jobs on workers, with how many stores the feed had been attached when each was sent. */
  private readonly running = new Map<number, { job: ExecutionJob; slot: Slot; resets: number }>();
  private readonly feed: MirrorFeed;
  /** Jobs per worker at once (WorkerPoolOptions.pipeline). */
  readonly pipeline: number;
  private closed = false;
  /** Jobs sent to workers. */
  dispatched = 0;
  /** The hand-off and execution cost of each worker job (both modes; only `auto` acts on it). */
  private readonly payoff: WorkerPayoff;
  /** Why the workers were turned off (`auto` found they do not pay); null while they are on. */
  private off: string | null = null;
  /** When each job in flight was sent, and the main thread's µs spent sending it. */
  private readonly sendCost = new Map<number, number>();

  private constructor(private readonly options: WorkerPoolOptions) {
    this.inline = new InlineExecutor(options.app);
    this.feed = new MirrorFeed(options.workers);
    this.pipeline = options.pipeline ?? PIPELINE;
    this.payoff = options.auto?.payoff ?? new WorkerPayoff(options.auto?.window);
  }

  /** What was chosen, and what the measurements say (`/status` execution.workerChoice). */
  choice(): WorkerChoice {
    const auto = this.options.auto;
    const verdict = this.payoff.decided;
    const reason =
      this.off ??
      (auto === undefined
        ? `--workers ${this.options.workers}`
        : verdict === null
          ? `${auto.why}; measuring the first ${this.payoff.measuredJobs} of the jobs that decide whether they pay`
          : `${auto.why}; ${verdict.reason}`);
    return {
      mode: auto === undefined ? 'fixed' : 'auto',
      workers: this.options.workers,
      active: this.off === null && !this.slots.every((s) => s.lost),
      reason,
      measuredJobs: this.payoff.measuredJobs,
      handoffMicros: this.payoff.handoffMicros,
      jobMicros: this.payoff.jobMicros,
    };
  }

  /** Reads from a mirror that named a version the store no longer had. */
  get staleReads(): number {
    return this.feed.staleReads;
  }

  /** Starts the workers; resolves once each has loaded the app, rejects if one cannot. */
  static async start(options: WorkerPoolOptions): Promise<WorkerPoolExecutor> {
    if (!Number.isInteger(options.workers) || options.workers < 1)
      throw new Error('workers must be a positive integer');
    const pool = new WorkerPoolExecutor(options);
    // Built, this module sits beside execution-worker.js. Run from its TypeScript source (tests,
    // tsx scripts), the worker is still the built one: workers do not inherit a TypeScript loader.
    const url = import.meta.url.endsWith('.ts')
      ? new URL('../../dist/exec/execution-worker.js', import.meta.url)
      : new URL('./execution-worker.js', import.meta.url);
    await Promise.all(
      Array.from({ length: options.workers }, async () => {
        // No inherited Node flags: a worker runs built JavaScript only, and a flag such as
        // --conditions=creek-source (the repository's test and script runs) would make it import
        // TypeScript sources it cannot load.
        const worker = new Worker(url, { workerData: { appPath: options.appPath }, execArgv: [] });
        const slot: Slot = { worker, index: pool.slots.length, inflight: 0, lost: false };
        pool.slots.push(slot);
        await new Promise<void>((resolve, reject) => {
          const first = (m: WorkerReply): void => {
            if (m.t === 'ready') resolve();
            else if (m.t === 'failed') reject(new Error(`execution worker: ${m.error}`));
          };
          worker.once('message', first);
          worker.once('error', reject);
        });
        worker.on('message', (m: WorkerReply) => pool.onReply(slot, m));
        worker.on('error', (err) => pool.lose(slot, err));
        worker.on('exit', (code) =>
          pool.lose(slot, new Error(`execution worker exited with status ${code}`)),
        );
      }),
    ).catch(async (err: unknown) => {
      await pool.close();
      throw err;
    });
    return pool;
  }

  attach(store: VersionStore): void {
    this.feed.attach(store);
  }

  execute(job: ExecutionJob): ExecutionResult | undefined {
    if (job.retry === true || job.rank === undefined) return this.inline.execute(job);
    if (this.off !== null || this.slots.every((s) => s.lost)) return this.inline.execute(job);
    let slot: Slot | undefined;
    for (const s of this.slots)
      if (
        !s.lost &&
        s.inflight < this.pipeline &&
        (slot === undefined || s.inflight < slot.inflight)
      )
        slot = s;
    if (slot === undefined) this.waiting.push(job);
    else this.dispatch(slot, job);
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  // ---------------------------------------------------------------- the store's changes

  /** Once the workers are off and every job sent has come back, no mirror needs the changes. */
  private get feeding(): boolean {
    return this.off === null || this.running.size > 0;
  }

  installed(written: readonly Version[]): void {
    if (this.feeding) this.feed.installed(written);
  }

  removed(written: readonly Version[]): void {
    if (this.feeding) this.feed.removed(written);
  }

  finalized(written: readonly Version[]): void {
    if (this.feeding) this.feed.finalized(written);
  }

  committed(entries: readonly Entry[]): void {
    if (this.feeding) this.feed.committed(entries);
  }

  // ---------------------------------------------------------------- jobs

  private dispatch(slot: Slot, job: ExecutionJob): void {
    const started = performance.now();
    slot.inflight++;
    this.running.set(job.jobId, { job, slot, resets: this.feed.resets });
    this.dispatched++;
    slot.worker.postMessage({
      updates: this.feed.take(slot.index),
      job: {
        jobId: job.jobId,
        op: job.op,
        args: job.args,
        ts: job.ts,
        id: job.id,
        rank: job.rank,
        ...(job.session === undefined ? {} : { session: job.session }),
        ...(job.user === undefined ? {} : { user: job.user }),
      },
    });
    this.sendCost.set(job.jobId, (performance.now() - started) * 1000);
  }

  private onReply(slot: Slot, m: WorkerReply): void {
    if (m.t !== 'done') return;
    const run = this.running.get(m.jobId);
    if (run === undefined) return;
    const started = performance.now();
    this.running.delete(m.jobId);
    slot.inflight--;
    const next = this.off === null ? this.waiting.shift() : undefined;
    if (next !== undefined) this.dispatch(slot, next);
    // What the worker read, as the versions of the core's store, so the core validates them as
    // it validates any execution.
    const reads = (run.job.snapshot as RecordingSnapshot).reads;
    for (const trace of m.reads) reads.push(this.feed.resolve(trace));
    const writes: Write[] = m.writes.map(([key, value]) => [
      key,
      value === undefined ? undefined : adoptFrozenJson(value),
    ]);
    const outcome: Outcome = m.outcome.ok
      ? { ok: true, value: adoptFrozenJson(m.outcome.value as JsonValue) }
      : m.outcome;
    const sent = this.sendCost.get(m.jobId) ?? 0;
    this.sendCost.delete(m.jobId);
    this.measured(sent + (performance.now() - started) * 1000, m.micros ?? 0);
    if (this.off !== null && slot.inflight === 0) this.retire(slot);
    if (run.job.id !== null)
      this.feed.ownResult(
        slot.index,
        m.jobId,
        opKey(run.job.id),
        writes.map(([key]) => key),
        run.resets,
      );
    this.options.onResult({
      jobId: m.jobId,
      writes,
      outcome,
      ...(m.pairHashes?.length === writes.length * 4 ? { pairHashes: m.pairHashes } : {}),
    });
    this.feed.ownResultDone();
  }

  /** A worker no longer needed (the workers are off): it goes, without counting as lost. */
  private retire(slot: Slot): void {
    if (slot.lost) return;
    slot.lost = true;
    void slot.worker.terminate();
  }

  /** One worker job's costs; under `auto`, the workers go off for good once they do not pay. */
  private measured(handoffMicros: number, jobMicros: number): void {
    const before = this.payoff.decided;
    this.payoff.record(handoffMicros, jobMicros);
    const verdict = this.payoff.decided;
    if (this.options.auto === undefined || before !== null || verdict === null || verdict.pays)
      return;
    this.off = `${this.options.auto.why}; ${verdict.reason}, so its ops run inline from now on`;
    this.options.onWorkersOff?.(this.off);
    // The jobs sent run to their end (their results still count); the rest, and every later
    // one, run inline. Each worker goes once it has answered its last.
    for (const s of this.slots) if (s.inflight === 0) this.retire(s);
    for (const job of this.waiting.splice(0)) this.options.onResult(this.inline.execute(job));
  }

  /** A worker is gone: its job, and the waiting ones if no worker is left, run here instead. */
  private lose(slot: Slot, err: Error): void {
    if (this.closed || slot.lost) return;
    slot.lost = true;
    this.options.onWorkerLost(err);
    const orphans: ExecutionJob[] = [];
    for (const [jobId, run] of this.running)
      if (run.slot === slot) {
        this.running.delete(jobId);
        orphans.push(run.job);
      }
    if (this.slots.every((s) => s.lost)) orphans.push(...this.waiting.splice(0));
    // Inline, on the exact snapshot (the job's own RecordingSnapshot records the reads).
    for (const job of orphans) this.options.onResult(this.inline.execute(job));
  }
}
