import type { DottedVersionVector } from './dvv.js';
import type { JsonValue } from '@creek/app';
import type { Req } from './types.js';

/**
 * What a replica needs to recover without the records of its finalized prefix (`Replica.checkpoint`,
 * `Replica.recover`). Finalized ops are committed, executed at their final position and never
 * change again, so they are summed up by the state they leave; everything that can still change
 * (committed ops not yet final, tentative ops) is kept as Reqs. A checkpoint supersedes every core
 * record written before it: recovery from a checkpoint plus the records after it rebuilds the same
 * replica as recovery from every record since the beginning.
 */
export interface ReplicaCheckpoint {
  /** Ops in the finalized prefix of the committed list. */
  readonly finalized: number;
  /** The state after the finalized prefix: every key with a value, sorted by key. */
  readonly state: ReadonlyArray<readonly [string, JsonValue]>;
  /**
   * The Reqs of every op on the list that is not final: first `committedLive` committed ones in
   * commit order, then the tentative ones in their (timestamp, id) order.
   */
  readonly reqs: readonly Req[];
  readonly committedLive: number;
  /** Algorithm 1's `causalCtx` set: the delivered weak ops and the CAB-delivered strong ops. */
  readonly known: DottedVersionVector;
  /** The hybrid logical clock: no later op of this replica may get a smaller timestamp. */
  readonly hlc: number;
  /** The last event number this replica issued (its op ids are never reused). */
  readonly eventNo: number;
  /** Event number of this replica's last strong op (0 if none), for per-origin CAB order. */
  readonly lastStrongEventNo: number;
  /**
   * Event number of this replica's last strong op that is final (0 if none): the `prevStrong` of
   * its first strong op that is not, which recovery CAB-casts again.
   */
  readonly finalizedOwnStrong: number;
  /**
   * Closed origins and their cuts, as `[origin, cut]` (core/closing-origins.ts): a close
   * finalized in the checkpoint's prefix still refuses its origin's ops above the cut. Absent
   * from checkpoints written before origins closed: none.
   */
  readonly closed?: ReadonlyArray<readonly [number, number]>;
}
