import {
  jsonEqual,
  toFrozenJson,
  type AnyOpDefinition,
  type JsonValue,
  type StateReader,
  type User,
} from '@creek/app';
import type { OpId } from '@creek/replica/core/op-id.js';
import { runOperation } from '@creek/replica/core/run-operation.js';
import type { Outcome } from '@creek/replica/core/types.js';

/**
 * States, op runs and their effects, as the advisor (advise-app.ts) reasons about them.
 *
 * Gemini (RedBlue, §5.1) splits an op into a generator, which reads the state where it runs and
 * decides what to change, and a shadow op, which makes that change wherever it is applied. A Creek
 * op is written as one function; its shadow op is read off the writes it made on the state it ran
 * on: a number it wrote that follows the number the key held becomes an addition of the
 * difference (a deposit of 10 on a balance of 100 wrote 110, and on a balance of 200 would write
 * 210: its shadow op adds 10, whatever the balance where it lands), and any other write is a put
 * or a delete of the value written (a price set to 7 is 7 wherever it lands). That is the form Gemini's bank takes by hand (Figure
 * 4: `deposit'` adds, `withdrawAck'` subtracts, `withdrawFail'` changes nothing), and the one an
 * op that counts must have for its weak runs to commute with each other.
 */

/** A state: keys and values, as a replica's store holds them. */
export type State = ReadonlyMap<string, JsonValue>;

/** One change of a shadow op. */
export type Change =
  | { readonly kind: 'add'; readonly key: string; readonly by: number }
  | { readonly kind: 'put'; readonly key: string; readonly value: JsonValue }
  | { readonly kind: 'delete'; readonly key: string };

/** One run of an op on a state: its answer and its shadow op (empty when it failed). */
export interface Ran {
  readonly outcome: Outcome;
  readonly effect: readonly Change[];
}

/** One call of an op: its arguments (checked by its schema) and its caller. */
export interface Call {
  readonly op: string;
  readonly args: JsonValue;
  readonly user: User | null;
}

const byKey = (a: [string, JsonValue], b: [string, JsonValue]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;

/** `state` as an invariant, and as an op's snapshot, reads it. */
export function readerOf(state: State): StateReader {
  return {
    get: (key) => state.get(key),
    scan: (prefix) => [...state].filter(([k]) => k.startsWith(prefix)).sort(byKey),
  };
}

let jobs = 0;

/**
 * Runs `call` on `state` as a replica's executor does (runOperation, under the execution guard),
 * at timestamp `ts` (µs) with id `id`; returns its answer and its shadow op.
 */
export function runOn(def: AnyOpDefinition, call: Call, state: State, ts: number, id: OpId): Ran {
  const result = run(def, call, state, ts, id);
  if (!result.outcome.ok) return { outcome: result.outcome, effect: [] };
  const effect: Change[] = [];
  for (const [key, value] of result.writes) {
    if (value === undefined) effect.push({ kind: 'delete', key });
    else if (typeof value === 'number' && adds(def, call, state, ts, id, key, value))
      effect.push({ kind: 'add', key, by: value - asNumber(state.get(key)) });
    else effect.push({ kind: 'put', key, value });
  }
  return { outcome: result.outcome, effect };
}

function run(
  def: AnyOpDefinition,
  call: Call,
  state: State,
  ts: number,
  id: OpId,
  nudged?: { key: string; value: number },
) {
  return runOperation(def, {
    jobId: ++jobs,
    op: call.op,
    args: toFrozenJson(call.args),
    ts,
    id,
    snapshot:
      nudged === undefined ? readerOf(state) : nudgedReader(state, nudged.key, nudged.value),
    ...(call.user === null ? {} : { user: call.user }),
  });
}

/** `state` with `key` holding `value`, read without copying the state. */
function nudgedReader(state: State, key: string, value: number): StateReader {
  const read = readerOf(state);
  return {
    get: (k) => (k === key ? value : state.get(k)),
    scan: (prefix) => {
      if (!key.startsWith(prefix)) return read.scan(prefix);
      const rows = read.scan(prefix).filter(([k]) => k !== key);
      rows.push([key, value]);
      return rows.sort(byKey);
    },
  };
}

/** A key that holds no number counts as 0, as a counter that starts at 0. */
const asNumber = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);

/** How far the probe in `adds` moves a number. */
const NUDGE = 1_000_003;

/**
 * Whether the op, writing the number `wrote` to `key`, adds to what the key held: run again on
 * the state with that number (0 where there was none) moved by NUDGE, it writes `wrote` moved by
 * NUDGE too. A deposit does; a put of a price or a version does not, whatever the key held. The
 * second run is a probe only: its other writes and its answer do not count.
 */
function adds(
  def: AnyOpDefinition,
  call: Call,
  state: State,
  ts: number,
  id: OpId,
  key: string,
  wrote: number,
): boolean {
  const before = state.get(key);
  if (before !== undefined && typeof before !== 'number') return false;
  const probe = run(def, call, state, ts, id, { key, value: asNumber(before) + NUDGE });
  if (!probe.outcome.ok) return false;
  const again = probe.writes.find(([k]) => k === key)?.[1];
  return typeof again === 'number' && again - NUDGE === wrote;
}

/**
 * `state` with `effect` applied. An addition lands on whatever number the key holds there; on a
 * key that holds none (deleted or overwritten meanwhile) it adds to 0.
 */
export function apply(state: State, effect: readonly Change[]): State {
  const next = new Map(state);
  applyTo(next, effect);
  return next;
}

/** `apply`, in place. */
export function applyTo(state: Map<string, JsonValue>, effect: readonly Change[]): void {
  for (const c of effect) {
    if (c.kind === 'delete') state.delete(c.key);
    else if (c.kind === 'put') state.set(c.key, c.value);
    else state.set(c.key, asNumber(state.get(c.key)) + c.by);
  }
}

/** The keys whose values differ between two states, sorted. */
export function differingKeys(a: State, b: State): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => !jsonEqual(a.get(k), b.get(k))).sort();
}

/** The names of the invariants `state` breaks (one that throws counts as broken). */
export function brokenInvariants(
  invariants: Readonly<Record<string, (read: StateReader) => boolean>>,
  state: State,
): string[] {
  const read = readerOf(state);
  return Object.entries(invariants)
    .filter(([, holds]) => {
      try {
        return holds(read) !== true;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}
