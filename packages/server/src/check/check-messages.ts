import type { JsonValue } from '@creek/app';
import type { OpId } from '@creek/replica/core/op-id.js';
import type { Outcome, Write } from '@creek/replica/core/types.js';

/** The state an op runs on: keys and values, as a replica's store would hold them. */
export type StateEntries = Array<[key: string, value: JsonValue]>;

/** One invocation, as a replica would run it: arguments already checked by the op's schema. */
export interface Invocation {
  readonly op: string;
  readonly args: JsonValue;
  /** HLC timestamp (µs), for tx.now(). */
  readonly ts: number;
  /** Seeds tx.random(). */
  readonly id: OpId;
}

/**
 * What `creek check` asks an instance of the app (check-worker.ts) to do. An instance holds one
 * current state at a time, which every run reads (a run writes nothing to it: a replica applies an
 * op's writes only after it ran, and the check compares them instead).
 */
export type CheckRequest =
  /** Build the current state: run these ops in order from an empty one, keeping the writes of those that succeed. */
  | { readonly t: 'build'; readonly seq: number; readonly ops: readonly Invocation[] }
  /** Take this state, built by another instance, as the current one. */
  | { readonly t: 'adopt'; readonly seq: number; readonly state: StateEntries }
  /** Run one op on the current state. */
  | { readonly t: 'run'; readonly seq: number; readonly invocation: Invocation };

/** One run's result: what a replica would reply and store, and any guard refusal on the way. */
export interface RunResult {
  readonly outcome: Outcome;
  /** Sorted by key (a write of `undefined` is a delete). */
  readonly writes: readonly Write[];
  /** The execution guard's message, when the op reached for a refused source (caught or not). */
  readonly refused: string | null;
}

export type CheckReply =
  | { readonly t: 'ready' }
  | { readonly t: 'failed'; readonly error: string }
  | { readonly t: 'built'; readonly seq: number; readonly state: StateEntries }
  | { readonly t: 'adopted'; readonly seq: number }
  | { readonly t: 'ran'; readonly seq: number; readonly result: RunResult };
