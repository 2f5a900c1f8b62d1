import type { App } from '@creek/app';
import { holds, type HeldOwnOps } from '@creek/protocol';
import type { RunRecord } from './run-record.js';
import { Copies, stampKey } from './session-checkers.js';

/**
 * A stable live-query result a replica sent a session: the committed position it read at, and the
 * session's own ops it said that state holds (the `watched` frame's `own`: every op numbered up to
 * `upTo` but those `missing`).
 */
export interface StableOwnOps {
  readonly session: string;
  readonly replica: number;
  readonly at: number;
  readonly position: number;
  readonly own: HeldOwnOps;
}

/**
 * What stable live-query results said of the session's own ops, against the run's committed order
 * (committed orders are prefixes of one another, so a position names one state): every op of the
 * session the result said it holds, if committed at all, is decided (its first copy, or an abandon
 * of it) among the first `position` ops, and every other one is not. A result that claims an op
 * it does not hold lets the client replace a tentative view that showed the op with one that does
 * not (the user's write vanishes); one that misses an op it holds holds the client's synced mark
 * back. Ops never ordered (reads, ops no replica took) are not judged.
 */
export function checkStableOwnOps(
  record: RunRecord,
  app: App,
  results: readonly StableOwnOps[],
): string[] {
  const ops = record.clientOps;
  if (ops === undefined || results.length === 0) return [];
  const copies = new Copies(record);
  const seqs = new Map<string, number[]>();
  for (const r of ops) {
    if (app.lookup(r.op)?.readOnly === true) continue;
    let mine = seqs.get(r.session);
    if (mine === undefined) seqs.set(r.session, (mine = []));
    mine.push(r.seq);
  }
  const out: string[] = [];
  for (const t of results) {
    // A state past the longest committed order a replica still holds (a disk was lost): unknown.
    if (t.position > copies.order.length) continue;
    for (const seq of seqs.get(t.session) ?? []) {
      const decided = copies.decidedAt(stampKey(t.session, seq));
      if (decided === undefined) continue;
      const claimed = holds(t.own, seq);
      if (decided < t.position === claimed) continue;
      out.push(
        `(own ops) at ${t.at.toFixed(1)} ms replica ${t.replica} told session ${t.session} that the committed state at position ${t.position} ${claimed ? 'holds' : 'does not hold'} its op #${seq} (${JSON.stringify(t.own)}), but that op is decided at position ${decided}`,
      );
      break;
    }
    if (out.length >= 10) break;
  }
  return out;
}
