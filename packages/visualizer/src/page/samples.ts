import type { LiveReplica } from './live-model.js';
import type { Answered } from './workload.js';

type Counts = NonNullable<LiveReplica['counts']>;

/** The median of `xs` (nearest rank), or null when empty. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** `a / b`, or null when nothing happened (b = 0): a gap in the chart, not a made-up value. */
function ratio(a: number, b: number): number | null {
  return b === 0 ? null : a / b;
}

/**
 * What one second of the cluster looked like, from the replicas' status counters (differences
 * since the last sample) and the workload's answers: the series the charts draw.
 */
export interface Sample {
  readonly t: number;
  /** Per replica: ops committed this second. */
  readonly committed: (number | null)[];
  /** The workload's answers this second: weak ops (tentative) and strong ops (stable), median ms. */
  readonly tentativeMs: number | null;
  readonly stableMs: number | null;
  /** Over every replica this second: executions per finalized op, and speculation accuracy. */
  readonly executionRatio: number | null;
  readonly accuracy: number | null;
  /** Rollbacks this second, every replica together. */
  readonly rollbacks: number;
}

/** Turns successive readings of the replicas and the workload into per-second samples. */
export class Sampler {
  private last: { committed: number; counts: Counts | null }[] | null = null;

  sample(
    t: number,
    replicas: readonly { readonly committed: number; readonly counts: Counts | null }[],
    answers: readonly Answered[],
  ): Sample {
    const now = replicas.map((r) => ({ committed: r.committed, counts: r.counts }));
    const before = this.last;
    this.last = now;
    const delta = (k: number, f: (c: Counts) => number): number => {
      const a = now[k]!.counts;
      const b = before?.[k]?.counts;
      return a === null || b === null || b === undefined ? 0 : Math.max(0, f(a) - f(b));
    };
    let finalized = 0;
    let executions = 0;
    let speculated = 0;
    let correct = 0;
    let rollbacks = 0;
    for (let k = 0; k < replicas.length; k++) {
      finalized += delta(k, (c) => c.finalized);
      executions += delta(k, (c) => c.executionsOfFinalized);
      speculated += delta(k, (c) => c.speculated);
      correct += delta(k, (c) => c.speculatedCorrectly);
      rollbacks += delta(k, (c) => c.rollbacks);
    }
    return {
      t,
      // A replica added during a run (a membership change) has no sample before its first.
      committed: now.map((n, k) => {
        const b = before?.[k];
        return b === undefined ? null : Math.max(0, n.committed - b.committed);
      }),
      tentativeMs: median(answers.filter((a) => a.level === 'tentative').map((a) => a.ms)),
      stableMs: median(answers.filter((a) => a.level === 'stable').map((a) => a.ms)),
      executionRatio: ratio(executions, finalized),
      accuracy: ratio(correct, speculated),
      rollbacks,
    };
  }
}
