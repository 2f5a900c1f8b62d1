import {
  ABANDON_OP,
  checkArgs,
  CLOSE_OP,
  jsonEqual,
  NOOP_OP,
  type App,
  type JsonValue,
} from '@creek/app';
import { opKey } from '@creek/replica/core/op-id.js';
import { duplicateError } from '@creek/replica/core/session-dedupe.js';
import type { Outcome, Req } from '@creek/replica/core/types.js';
import type { OpContext } from './app-model.js';
import { committedOutcomes, describe, touchesPlanted, type Planted } from './checked-ops.js';
import { footprintOf, splitByResult, type Footprint } from './footprints.js';
import type { HistoryOp } from './linearizability.js';
import type { Invocation, RunRecord } from './run-record.js';
import {
  Copies,
  describeClientOp,
  stableAnswer,
  stampKey,
  unhealthyError,
} from './session-checkers.js';

/** The history of one object: the ops on keys no op outside it touches. */
export interface ObjectHistory {
  /** Its keys, for messages: `key k/3`, `queue q0`, `key acct/0, key acct/1, prefix acct/`. */
  readonly name: string;
  readonly ops: HistoryOp[];
}

/** One op a client asked for, however many copies of it replicas took (a resubmission is one). */
interface ClientOp {
  readonly id: string;
  readonly op: string;
  readonly args: JsonValue;
  readonly invokedAt: number;
  /** The answer its client got at the stable level (for a strong op, or a weak op answered once committed). */
  readonly answer: { readonly at: number; readonly outcome: Outcome } | null;
  /** Its session and number (Copies), or null for an op outside any session. */
  readonly stamp: string | null;
  /** The replicas' invocations of it (each copy as a replica took it). */
  readonly copies: readonly Invocation[];
}

/**
 * The run's history as the linearizability checker takes it: every op a client asked for that
 * orders or changes anything, strong and weak alike, split into objects by the keys the ops
 * touch (footprints.ts), so that each object is searched on its own (Porcupine's partitioning).
 *
 * - A strong op is the client's: from its first submission to its stable answer (one op however
 *   many copies replicas took); a weak op that updates, and a strong op whose answer never came,
 *   took effect if a copy of it is in the final committed order (the first one, unless an abandon
 *   of it precedes it) and not otherwise, and if it did, no later than the first stable answer
 *   any replica gave to an op after it in that order (that replica had committed both by then).
 *   A weak op's result is seen by nobody; its effect is what the model makes of it where the
 *   search places it. Only a run that lost a disk leaves an op not in the order undecided: its Req
 *   may have gone with the disk.
 * - Weak read-only ops are left out (they read whatever their replica has), and so are ops a
 *   replica refused, `creek.abandon` (the fates above say what it did), and the planted op.
 * - The committed order is also the order tried first (HistoryOp.order), and the ops whose
 *   results nobody saw keep it among themselves (HistoryOp.sequence). What it settles only
 *   removes linearizations, so it hides no violation.
 */
export function objectHistories(
  record: RunRecord,
  app: App,
  planted: Planted | null = null,
): ObjectHistory[] {
  const copies = new Copies(record);
  const at = new Map<string, number>();
  copies.order.forEach((id, i) => at.set(opKey(id), i));
  const bounds = effectBounds(record, at, copies.order.length);
  const lostDisk = onLostDisk(record);
  let replay: ReadonlyMap<string, Outcome> | null = null;
  const replayed = (key: string): Outcome | undefined => {
    try {
      replay ??= committedOutcomes(record, app);
    } catch {
      replay = new Map(); // an op of the order without its Req: (c) reports it
    }
    return replay.get(key);
  };

  const entries: { op: HistoryOp; fp: Footprint | null }[] = [];
  for (const c of clientOps(record)) {
    if (c.op === ABANDON_OP || c.op === NOOP_OP || c.op === CLOSE_OP || touchesPlanted(c, planted))
      continue;
    // Abandoned before any copy of it took effect: it never does, and its answers say so.
    if (c.stamp !== null && copies.abandonedFirst(c.stamp)) continue;
    const def = app.lookup(c.op);
    const readOnly = def?.readOnly === true;
    const effective = c.stamp === null ? null : (copies.effective(c.stamp) ?? null);
    const position = effective?.at ?? readPosition(c);
    const req = effective === null ? undefined : record.reqs.get(opKey(effective.id));
    // As replicas run it: parsed by the op's schema (kv.increment's `by` defaults to 1), as its
    // Req has them.
    const checked = req !== undefined || def === undefined ? null : checkArgs(c.op, def, c.args);
    const args = req?.args ?? (checked?.ok === true ? (checked.args as JsonValue) : c.args);
    // Whether it took effect: a copy in the committed order that no abandon precedes; none
    // there, not (unless the copy went with a lost disk).
    const tookEffect =
      effective !== null ? true : c.copies.some((inv) => lostDisk(inv)) ? undefined : false;
    if (c.answer === null && (readOnly || tookEffect === false)) continue;
    const fp = footprintOf(c.op, args);
    const ctx = (fp === null || fp.readsContext) && req !== undefined ? contextOf(req) : undefined;
    const bound = effective === null ? undefined : bounds[effective.at];
    const base: HistoryOp = {
      id: c.id,
      op: c.op,
      args,
      invokedAt: c.invokedAt,
      completed: c.answer,
      ...(c.answer === null && tookEffect !== undefined ? { tookEffect } : {}),
      ...(c.answer === null && bound !== undefined ? { takesEffectBy: bound } : {}),
      // Whatever nobody saw took effect in the committed order.
      ...(c.answer === null && effective !== null ? { sequence: effective.at } : {}),
      ...(position === undefined ? {} : { order: position }),
      ...(ctx === undefined ? {} : { ctx }),
    };
    // An op that splits once its result is known: by the answer, or else by its result in the
    // committed order (seen by nobody; whatever the search may place, it must be that).
    const result =
      c.answer?.outcome ?? (effective === null ? undefined : replayed(opKey(effective.id)));
    const parts = result?.ok === true ? splitByResult(c.op, args, result.value) : null;
    if (parts === null) {
      entries.push({ op: base, fp });
      continue;
    }
    for (const part of parts) {
      const partFp = footprintOf(part.op, part.args);
      const id = `${c.id}, its ${part.op} ${JSON.stringify(part.args)}`;
      const common = { ...base, id, op: part.op, args: part.args };
      if (part.returnsResult) {
        if (c.answer !== null) entries.push({ op: common, fp: partFp });
        else if (app.lookup(part.op)?.readOnly !== true)
          entries.push({
            op: {
              ...common,
              completed: null,
              tookEffect: true,
              ...(position === undefined ? {} : { sequence: position }),
            },
            fp: partFp,
          });
        continue;
      }
      // A piece that returns nothing of the op's: it took effect by the op's answer.
      const by = c.answer?.at ?? bound;
      entries.push({
        op: {
          ...common,
          completed: null,
          tookEffect: true,
          ...(by === undefined ? {} : { takesEffectBy: by }),
          ...(position === undefined ? {} : { sequence: position }),
        },
        fp: partFp,
      });
    }
  }
  return partition(entries);
}

/** The ops clients asked for: the callers' own (clients 'sdk'), or the model's invocations. */
function clientOps(record: RunRecord): ClientOp[] {
  const bySession = new Map<string, Invocation[]>();
  const alone: Invocation[] = [];
  for (const inv of record.invocations) {
    if (inv.session === undefined) {
      alone.push(inv);
      continue;
    }
    const key = stampKey(inv.session.id, inv.session.seq);
    const list = bySession.get(key);
    if (list === undefined) bySession.set(key, [inv]);
    else list.push(inv);
  }
  if (record.clientOps !== undefined)
    return record.clientOps
      .filter((r) => !unhealthyError(r))
      .map((r) => {
        const stamp = stampKey(r.session, r.seq);
        return {
          id: describeClientOp(r),
          op: r.op,
          args: r.args,
          invokedAt: r.invokedAt,
          answer: stableAnswer(r),
          stamp,
          copies: bySession.get(stamp) ?? [],
        };
      });
  const out: ClientOp[] = [];
  const add = (stamp: string | null, all: Invocation[]): void => {
    // A copy a replica refused, or dropped with its closed origin, was never applied; its client
    // was told so, and may have resubmitted the op elsewhere: the op is what its other copies did.
    const copies = all.filter((inv) => !inv.responses.some((r) => r.level === 'failed'));
    if (copies.length === 0) return;
    const first = copies.find((inv) => inv.id !== null) ?? copies[0]!;
    let answer: ClientOp['answer'] = null;
    for (const inv of copies)
      for (const r of inv.responses)
        if (
          r.level === 'stable' &&
          !refusedAsDuplicate(inv, r.outcome) &&
          (answer === null || r.at < answer.at)
        )
          answer = { at: r.at, outcome: r.outcome };
    out.push({
      id: copies.length === 1 ? describe(first) : `${describe(first)} (${copies.length} copies)`,
      op: first.op,
      args: first.args,
      // The client asked from its first copy on.
      invokedAt: Math.min(...all.map((inv) => inv.invokedAt)),
      answer,
      stamp,
      copies,
    });
  };
  for (const [stamp, copies] of bySession) add(stamp, copies);
  for (const inv of alone) add(null, [inv]);
  return out;
}

/**
 * A copy refused because its op was already settled: the session had acknowledged the op (an
 * earlier copy's answer, or an abandon of it that found it had run) before this copy's place in
 * the order. The refusal says the op was applied elsewhere, not what it returned, so it is no
 * answer of the op; where the op took effect is its first copy's place.
 */
function refusedAsDuplicate(inv: Invocation, outcome: Outcome): boolean {
  return (
    !outcome.ok && inv.session !== undefined && outcome.error === duplicateError(inv.session.seq)
  );
}

/**
 * A strong read answered by read index: just before the op at the committed position it read, in
 * the response its client took (the last stable one with its answer given by the time the client
 * had it). Each copy of a resubmitted read reads at a position of its own, often far apart (one
 * replica cut off, the other not): another copy's would place the read where the state was never
 * its answer, and the committed order would explain nothing after it.
 */
function readPosition(c: ClientOp): number | undefined {
  const answer = c.answer;
  if (answer === null) return undefined;
  let taken: { readonly at: number; readonly position: number } | null = null;
  for (const inv of c.copies)
    for (const r of inv.responses)
      if (
        r.level === 'stable' &&
        r.position !== undefined &&
        r.at <= answer.at &&
        sameOutcome(r.outcome, answer.outcome) &&
        (taken === null || r.at > taken.at)
      )
        taken = { at: r.at, position: r.position };
  return taken === null ? undefined : taken.position - 0.5;
}

function sameOutcome(a: Outcome, b: Outcome): boolean {
  if (a.ok) return b.ok && jsonEqual(a.value, b.value);
  return !b.ok && a.error === b.error;
}

/** What the app model reads of an op besides its arguments (OpContext), as HistoryOp.ctx. */
function contextOf(req: Req): JsonValue {
  const ctx: OpContext = {
    ts: req.ts,
    id: req.id,
    ...(req.user === undefined ? {} : { user: req.user }),
  };
  return ctx as unknown as JsonValue;
}

/**
 * Per committed position p, the earliest time a replica gave a stable answer to an op at p or
 * after it: it had committed p by then, so whatever is at p took effect by then (undefined: no
 * such answer). Answers given on a lost disk are left out (their ids may be used again).
 */
function effectBounds(
  record: RunRecord,
  at: ReadonlyMap<string, number>,
  length: number,
): (number | undefined)[] {
  const first = new Array<number>(length).fill(Number.POSITIVE_INFINITY);
  const lostDisk = onLostDisk(record);
  for (const inv of record.invocations) {
    if (lostDisk(inv)) continue;
    for (const r of inv.responses) {
      if (r.level !== 'stable') continue;
      // A read by read index read the state after `position` ops: those were committed.
      const p = inv.id !== null ? at.get(opKey(inv.id)) : (r.position ?? 0) - 1;
      if (p !== undefined && p >= 0 && p < length) first[p] = Math.min(first[p]!, r.at);
    }
  }
  const out = new Array<number | undefined>(length);
  let min = Number.POSITIVE_INFINITY;
  for (let p = length - 1; p >= 0; p--) {
    min = Math.min(min, first[p]!);
    out[p] = Number.isFinite(min) ? min : undefined;
  }
  return out;
}

/** Whether an invocation ran on a disk its replica lost later (RunRecord.retired). */
function onLostDisk(record: RunRecord): (inv: Invocation) => boolean {
  const lost = new Map<number, number>();
  for (const r of record.retired)
    lost.set(r.replica, Math.max(lost.get(r.replica) ?? 0, r.disk + 1));
  return (inv) => (inv.disk ?? 0) < (lost.get(inv.replica) ?? 0);
}

/**
 * Splits the ops into objects: ops whose footprints share a key, or a key and a prefix of it,
 * go together (union-find over the keys and prefixes); an op without a footprint joins them all.
 */
function partition(entries: readonly { op: HistoryOp; fp: Footprint | null }[]): ObjectHistory[] {
  if (entries.some((e) => e.fp === null))
    return entries.length === 0 ? [] : [{ name: 'every key', ops: entries.map((e) => e.op) }];
  const items = new Map<string, number>();
  const parent: number[] = [];
  const item = (s: string): number => {
    let i = items.get(s);
    if (i === undefined) {
      i = parent.length;
      items.set(s, i);
      parent.push(i);
    }
    return i;
  };
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const union = (a: number, b: number): void => {
    parent[find(a)] = find(b);
  };
  const itemsOf = (fp: Footprint): number[] => [
    ...fp.keys.map((k) => item(`key ${k}`)),
    ...fp.prefixes.map((p) => item(`prefix ${p}`)),
  ];
  for (const e of entries) {
    const own = itemsOf(e.fp!);
    for (const i of own.slice(1)) union(own[0]!, i);
  }
  // A prefix covers the keys and the prefixes that start with it.
  const names = [...items.keys()];
  for (const a of names) {
    if (!a.startsWith('prefix ')) continue;
    const prefix = a.slice('prefix '.length);
    for (const b of names)
      if (b !== a && b.slice(b.indexOf(' ') + 1).startsWith(prefix))
        union(items.get(a)!, items.get(b)!);
  }
  const groups = new Map<number, { items: string[]; ops: HistoryOp[] }>();
  for (const name of names) {
    const root = find(items.get(name)!);
    let g = groups.get(root);
    if (g === undefined) groups.set(root, (g = { items: [], ops: [] }));
    g.items.push(name);
  }
  for (const e of entries) groups.get(find(itemsOf(e.fp!)[0]!))!.ops.push(e.op);
  return [...groups.values()]
    .filter((g) => g.ops.length > 0)
    .map((g) => ({ name: objectName(g.items), ops: g.ops }));
}

/** `key k/3`, `queue q0`, or a list of the keys and prefixes. */
function objectName(items: readonly string[]): string {
  const shown = [...items].sort().map((s) => {
    const queue = /^prefix ~queue\/(.+)\/$/.exec(s);
    return queue === null ? s : `queue ${queue[1]}`;
  });
  if (shown.length === 1) return shown[0]!;
  const head = shown.slice(0, 4).join(', ');
  return shown.length > 4 ? `${head} and ${shown.length - 4} more` : head;
}
