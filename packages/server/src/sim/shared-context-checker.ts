import type { App } from '@creek/app';
import { ClosedBefore, sessionOpCopies } from './context-checker.js';
import type { ClientOpRecord, RunRecord } from './run-record.js';
import { describeClientOp, OrderHolds } from './session-checkers.js';

/** An op a session invoked in a shared context (SimConfig.sharedContexts). */
export interface ContextOp {
  readonly session: string;
  /** When its caller invoked it. */
  readonly invokedAt: number;
  /** The op as the session sent it, once it was (after the context's frontier and its wait). */
  rec: ClientOpRecord | null;
  /** When the context acknowledged it to its caller (its final view), or null. */
  ackedAt: number | null;
}

/**
 * Shared contexts (CC-Paxos's distributed contexts, the SDK's session/shared-context.ts): every
 * op of a member of the context that a replica executed tentatively ran on an order holding each
 * update of another member that the context acknowledged to its caller before the op was invoked.
 * An update whose every copy of the time had been dropped by its origin's close where the op ran
 * does not count, as for context tokens (context-checker.ts ClosedBefore): it was never applied,
 * and its session applies it again.
 */
export function checkSharedContext(
  record: RunRecord,
  app: App,
  ops: readonly ContextOp[],
): string[] {
  const acked = ops.filter(
    (o): o is ContextOp & { rec: ClientOpRecord; ackedAt: number } =>
      o.rec !== null && o.ackedAt !== null && app.lookup(o.rec.op)?.readOnly !== true,
  );
  if (acked.length === 0) return [];
  const out: string[] = [];
  const holds = new OrderHolds(record);
  const invocations = sessionOpCopies(record);
  const closed = new ClosedBefore(record, invocations);
  for (const b of ops) {
    if (b.rec === null) continue;
    const before = acked.filter((a) => a.session !== b.session && a.ackedAt < b.invokedAt);
    for (const inv of invocations.get(`${b.rec.session}#${b.rec.seq}`) ?? [])
      for (const a of before) {
        if (holds.held(inv, a.rec) !== false || closed.dropped(a.rec, b.invokedAt, inv)) continue;
        out.push(
          `(shared contexts) ${describeClientOp(b.rec)}, invoked in the context at ${b.invokedAt.toFixed(1)} ms, ran at replica ${inv.replica} on an order without ${describeClientOp(a.rec)}, acknowledged in the context at ${a.ackedAt.toFixed(1)} ms`,
        );
        if (out.length >= 10) return out;
      }
  }
  return out;
}
