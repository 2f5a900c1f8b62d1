import { canonicalJson, type JsonValue } from '@creek/app';
import { holds, type HeldOwnOps } from '@creek/protocol';

/**
 * One optimistic change an op makes to a live query's view (InvokeOptions.optimistic): the query
 * named by `op` and `args`, and what becomes of its value.
 */
export interface OptimisticChange {
  readonly op: string;
  readonly args: unknown;
  /** The new value from the one shown (undefined before the query's first result). */
  readonly update: (value: unknown) => unknown;
}

/** The key of a live query, by op and arguments (compared as JSON). */
export function queryKey(op: string, args: unknown): string {
  return canonicalJson([op, args] as unknown as JsonValue);
}

interface Pending {
  readonly seq: number;
  readonly changes: ReadonlyMap<string, readonly OptimisticChange['update'][]>;
}

/**
 * The optimistic changes of the session's ops that have not shown in their queries yet (Replicache
 * and Convex call these optimistic updates): while an op is queued offline or in flight, the
 * latest view of each query it names shows its change on top of the replica's result. For one
 * query, an op's change stops applying as soon as a result of that query holds the op (its real
 * effect is in it, or it failed there: `own`, see ViewOrder), so the row never vanishes in
 * between; for every query, once the op ends (committed, failed, or never to take effect).
 */
export class OptimisticOps {
  /** By session number, in the session's order. */
  private readonly pending = new Map<number, Pending>();

  /** Op `seq` makes `changes` until it ends; returns the keys of the queries it changes. */
  add(seq: number, changes: readonly OptimisticChange[]): string[] {
    const byKey = new Map<string, OptimisticChange['update'][]>();
    for (const c of changes) {
      const key = queryKey(c.op, c.args);
      const list = byKey.get(key) ?? [];
      list.push(c.update);
      byKey.set(key, list);
    }
    this.pending.set(seq, { seq, changes: byKey });
    return [...byKey.keys()];
  }

  /** Op `seq` ended: returns the keys of the queries it changed (none if it changed none). */
  end(seq: number): string[] {
    const p = this.pending.get(seq);
    if (p === undefined) return [];
    this.pending.delete(seq);
    return [...p.changes.keys()];
  }

  /**
   * The value query `key` shows: `base` (the replica's latest result, which holds `own` of the
   * session's ops) with the changes of the pending ops it does not hold, in the session's order;
   * `changed` says whether any applied. A change that throws is left out.
   */
  apply(
    key: string,
    base: unknown,
    own: HeldOwnOps | null,
  ): { readonly value: unknown; readonly changed: boolean } {
    let value = base;
    let changed = false;
    for (const p of [...this.pending.values()].sort((a, b) => a.seq - b.seq)) {
      const updates = p.changes.get(key);
      if (updates === undefined || (own !== null && holds(own, p.seq))) continue;
      for (const update of updates) {
        try {
          value = update(value);
          changed = true;
        } catch {
          // The app's guess failed on this value: the view shows the rest, and the real result
          // comes with the op's answer.
        }
      }
    }
    return { value, changed };
  }
}
