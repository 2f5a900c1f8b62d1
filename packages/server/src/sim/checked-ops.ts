import { canonicalJson, type App, type JsonValue } from '@creek/app';
import { formatOpId, opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { Outcome } from '@creek/replica/core/types.js';
import { ReferenceInterpreter, type SerialOp } from './reference-interpreter.js';
import { longestCommitted, type Invocation, type RunRecord } from './run-record.js';

/**
 * What the checkers share about the run's ops: how to replay one (its Req, as the reference
 * interpreter runs it), how to name one in a violation, and which ones the planted
 * nondeterministic op reaches (sim/nondeterminism.ts), which the checkers that hold answers and
 * states to a serial execution leave out.
 */

/**
 * The planted nondeterministic op (SimConfig.nondeterministic), and the prefixes of the keys its
 * effects reach: its own, and its sessions' records of its outcomes.
 */
export interface Planted {
  readonly op: string;
  readonly prefixes: readonly string[];
}

export function isPlantedKey(key: unknown, planted: Planted): boolean {
  return typeof key === 'string' && planted.prefixes.some((p) => key.startsWith(p));
}

/** The invocation is the planted op, or reads or writes one of its keys. */
export function touchesPlanted(
  inv: { readonly op: string; readonly args: JsonValue },
  planted: Planted | null,
): boolean {
  if (planted === null) return false;
  return (
    inv.op === planted.op || isPlantedKey((inv.args as { key?: unknown } | null)?.key, planted)
  );
}

/** A state as canonical JSON without the planted op's keys (none planted: as it is). */
export function withoutPlanted(stateJson: string, planted: Planted | null): string {
  if (planted === null) return stateJson;
  const state = JSON.parse(stateJson) as Record<string, JsonValue>;
  return canonicalJson(
    Object.fromEntries(Object.entries(state).filter(([k]) => !isPlantedKey(k, planted))),
  );
}

/** The Req of a committed op, as the reference interpreter replays it; throws if the run has none. */
export function serialOp(record: RunRecord, id: OpId): SerialOp {
  const req = record.reqs.get(opKey(id));
  if (req === undefined) throw new Error(`checker: no Req recorded for ${formatOpId(id)}`);
  return req;
}

const replays = new WeakMap<RunRecord, ReadonlyMap<string, Outcome>>();

/**
 * Each op's result in the reference interpreter's serial execution of the run's final committed
 * order (its longest commit list), by op key: what (c) holds stable answers to, and what the
 * linearizability checker takes a weak op's unseen result to be. Made once per record, when the
 * run is over; throws if an op of the order has no Req.
 */
export function committedOutcomes(record: RunRecord, app: App): ReadonlyMap<string, Outcome> {
  let out = replays.get(record);
  if (out === undefined) {
    const outcomes = new Map<string, Outcome>();
    const reference = new ReferenceInterpreter(app);
    for (const id of longestCommitted(record))
      outcomes.set(opKey(id), reference.apply(serialOp(record, id)));
    replays.set(record, (out = outcomes));
  }
  return out;
}

/** An invocation as a violation names it: level, op, arguments, id and replica. */
export function describe(inv: Invocation): string {
  const id = inv.id === null ? 'read-only' : formatOpId(inv.id);
  return `${inv.strong ? 'strong' : 'weak'} ${inv.op}(${JSON.stringify(inv.args)}) ${id} at replica ${inv.replica}`;
}

export function show(o: Outcome): string {
  return o.ok ? JSON.stringify(o.value) : `error "${o.error}"`;
}

export function clip(s: string): string {
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}
