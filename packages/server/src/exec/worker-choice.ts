/**
 * `creek start --workers auto`: how many execution workers a replica starts with, and whether they
 * pay for themselves on its workload.
 *
 * A worker runs an op's first execution off the main thread, but the main thread still pays for
 * the hand-off: the job's message, the store changes fed to the worker's mirror, and the reply's
 * reads, writes and result (the profile in bench/results/2026-11-29-worker-profile.md). When that
 * costs the main thread as much as running the job itself, the worker only adds work to the thread
 * that orders, validates and answers, and the replica is better off executing inline. So the pool
 * measures both, per job, over its first jobs, and turns its workers off when the hand-off does not
 * pay; the choice and its figures are in `/status` (`execution.workerChoice`).
 *
 * The hand-off measured is the JavaScript the main thread runs for a job (sending it, and taking
 * its reply up to the result): a lower bound, since the native part of receiving a message is not
 * seen. The job's cost is its execution on the worker, which is what it would cost inline.
 */

/** The most workers `auto` starts: beyond this the main thread is the ceiling (48's figures). */
export const MAX_AUTO_WORKERS = 8;

/** Worker jobs measured before the pool decides whether its workers pay. */
export const AUTO_WINDOW_JOBS = 1_000;

/** How many workers `auto` starts with `cores` cores: one per core beside the main thread's. */
export function workersForCores(cores: number): { workers: number; why: string } {
  if (cores <= 1) return { workers: 0, why: 'one core: no core is free for a worker' };
  const workers = Math.min(cores - 1, MAX_AUTO_WORKERS);
  return {
    workers,
    why: `${cores} cores: ${workers} worker${workers === 1 ? '' : 's'} beside the main thread${cores - 1 > MAX_AUTO_WORKERS ? ` (at most ${MAX_AUTO_WORKERS})` : ''}`,
  };
}

/** What `/status` says of the choice. */
export interface WorkerChoice {
  /** `auto`, or `fixed` (a number given to --workers). */
  readonly mode: 'auto' | 'fixed';
  /** Workers started. */
  readonly workers: number;
  /** Whether ops go to the workers now (false once `auto` found they do not pay). */
  readonly active: boolean;
  readonly reason: string;
  /** Worker jobs measured so far, and their mean costs in µs (null before the first). */
  readonly measuredJobs: number;
  readonly handoffMicros: number | null;
  readonly jobMicros: number | null;
}

/**
 * The measurements of one pool: the main thread's hand-off time and the worker's execution time
 * of each job, and, once `window` jobs are in, the verdict.
 */
export class WorkerPayoff {
  private jobs = 0;
  private handoff = 0;
  private execution = 0;
  private verdict: { readonly pays: boolean; readonly reason: string } | null = null;

  constructor(private readonly window = AUTO_WINDOW_JOBS) {
    if (!Number.isInteger(window) || window < 1)
      throw new Error('window must be a positive integer');
  }

  /** One job done: µs of main-thread hand-off, µs of execution on the worker. */
  record(handoffMicros: number, jobMicros: number): void {
    this.jobs++;
    this.handoff += handoffMicros;
    this.execution += jobMicros;
    if (this.verdict === null && this.jobs >= this.window) this.verdict = this.judge();
  }

  /** The verdict once `window` jobs were measured; null before. */
  get decided(): { readonly pays: boolean; readonly reason: string } | null {
    return this.verdict;
  }

  get measuredJobs(): number {
    return this.jobs;
  }

  get handoffMicros(): number | null {
    return this.jobs === 0 ? null : this.handoff / this.jobs;
  }

  get jobMicros(): number | null {
    return this.jobs === 0 ? null : this.execution / this.jobs;
  }

  private judge(): { readonly pays: boolean; readonly reason: string } {
    const handoff = this.handoff / this.jobs;
    const job = this.execution / this.jobs;
    const figures = `over ${this.jobs} jobs the main thread spent ${handoff.toFixed(1)} µs handing each to a worker, which ran it in ${job.toFixed(1)} µs`;
    return handoff >= job
      ? { pays: false, reason: `${figures}: executing inline costs the main thread less` }
      : {
          pays: true,
          reason: `${figures}: the workers take more off the main thread than they cost it`,
        };
  }
}
