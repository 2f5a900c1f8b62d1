/**
 * How bench:geo times ops: sequential ops (one outstanding per client), each timed to its first
 * answer and to its last, and throughput with many outstanding. Times in ms from
 * `performance.now()`.
 */
import { performance } from 'node:perf_hooks';
import type { Correctable } from '@creek/client';
import { quantileOfSorted } from '../stats.js';

/** One op of a cell. Resolves when it is done; `first` says when its first answer came. */
export type TimedOp = (i: number, first: () => void) => PromiseLike<unknown>;

/** A cell's samples: time to the first answer and to the last, per op (ms). */
export interface Samples {
  readonly first: number[];
  readonly last: number[];
}

/**
 * `ops` ops one after another, after 5 % more (at least 5) as warm-up: the first ops of a fresh
 * connection pay for compiling and the first writes, not for the network.
 */
export async function sequential(op: TimedOp, ops: number): Promise<Samples> {
  const warm = Math.max(5, Math.ceil(ops * 0.05));
  const first: number[] = [];
  const last: number[] = [];
  for (let i = 0; i < ops + warm; i++) {
    const t = performance.now();
    let f: number | null = null;
    await op(i, () => {
      f ??= performance.now() - t;
    });
    const l = performance.now() - t;
    if (i < warm) continue;
    first.push(f ?? l);
    last.push(l);
  }
  return { first, last };
}

/** Waits for a Correctable's final view, telling `first` at its first view (preliminary or final). */
export function untilFinal<T>(c: Correctable<T>, first: () => void): Promise<T> {
  c.setCallbacks({ onUpdate: () => first(), onFinal: () => first() });
  return Promise.resolve(c);
}

export interface Quantiles {
  readonly p50: number;
  readonly p99: number;
}

export function quantiles(samples: readonly number[]): Quantiles {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: quantileOfSorted(s, 0.5), p99: quantileOfSorted(s, 0.99) };
}

/**
 * Ops per second with `outstanding` ops in flight for `seconds`, after one second of warm-up; the
 * ops are spread over `ops` (one per client region) round-robin.
 */
export async function throughput(
  ops: readonly ((i: number) => PromiseLike<unknown>)[],
  outstanding: number,
  seconds: number,
): Promise<number> {
  const warmUntil = performance.now() + 1000;
  const end = warmUntil + seconds * 1000;
  let done = 0;
  let i = 0;
  await Promise.all(
    Array.from({ length: outstanding }, async (_, k) => {
      const op = ops[k % ops.length]!;
      while (performance.now() < end) {
        await op(i++);
        const now = performance.now();
        if (now > warmUntil && now <= end) done++;
      }
    }),
  );
  return done / seconds;
}
