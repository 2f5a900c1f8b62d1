import type { View, ViewSink } from './binding.js';
import { jsonEqual } from './correctable.js';

/**
 * What this client saw of one op's tentative answers (CreekClient.accuracy): of its calls that got
 * a tentative (weak) view and then their final (strong) one, how many final answers equalled the
 * tentative one. An app can wait for the stable answer of ops whose tentative answers it often
 * saw corrected. The replicas count the same over all their clients (`/status` `metrics.byOp`,
 * `/metrics` `creek_tentative_answers_total{op}`).
 */
export interface OpAccuracy {
  /** Calls that got a tentative view and then their final one. */
  readonly tentative: number;
  /** Of those, the ones whose final answer was the tentative one. */
  readonly confirmed: number;
  /** confirmed / tentative; null before any such call. */
  readonly accuracy: number | null;
}

/** How many op names a client keeps apart (an app has far fewer); the rest are not counted. */
const MAX_OPS = 256;

/** The tally behind CreekClient.accuracy: fed by the sinks of the calls it watches. */
export class AccuracyTally {
  private readonly byOp = new Map<string, { tentative: number; confirmed: number }>();

  /**
   * `sink`, also counting op `op`'s answer: its first tentative view against its final strong one.
   * A call without both (a weak-only call, one that failed) counts nothing.
   */
  watch<T>(op: string, sink: ViewSink<T>): ViewSink<T> {
    let first: { value: T } | null = null;
    return {
      ...sink,
      view: (v: View<T>) => {
        if (v.level === 'weak' && !v.final && first === null) first = { value: v.value };
        if (v.final && v.level === 'strong' && first !== null)
          this.count(op, jsonEqual(first.value, v.value));
        sink.view(v);
      },
    };
  }

  of(op: string): OpAccuracy {
    const c = this.byOp.get(op);
    if (c === undefined) return { tentative: 0, confirmed: 0, accuracy: null };
    return { ...c, accuracy: c.confirmed / c.tentative };
  }

  private count(op: string, confirmed: boolean): void {
    let c = this.byOp.get(op);
    if (c === undefined) {
      if (this.byOp.size >= MAX_OPS) return;
      c = { tentative: 0, confirmed: 0 };
      this.byOp.set(op, c);
    }
    c.tentative++;
    if (confirmed) c.confirmed++;
  }
}
