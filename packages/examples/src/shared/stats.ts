/** Latency figures of a sample, in the sample's unit (ms throughout the examples). */
export interface LatencySummary {
  readonly n: number;
  readonly mean: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function summarize(sample: readonly number[]): LatencySummary {
  if (sample.length === 0) return { n: 0, mean: NaN, p50: NaN, p99: NaN, max: NaN };
  const s = [...sample].sort((a, b) => a - b);
  // Nearest-rank percentiles: an observed value, never an interpolation between two.
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return {
    n: s.length,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    p50: at(0.5),
    p99: at(0.99),
    max: s[s.length - 1]!,
  };
}

export function formatSummary(s: LatencySummary): string {
  const f = (x: number): string => x.toFixed(1);
  return `n=${s.n} mean ${f(s.mean)} ms, p50 ${f(s.p50)} ms, p99 ${f(s.p99)} ms, max ${f(s.max)} ms`;
}

/** Progress on stderr at most once a second: long runs show they are alive. */
export function progress(label: string, total: number): (done: number) => void {
  let last = 0;
  return (done) => {
    const now = Date.now();
    if (done < total && now - last < 1_000) return;
    last = now;
    process.stderr.write(`${label}: ${done}/${total} (${Math.floor((100 * done) / total)}%)\n`);
  };
}
