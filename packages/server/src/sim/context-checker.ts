import { CLOSE_OP, type App } from '@creek/app';
import { closeArgs } from '@creek/replica/core/closing-origins.js';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { Req } from '@creek/replica/core/types.js';
import {
  committedListOn,
  type ClientOpRecord,
  type Invocation,
  type RunRecord,
} from './run-record.js';
import { answeredUpdates, describeClientOp, lastAnswered, OrderHolds } from './session-checkers.js';

/** A session handed its context token to a new client (SimConfig.contexts). */
export interface Handoff {
  /** The session that asked for the token, and when it asked. */
  readonly from: string;
  readonly askedAt: number;
  /** The session of the client that started after the token, at which replica first. */
  readonly reader: string;
  readonly token: string;
}

/**
 * Clients that start after another's context token read its writes: every op of such a client
 * that a replica executed tentatively ran on an order holding a copy of the last update of the
 * token's session whose caller had an answer when the token was asked for. (A replica welcomes a
 * hello presenting a token only once it holds every op the token covers; the token covers what
 * its session had seen, the ops it had answers to, and everything its replica held.) A write
 * whose every copy of the time had been dropped by its origin's close where the op ran does not
 * count (ClosedBefore): it was never applied, and its session applies it again later.
 */
export function checkHandoffs(record: RunRecord, app: App, handoffs: readonly Handoff[]): string[] {
  if (handoffs.length === 0) return [];
  const out: string[] = [];
  const bySession = answeredUpdates(record, app);
  const holds = new OrderHolds(record);
  const byReader = new Map(handoffs.map((h) => [h.reader, h]));
  const closed = new ClosedBefore(record, sessionOpCopies(record));
  for (const inv of record.invocations) {
    const h = inv.session === undefined ? undefined : byReader.get(inv.session.id);
    if (h === undefined) continue;
    const answered = bySession.get(h.from) ?? [];
    let last = lastAnswered(answered, h.askedAt);
    while (last !== undefined && closed.dropped(last, h.askedAt, inv))
      last = lastAnswered(answered, h.askedAt, last.seq);
    if (last === undefined) continue;
    if (holds.held(inv, last) === false)
      out.push(
        `(contexts) ${inv.strong ? 'strong' : 'weak'} ${inv.op}(${JSON.stringify(inv.args)}) of ${h.reader}, started after ${h.from}'s context token ${h.token} (asked for at ${h.askedAt.toFixed(1)} ms), ran at replica ${inv.replica} on an order without ${describeClientOp(last)}, answered to its caller at ${last.views[0]!.at.toFixed(1)} ms`,
      );
  }
  return out;
}

/** Every invocation (copy) of each session op, by `session#seq`, read-only ones too. */
export function sessionOpCopies(record: RunRecord): Map<string, Invocation[]> {
  const copies = new Map<string, Invocation[]>();
  for (const inv of record.invocations) {
    if (inv.session === undefined) continue;
    const k = `${inv.session.id}#${inv.session.seq}`;
    const list = copies.get(k);
    if (list === undefined) copies.set(k, [inv]);
    else list.push(inv);
  }
  return copies;
}

/**
 * Whether a session op was dropped by its origin's close (core/closing-origins.ts) before an op
 * `inv` ran: every copy of it there was at a time (invoked, with an id) is of an origin whose
 * first close was committed at inv's replica before inv's order began (its trace's
 * committedBefore), and above that close's cut. Such a copy was never applied anywhere, and the
 * replica no longer held it for anyone: its session applies the op again later, a new op after
 * whatever counted it. A replica's own view of whether an op is closed off is not this: a weak op
 * it received before the close stays in its causal context once dropped.
 */
export class ClosedBefore {
  private readonly reqs = new Map<string, Req>();
  /** Per `replica/disk/origin`: the origin's first close on that commit list, or null. */
  private readonly closes = new Map<string, { readonly at: number; readonly cut: number } | null>();

  constructor(
    private readonly record: RunRecord,
    private readonly copies: ReadonlyMap<string, readonly Invocation[]>,
  ) {
    for (const m of [record.reqs, ...record.retired.map((r) => r.lostReqs)])
      for (const [k, req] of m) this.reqs.set(k, req);
  }

  dropped(op: ClientOpRecord, at: number, inv: Invocation): boolean {
    const trace = inv.responses.find((x) => x.level === 'tentative')?.trace;
    if (trace === undefined) return false;
    const then = (this.copies.get(`${op.session}#${op.seq}`) ?? []).filter(
      (c): c is Invocation & { id: OpId } => c.id !== null && c.invokedAt < at,
    );
    return (
      then.length > 0 &&
      then.every((c) => {
        const close = this.closeOf(inv, c.id.replica);
        return close !== null && close.at < trace.committedBefore && c.id.eventNo > close.cut;
      })
    );
  }

  private closeOf(inv: Invocation, origin: number): { at: number; cut: number } | null {
    const disk = inv.disk ?? 0;
    const key = `${inv.replica}/${disk}/${origin}`;
    let close = this.closes.get(key);
    if (close === undefined) {
      close = null;
      const { committed } = committedListOn(this.record, inv.replica, disk);
      for (let i = 0; i < committed.length && close === null; i++) {
        const req = this.reqs.get(opKey(committed[i]!));
        const args = req?.op === CLOSE_OP ? closeArgs(req.args) : null;
        if (args !== null && args.origin === origin) close = { at: i, cut: args.cut };
      }
      this.closes.set(key, close);
    }
    return close;
  }
}
