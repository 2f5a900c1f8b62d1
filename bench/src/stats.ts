/**
 * The summary statistics the benchmarks report, defined once so that every table means the same
 * by p50 and p99.
 */

/**
 * The q-quantile of values sorted in ascending order, by nearest rank: the smallest value with at
 * least a share q of all values at or below it (p99 of 100 values is the 99th). NaN when empty.
 */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The q-quantile (nearest rank) of values in any order. */
export function quantile(values: readonly number[], q: number): number {
  return quantileOfSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

/** The middle value of an odd count, the upper of the two middle ones of an even count. */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
