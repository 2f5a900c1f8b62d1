import { seenFromWire, type ServerFrame } from '@creek/protocol';
import type { OpTable, SessionOp } from './op-table.js';
import { opRefused, type RefusalContext } from './refusals.js';
import type { SeenVector } from './seen-vector.js';
import type { SendWindow } from './send-window.js';

// How a client session takes its replica's answers to its ops: views, confirmations, `committed`
// marks and refusals. Rules of ClientSession (client-session.ts), kept here to keep that file to
// its events, as refusals.ts keeps the refusals.

/** What the rules read and act on: the session's parts, and its current connection. */
export interface AnswerContext extends RefusalContext {
  readonly ops: OpTable;
  readonly window: SendWindow;
  readonly seen: SeenVector;
  /** An op of this connection is done for its replica: the next ones kept back go. */
  release(opId: string): void;
  /** A replica serves the session (it answered an op): connected. */
  served(): void;
  /**
   * A stable answer came (what the stall timeout measures from); `to`: the op it answered, whose
   * time from its send on this connection is what a stable answer takes (Failover.stableAnswered).
   */
  stableNow(to?: SessionOp): void;
}

/** The frames that answer the session's ops. */
export type OpAnswer =
  | Extract<ServerFrame, { t: 'committed' | 'confirm' | 'confirms' | 'view' }>
  | (Extract<ServerFrame, { t: 'error' }> & { readonly opId: string });

/** Whether `f` answers the session's ops (an error frame naming one included). */
export function isOpAnswer(f: ServerFrame): f is OpAnswer {
  return (
    f.t === 'committed' ||
    f.t === 'confirm' ||
    f.t === 'confirms' ||
    f.t === 'view' ||
    (f.t === 'error' && f.opId !== undefined)
  );
}

/** Takes `f`, an answer of the replica of connection `s.connection()`, to the session's ops. */
export function opAnswered(s: AnswerContext, f: OpAnswer): void {
  if (f.t === 'committed' || f.t === 'confirms') s.stableNow();
  if (f.t === 'committed') {
    for (const o of [...s.ops.values()])
      if (o.seq < f.below && o.sentOn === s.connection()) s.ops.commit(o);
    return;
  }
  if (f.t === 'confirm' || f.t === 'confirms') s.seen.see(seenFromWire(f));
  if (f.t === 'confirms') {
    for (const opId of f.opIds) s.release(opId);
    for (const opId of f.opIds) {
      const o = s.ops.get(opId);
      if (o !== undefined) s.ops.confirmed(o);
    }
    return;
  }
  const o = s.ops.get(f.opId);
  // Marked before the release below, which may send a context request waiting for it.
  if (o !== undefined && (f.t === 'view' || f.t === 'confirm')) o.answeredOn = s.connection();
  // What the replica counts as done (client-endpoint.ts): a weak op at its first view, a strong
  // one at its stable view or confirm, any op at an error.
  if (f.t !== 'view' || f.level === 'stable' || s.window.levelOf(f.opId) === 'weak')
    s.release(f.opId);
  if (o === undefined) return;
  if (f.t === 'view' || f.t === 'confirm') s.served();
  if (f.t === 'view') {
    s.seen.see(seenFromWire(f));
    if (f.level === 'stable') s.stableNow(o);
    s.ops.viewed(o, f.level, f.outcome, (f.id ?? null) !== null, f.causes);
  } else if (f.t === 'confirm') {
    s.stableNow(o);
    s.ops.confirmed(o);
  } else if (f.code === 'busy' || f.code === 'unavailable') {
    opRefused(s, o, f.code, f.message);
  } else {
    s.ops.refusedEverywhere(o, f.code, f.message);
  }
}
