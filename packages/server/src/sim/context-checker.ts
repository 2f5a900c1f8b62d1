import type { App } from '@creek/app';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { SimProcess } from './process.js';
import {
  allCommitLists,
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
 * whose every copy of the time was later dropped by its origin's close does not count: it was
 * never applied, and its session applies it again later, after the token.
 */
export function checkHandoffs(
  record: RunRecord,
  app: App,
  handoffs: readonly Handoff[],
  /** droppedByClose. */
  droppedByClose: (id: OpId) => boolean,
): string[] {
  if (handoffs.length === 0) return [];
  const out: string[] = [];
  const bySession = answeredUpdates(record, app);
  const holds = new OrderHolds(record);
  const byReader = new Map(handoffs.map((h) => [h.reader, h]));
  const dropped = droppedBy(sessionOpCopies(record), droppedByClose);
  for (const inv of record.invocations) {
    const h = inv.session === undefined ? undefined : byReader.get(inv.session.id);
    if (h === undefined) continue;
    const answered = bySession.get(h.from) ?? [];
    let last = lastAnswered(answered, h.askedAt);
    while (last !== undefined && dropped(last, h.askedAt))
      last = lastAnswered(answered, h.askedAt, last.seq);
    if (last === undefined) continue;
    if (holds.held(inv, last) === false)
      out.push(
        `(contexts) ${inv.strong ? 'strong' : 'weak'} ${inv.op}(${JSON.stringify(inv.args)}) of ${h.reader}, started after ${h.from}'s context token ${h.token} (asked for at ${h.askedAt.toFixed(1)} ms), ran at replica ${inv.replica} on an order without ${describeClientOp(last)}, answered to its caller at ${last.views[0]!.at.toFixed(1)} ms`,
      );
  }
  return out;
}

/** Every invocation (copy) of each session op, by `session#seq`. */
export function sessionOpCopies(record: RunRecord): Map<string, Invocation[]> {
  const copies = new Map<string, Invocation[]>();
  for (const inv of record.invocations) {
    if (inv.session === undefined || inv.id === null) continue;
    const k = `${inv.session.id}#${inv.session.seq}`;
    const list = copies.get(k);
    if (list === undefined) copies.set(k, [inv]);
    else list.push(inv);
  }
  return copies;
}

/**
 * Whether every copy of a session op there was at a time was dropped by its origin's close
 * (core/closing-origins.ts; `dropped`: droppedByClose): definitely not applied anywhere, so
 * nothing counted then covers it (its session resubmits it later, a new op after whatever
 * counted it).
 */
export function droppedBy(
  copies: ReadonlyMap<string, readonly Invocation[]>,
  dropped: (id: OpId) => boolean,
): (op: ClientOpRecord, at: number) => boolean {
  return (op, at) => {
    const then = (copies.get(`${op.session}#${op.seq}`) ?? []).filter((c) => c.invokedAt < at);
    return then.length > 0 && then.every((c) => dropped(c.id!));
  };
}

/**
 * Whether op `id` was dropped by its origin's close at the end of the run: a replica up then
 * committed a close of its origin below it, and no commit list holds it (an op above the cut that
 * committed before the close stays committed). Replica.closedOff alone is not this: a weak op a
 * replica received before the close stays in its causal context once dropped, so that replica no
 * longer calls it closed off, though it was never applied.
 */
export function droppedByClose(
  record: RunRecord,
  procs: readonly SimProcess[],
): (id: OpId) => boolean {
  const committed = new Set(allCommitLists(record).flatMap((l) => l.commits.flat().map(opKey)));
  return (id) =>
    !committed.has(opKey(id)) &&
    procs.some((p) => {
      if (!p.up) return false;
      const cut = p.host.inspect().replica.closedCut(id.replica);
      return cut !== undefined && id.eventNo > cut;
    });
}
