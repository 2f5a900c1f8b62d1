import type { JsonValue } from '@creek/app';
import { checkLinearizable, queueModel, type HistoryOp, type Model } from '@creek/server/sim';
import type { History, RecordedOp } from './history.js';
import { agreesWithReference, listModel } from './list-model.js';

/**
 * The checks of a recorded history (history.ts), after the run has healed and read its final
 * state:
 *
 * - strong ops are linearizable, object by object (a list key, a queue), under the simulator's
 *   checker, with the ops' semantics as the sequential specification: list-model.ts for lists
 *   (checked against the reference interpreter on the final order) and the simulator's model of
 *   the built-in queue. Weak ops are in each history as ops whose answers nobody may rely on: they
 *   took effect where the final state says so, anywhere after their invocation. Ops whose fate is
 *   unknown (indeterminate) are settled by the final state where it tells, and left open where it
 *   cannot;
 * - every acknowledged strong op, and every weak op whose `committed()` resolved, took effect
 *   exactly once; an op the client was told never takes effect did not;
 * - a weak op acknowledged only tentatively, by a replica whose data was later lost for good (wiped,
 *   replaced), and absent from the final state, is counted apart: the documented limit of weak ops.
 *
 * Pure: no cluster, no clock. The runner adds what only it can see (convergence, crashes).
 */

export interface Counts {
  ops: number;
  strong: number;
  weak: number;
  /** Answered (a strong op's stable answer, a weak op's tentative one). */
  acknowledged: number;
  /** Failed with the client told they did not take effect. */
  failed: number;
  /** Fate unknown to the client (timeout, replica gone) or no outcome by the end. */
  indeterminate: number;
  /** Of the indeterminate writes: the final state shows they took effect / did not. */
  resolvedTookEffect: number;
  resolvedNotTaken: number;
  /**
   * Indeterminate writes the final state cannot settle: a queue item an unseen dequeue may hold, a
   * dequeue never known committed.
   */
  unresolved: number;
  /** Weak ops acknowledged by a replica later lost for good, and absent at the end. */
  lostWithReplica: number;
  /**
   * Acknowledged strong ops and committed weak ops missing from the final state (a queue's count
   * beyond what unseen dequeues may hold).
   */
  acknowledgedLost: number;
  /** Objects (list keys, queues) checked for linearizability, and those found linearizable. */
  objects: number;
  linearizable: number;
}

export interface Verdict {
  readonly ok: boolean;
  /** One sentence per violation, naming the object and the ops. */
  readonly violations: readonly string[];
  readonly counts: Counts;
}

/** Configurations one object's search may explore before it gives up (reported as a violation). */
const MAX_STATES = 2_000_000;

export function checkHistory(history: History): Verdict {
  const violations: string[] = [];
  const counts: Counts = {
    ops: history.ops.length,
    strong: history.ops.filter((o) => o.level === 'strong').length,
    weak: history.ops.filter((o) => o.level === 'weak').length,
    acknowledged: history.ops.filter((o) => o.outcome?.type === 'ok').length,
    failed: history.ops.filter((o) => o.outcome?.type === 'failed').length,
    indeterminate: history.ops.filter(
      (o) => o.outcome === null || o.outcome.type === 'indeterminate',
    ).length,
    resolvedTookEffect: 0,
    resolvedNotTaken: 0,
    unresolved: 0,
    lostWithReplica: 0,
    acknowledgedLost: 0,
    objects: 0,
    linearizable: 0,
  };
  const lists = new Map<string, RecordedOp[]>();
  const queues = new Map<string, RecordedOp[]>();
  for (const o of history.ops) {
    const target = o.kind === 'append' || o.kind === 'read' ? lists : queues;
    const name = field(o.args, o.kind === 'append' || o.kind === 'read' ? 'key' : 'queue');
    const list = target.get(name);
    if (list === undefined) target.set(name, [o]);
    else list.push(o);
  }
  for (const [key, ops] of lists) checkList(key, ops, history, counts, violations);
  for (const [queue, ops] of queues) checkQueue(queue, ops, counts, violations);
  return { ok: violations.length === 0, violations, counts };
}

function field(args: JsonValue, name: string): string {
  const v = (args as Record<string, JsonValue>)[name];
  if (typeof v !== 'string')
    throw new Error(`an op without a string '${name}': ${JSON.stringify(args)}`);
  return v;
}

const answered = (o: RecordedOp): boolean => o.outcome?.type === 'ok';
/** The op's answer, if it got one. */
const answerOf = (o: RecordedOp): JsonValue | undefined =>
  o.outcome?.type === 'ok' ? o.outcome.value : undefined;
const unknownFate = (o: RecordedOp): boolean =>
  o.outcome === null || o.outcome.type === 'indeterminate';
/** The client was told the op never takes effect. */
const toldNotApplied = (o: RecordedOp): boolean =>
  o.outcome?.type === 'failed' || o.committed === 'never';
/** The system promised the op's effect: a strong op's stable answer, or a weak op's commit. */
const promised = (o: RecordedOp): boolean =>
  (o.level === 'strong' && answered(o)) || o.committed === true;

/** A weak op answered only by a replica whose data was lost for good after it answered. */
function answeredByLostReplica(o: RecordedOp, history: History): boolean {
  const out = o.outcome;
  if (out?.type !== 'ok' || out.replica === null) return false;
  return history.lost.some((l) => l.replica === out.replica && l.at >= out.at);
}

function checkList(
  key: string,
  ops: readonly RecordedOp[],
  history: History,
  counts: Counts,
  violations: string[],
): void {
  const finals = ops.filter((o) => o.final === true && answered(o));
  const last = finals.at(-1);
  if (last === undefined) {
    violations.push(`list ${key}: no final read answered, so nothing about it can be checked`);
    return;
  }
  const final = answerOf(last) as string[];
  const positions = new Map<string, number[]>();
  final.forEach((v, i) => positions.set(v, [...(positions.get(v) ?? []), i]));
  const appends = ops.filter((o) => o.kind === 'append');
  const appended = new Set(appends.map((o) => field(o.args, 'value')));
  for (const v of final)
    if (!appended.has(v)) violations.push(`list ${key}: holds '${v}', which no op appended`);

  const linear: HistoryOp[] = [];
  for (const o of appends) {
    const at = positions.get(field(o.args, 'value')) ?? [];
    if (at.length > 1)
      violations.push(
        `list ${key}: ${describe(o)} took effect ${at.length} times (positions ${at.join(', ')})`,
      );
    const took = at.length > 0;
    if (promised(o) && !took) counts.acknowledgedLost++;
    if (promised(o) && !took)
      violations.push(
        `list ${key}: ${describe(o)} was ${o.level === 'strong' ? 'acknowledged' : 'committed'}, and is not in the final state`,
      );
    else if (toldNotApplied(o) && took)
      violations.push(
        `list ${key}: ${describe(o)} took effect, though its client was told it never would`,
      );
    else if (o.level === 'weak' && answered(o) && !took) {
      if (answeredByLostReplica(o, history)) counts.lostWithReplica++;
      else
        violations.push(
          `list ${key}: ${describe(o)} was acknowledged by replica ${o.outcome?.type === 'ok' ? o.outcome.replica : '?'}, whose data was never lost, and is not in the final state`,
        );
    }
    if (unknownFate(o)) {
      if (took) counts.resolvedTookEffect++;
      else counts.resolvedNotTaken++;
    }
    if (toldNotApplied(o) && !took) continue;
    const strongAnswer = o.level === 'strong' && answered(o);
    linear.push({
      ...historyOp(o, strongAnswer),
      ...(strongAnswer ? {} : { tookEffect: took }),
      // The final list is the order the appends took effect in (the app appends at the end).
      ...(took ? { sequence: at[0]!, order: at[0]! } : {}),
    });
  }
  for (const o of ops)
    if (o.kind === 'read' && o.level === 'strong' && answered(o)) linear.push(historyOp(o, true));
  for (const o of ops)
    if (o.kind === 'read' && o.level === 'weak' && answered(o)) {
      const seen = answerOf(o) as string[];
      const phantom = seen.find((v) => !appended.has(v));
      if (phantom !== undefined)
        violations.push(`list ${key}: ${describe(o)} read '${phantom}', which no op appended`);
      if (new Set(seen).size !== seen.length)
        violations.push(`list ${key}: ${describe(o)} read a value twice: ${JSON.stringify(seen)}`);
    }
  const disagreement = agreesWithReference(key, final);
  if (disagreement !== null) violations.push(disagreement);
  linearizable(`list ${key}`, linear, listModel(final), counts, violations);
}

function checkQueue(
  queue: string,
  ops: readonly RecordedOp[],
  counts: Counts,
  violations: string[],
): void {
  const drain = ops.filter((o) => o.final === true);
  const lastDrain = drain.at(-1);
  if (lastDrain === undefined || answerOf(lastDrain) !== null) {
    violations.push(
      `queue ${queue}: the final drain did not end with an empty queue, so nothing about it can be checked`,
    );
    return;
  }
  // What answered dequeues returned, item by item; dequeues whose result nobody saw may hold more.
  // Where each item stood in the queue (its enqueue's place among the enqueues that took effect),
  // as a dequeue of it or its strong enqueue's answer said.
  const taken = new Map<string, number>();
  const position = new Map<string, number>();
  let unseenDequeues = 0;
  for (const o of ops) {
    if (o.kind !== 'dequeue') continue;
    if (o.level === 'strong' && answered(o)) {
      const v = answerOf(o) as { item?: JsonValue; position?: number } | null;
      if (v !== null && typeof v.item === 'string') {
        taken.set(v.item, (taken.get(v.item) ?? 0) + 1);
        if (typeof v.position === 'number') position.set(v.item, v.position);
      }
    } else if (!toldNotApplied(o)) unseenDequeues++;
  }
  for (const o of ops)
    if (o.kind === 'enqueue' && o.level === 'strong' && answered(o)) {
      const v = answerOf(o) as { position?: number } | null;
      if (typeof v?.position === 'number') position.set(field(o.args, 'item'), v.position);
    }
  const enqueues = ops.filter((o) => o.kind === 'enqueue');
  const items = new Set(enqueues.map((o) => field(o.args, 'item')));
  for (const item of taken.keys())
    if (!items.has(item))
      violations.push(`queue ${queue}: a dequeue returned '${item}', which no op enqueued`);
  let missing = 0;
  const linear: HistoryOp[] = [];
  for (const o of enqueues) {
    const n = taken.get(field(o.args, 'item')) ?? 0;
    if (n > 1)
      violations.push(`queue ${queue}: the item of ${describe(o)} was dequeued ${n} times`);
    if (toldNotApplied(o) && n > 0)
      violations.push(
        `queue ${queue}: ${describe(o)} took effect, though its client was told it never would`,
      );
    if (promised(o) && n === 0) missing++;
    // Not dequeued by an answered op: it never took effect, unless a dequeue nobody saw took it.
    const took =
      n > 0 ? true : o.committed === true ? true : unseenDequeues === 0 ? false : undefined;
    if (unknownFate(o)) {
      if (took === true) counts.resolvedTookEffect++;
      else if (took === false) counts.resolvedNotTaken++;
      else counts.unresolved++;
    }
    if (toldNotApplied(o) && n === 0) continue;
    const strongAnswer = o.level === 'strong' && answered(o);
    // The enqueues that took effect did so in the order of their positions: told to the search,
    // a weak enqueue (which may go anywhere after its invocation) is not tried in every order.
    const at = took === false ? undefined : position.get(field(o.args, 'item'));
    linear.push({
      ...historyOp(o, strongAnswer),
      ...(strongAnswer || took === undefined ? {} : { tookEffect: took }),
      ...(at === undefined ? {} : { sequence: at, order: at }),
    });
  }
  counts.acknowledgedLost += Math.max(0, missing - unseenDequeues);
  if (missing > unseenDequeues)
    violations.push(
      `queue ${queue}: ${missing} acknowledged items were never dequeued, and only ${unseenDequeues} dequeues went unseen`,
    );
  for (const o of ops) {
    if (o.kind !== 'dequeue' || toldNotApplied(o)) continue;
    // A dequeue nobody saw the answer of: committed, it took effect, but what it took is unknown.
    if (unknownFate(o)) {
      if (o.committed === true) counts.resolvedTookEffect++;
      else counts.unresolved++;
    }
    const strongAnswer = o.level === 'strong' && answered(o);
    linear.push({
      ...historyOp(o, strongAnswer),
      ...(o.committed === true && !strongAnswer ? { tookEffect: true } : {}),
    });
  }
  linearizable(`queue ${queue}`, linear, queueModel, counts, violations);
}

function linearizable<S>(
  name: string,
  ops: HistoryOp[],
  model: Model<S>,
  counts: Counts,
  violations: string[],
): void {
  counts.objects++;
  const r = checkLinearizable(ops, model, { maxStates: MAX_STATES });
  if (r.ok) counts.linearizable++;
  else violations.push(`${name}: ${r.reason}`);
}

/** `o` as the checker's history op: its outcome counts only if `withOutcome` (a strong answer). */
function historyOp(o: RecordedOp, withOutcome: boolean): HistoryOp {
  return {
    id: describe(o),
    op: o.op,
    args: o.args,
    invokedAt: o.invokedAt,
    completed: withOutcome ? completion(o) : null,
  };
}

function completion(o: RecordedOp): HistoryOp['completed'] {
  const out = o.outcome!;
  return out.type === 'ok'
    ? { at: out.at, outcome: { ok: true, value: out.value } }
    : {
        at: out.at,
        outcome: { ok: false, error: out.type === 'failed' ? out.error : 'indeterminate' },
      };
}

/** `c1/42 (strong list.append {"key":"r3","value":"c1/42"})`. */
export function describe(o: RecordedOp): string {
  return `${o.id} (${o.level} ${o.op} ${JSON.stringify(o.args)})`;
}
