import type { App } from '@creek/app';
import { NOT_APPLIED_CLOSED } from '@creek/replica/core/closing-origins.js';
import { opKey } from '@creek/replica/core/op-id.js';
import { outcomesEqual, type Outcome } from '@creek/replica/core/types.js';
import {
  committedOutcomes,
  describe,
  serialOp,
  show,
  touchesPlanted,
  type Planted,
} from './checked-ops.js';
import { ReferenceInterpreter } from './reference-interpreter.js';
import { longestCommitted, type RunRecord } from './run-record.js';

/** (c) Every stable response equals the reference interpreter's result in the final committed order. */
export function checkStableResponses(
  record: RunRecord,
  app: App,
  planted: Planted | null = null,
): string[] {
  const out: string[] = [];
  const longest = longestCommitted(record);
  const expected = committedOutcomes(record, app);
  const reads: { inv: RunRecord['invocations'][number]; position: number; outcome: Outcome }[] = [];
  for (const inv of record.invocations) {
    if (touchesPlanted(inv, planted)) continue;
    const stable = inv.responses.filter((r) => r.level === 'stable');
    if (stable.length > 1) out.push(`(c) ${describe(inv)} got ${stable.length} stable responses`);
    for (const s of stable) {
      if (inv.id === null) {
        // A read answered stably without being ordered: the read at its committed position.
        if (s.position !== undefined) reads.push({ inv, position: s.position, outcome: s.outcome });
        continue;
      }
      const want = expected.get(opKey(inv.id));
      if (want === undefined)
        out.push(`(c) ${describe(inv)} got a stable response but is not in the committed order`);
      else if (!outcomesEqual(want, s.outcome))
        out.push(
          `(c) ${describe(inv)} stable ${show(s.outcome)}, serial execution gives ${show(want)}`,
        );
    }
    // The one failure a correct replica answers: its op was dropped by its origin's close, so it
    // must be nowhere in the committed order.
    for (const r of inv.responses) {
      if (r.level !== 'failed') continue;
      const closed =
        !r.outcome.ok && r.outcome.error.endsWith(NOT_APPLIED_CLOSED) && inv.id !== null;
      if (!closed) out.push(`(c) ${describe(inv)} was rejected: ${show(r.outcome)}`);
      else if (expected.has(opKey(inv.id!)))
        out.push(`(c) ${describe(inv)} was answered as dropped by a close but is committed`);
    }
  }
  // Reads by read index, in committed position order: each equals the read on the serial
  // execution of that many ops of the committed order (the lists are prefixes of one another).
  reads.sort((a, b) => a.position - b.position);
  const prefix = new ReferenceInterpreter(app);
  let applied = 0;
  for (const r of reads) {
    if (r.position > longest.length) {
      out.push(
        `(c) ${describe(r.inv)} read the committed state at position ${r.position}, beyond the committed order's ${longest.length}`,
      );
      continue;
    }
    for (; applied < r.position; applied++) prefix.apply(serialOp(record, longest[applied]!));
    const want = prefix.apply({ op: r.inv.op, args: r.inv.args, ts: 0, id: null }, true);
    if (!outcomesEqual(want, r.outcome))
      out.push(
        `(c) ${describe(r.inv)} stable ${show(r.outcome)} at committed position ${r.position}, serial execution there gives ${show(want)}`,
      );
  }
  return out;
}
