/**
 * Sustained throughput from a rate ladder: the throughput a system keeps up at, with bounded
 * latency, rather than the most it ever completed in one window. bench:tpcc offers each mode
 * rising rates (a ladder) in several rounds; one stalled window at a low rate, or one lucky one at
 * a high rate, should not decide the mode's figure.
 *
 * A window is sustained when it has no errors and no answers still missing, completed at least
 * `keepUp` of the offered rate, and its p99 latencies stay within `p99Factor` times the ladder's
 * low-load p99s (or within `p99BoundMs`, when given): weak transactions' (their first answer) and
 * Payment's (its stable answer) each against its own. The low-load p99 of each is the lowest among the ladder's windows that kept up
 * with their rate, so a ladder should start at a rate the system handles easily. A ladder's
 * sustained throughput is the throughput of its highest-offered sustained window (the windows
 * above it may have failed or not); none sustained: null. Pure functions, tested in
 * bench/test/sustained.test.ts.
 */
import { median } from './stats.js';

/** What one window of a ladder measured (bench:tpcc's Row has these and more). */
export interface LadderWindow {
  readonly offered: number;
  readonly throughput: number;
  /** ms; NaN when the window had no such transaction. */
  readonly weakP99: number;
  readonly paymentP99: number;
  readonly errors: number;
  /** Why the run cut the window short or found it stalled; null when it did not. */
  readonly saturated: string | null;
}

export interface SustainedRule {
  /** A window's p99 may be at most this many times the ladder's low-load p99 (e.g. 10). */
  readonly p99Factor: number;
  /**
   * Instead, one bound for every ladder, ms: a relative bound is stricter on a mode whose
   * low-load latency is lower, so modes of very different latencies compare better under one.
   */
  readonly p99BoundMs?: number | null;
  /** A window must complete at least this share of its offered rate (e.g. 0.85). */
  readonly keepUp: number;
}

export interface LadderVerdict {
  /** The throughput of the highest-offered sustained window; null if none was sustained. */
  readonly sustained: number | null;
  /** Its offered rate; null likewise. */
  readonly offered: number | null;
  /** The p99 bounds applied, ms (NaN where the ladder had no such transaction). */
  readonly weakBound: number;
  readonly paymentBound: number;
  /** Per window, in the ladder's order: null if sustained, else why not. */
  readonly reasons: readonly (string | null)[];
}

const keptUp = (w: LadderWindow, rule: SustainedRule): boolean =>
  w.errors === 0 && w.saturated === null && w.throughput >= rule.keepUp * w.offered;

/** The lowest finite value of `xs`; NaN if none is finite. */
function lowest(xs: readonly number[]): number {
  const finite = xs.filter((x) => Number.isFinite(x));
  return finite.length === 0 ? NaN : Math.min(...finite);
}

/** The ladder's sustained throughput under `rule`, with each window's verdict. */
export function sustainedThroughput(
  ladder: readonly LadderWindow[],
  rule: SustainedRule,
): LadderVerdict {
  const calm = ladder.filter((w) => keptUp(w, rule));
  const fixed = rule.p99BoundMs ?? null;
  const weakBound = fixed ?? rule.p99Factor * lowest(calm.map((w) => w.weakP99));
  const paymentBound = fixed ?? rule.p99Factor * lowest(calm.map((w) => w.paymentP99));
  const reasons = ladder.map((w): string | null => {
    if (w.errors > 0) return `${w.errors} errors`;
    if (w.saturated !== null) return w.saturated;
    if (w.throughput < rule.keepUp * w.offered)
      return `${Math.round((100 * w.throughput) / w.offered)} % of the offered rate completed`;
    // A p99 that is NaN (no such transaction in the window) or has no bound passes.
    if (w.weakP99 > weakBound)
      return `weak p99 ${w.weakP99.toFixed(1)} ms > ${weakBound.toFixed(1)} ms`;
    if (w.paymentP99 > paymentBound)
      return `Payment p99 ${w.paymentP99.toFixed(1)} ms > ${paymentBound.toFixed(1)} ms`;
    return null;
  });
  let best: LadderWindow | null = null;
  for (const [i, w] of ladder.entries())
    if (reasons[i] === null && (best === null || w.offered > best.offered)) best = w;
  return {
    sustained: best?.throughput ?? null,
    offered: best?.offered ?? null,
    weakBound,
    paymentBound,
    reasons,
  };
}

/**
 * The median of the rounds' figures (stats.ts's: the upper middle of an even count) and their
 * spread; a round with no window sustained counts 0.
 */
export function acrossRounds(figures: readonly (number | null)[]): {
  median: number;
  min: number;
  max: number;
} {
  if (figures.length === 0) return { median: NaN, min: NaN, max: NaN };
  const xs = figures.map((x) => x ?? 0);
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}
