/**
 * bench:latency's measurement: a closed loop of ops on one connection, measured after a warm-up,
 * and the summary (mean, p50, p99, ops/s) of what it took.
 */
import { performance } from 'node:perf_hooks';
import type { CpuWindow } from '../cpu-time.js';
import { quantileOfSorted } from '../stats.js';
import { failRun, type Conn, type Done, type Kind } from './connection.js';

/** How long ops still in flight when a cell ends may take to answer before the run fails. */
const DRAIN_TIMEOUT_MS = 30_000;

export interface Result {
  /** Latencies (ms) of ops completed in the measured part. */
  readonly lat: Float64Array;
  /** For strong ops: invoke → first tentative view (ms), same ops. */
  readonly tentative: Float64Array;
  readonly completed: number;
  readonly errors: number;
  readonly seconds: number;
}

/** Discard `warmupSeconds`, then measure `ops` completions or `seconds`. */
export type Stop = { warmupSeconds: number } & ({ ops: number } | { seconds: number });

/** A closed loop: `outstanding` ops in flight; each completion issues the next. */
export function closedLoop(
  conn: Conn,
  kind: Kind,
  outstanding: number,
  stop: Stop,
  /** Started and stopped with the measured window. */
  cpu?: CpuWindow,
): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    const lat: number[] = [];
    const tentative: number[] = [];
    let errors = 0;
    let completed = 0; // counted completions
    let measuring = false;
    let issuing = true;
    let windowStart = 0;
    let windowEnd = 0;
    let drainTimer: NodeJS.Timeout | null = null;
    const timers: NodeJS.Timeout[] = [];
    conn.onFail = reject;

    const finish = (): void => {
      for (const t of timers) clearTimeout(t);
      if (drainTimer !== null) clearTimeout(drainTimer);
      resolve({
        lat: Float64Array.from(lat),
        tentative: Float64Array.from(tentative),
        completed,
        errors,
        seconds: (windowEnd - windowStart) / 1000,
      });
    };
    const stopIssuing = (): void => {
      issuing = false;
      windowEnd = performance.now();
      cpu?.stop();
      if (conn.inFlight === 0) return finish();
      drainTimer = setTimeout(
        () =>
          reject(
            new Error(
              `${conn.inFlight} ${kind} ops still unanswered ${DRAIN_TIMEOUT_MS / 1000} s after the cell ended`,
            ),
          ),
        DRAIN_TIMEOUT_MS,
      );
    };
    const onDone: Done = (sentAt, doneAt, ok, tentativeAt) => {
      if (measuring && (issuing || doneAt <= windowEnd)) {
        completed++;
        if (!ok) errors++;
        else {
          lat.push(doneAt - sentAt);
          if (tentativeAt !== null) tentative.push(tentativeAt - sentAt);
        }
      }
      if ('ops' in stop && issuing && completed >= stop.ops) stopIssuing();
      if (issuing) conn.issue(kind, onDone);
      else if (conn.inFlight === 0) finish();
    };

    const begin = (): void => {
      measuring = true;
      cpu?.start();
      windowStart = performance.now();
      if ('seconds' in stop) timers.push(setTimeout(stopIssuing, stop.seconds * 1000));
    };
    if (stop.warmupSeconds > 0) timers.push(setTimeout(begin, stop.warmupSeconds * 1000));
    else begin();
    for (let i = 0; i < outstanding; i++) conn.issue(kind, onDone);
  }).finally(() => {
    conn.onFail = failRun;
  });
}

export interface Summary {
  mean: number;
  p50: number;
  p99: number;
  tentMean: number;
  tentP50: number;
  tentP99: number;
  opsPerSec: number;
  completed: number;
  errors: number;
}

/** One Result from several measurements of the same kind (sequential rounds). */
export function mergeResults(rs: readonly Result[]): Result {
  const cat = (f: (r: Result) => Float64Array): Float64Array => {
    const out = new Float64Array(rs.reduce((n, r) => n + f(r).length, 0));
    let at = 0;
    for (const r of rs) {
      out.set(f(r), at);
      at += f(r).length;
    }
    return out;
  };
  return {
    lat: cat((r) => r.lat),
    tentative: cat((r) => r.tentative),
    completed: rs.reduce((n, r) => n + r.completed, 0),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    seconds: rs.reduce((n, r) => n + r.seconds, 0),
  };
}

export function summarize(r: Result): Summary {
  const lat = r.lat.sort();
  const tent = r.tentative.sort();
  return {
    mean: lat.reduce((a, b) => a + b, 0) / lat.length,
    p50: quantileOfSorted(lat, 0.5),
    p99: quantileOfSorted(lat, 0.99),
    tentMean: tent.reduce((a, b) => a + b, 0) / tent.length,
    tentP50: quantileOfSorted(tent, 0.5),
    tentP99: quantileOfSorted(tent, 0.99),
    opsPerSec: r.seconds > 0 ? r.completed / r.seconds : NaN,
    completed: r.completed,
    errors: r.errors,
  };
}
