import type { JsonValue } from '@creek/app';
import type { Rank } from './rank.js';
import type { PairHash } from './state-digest.js';
import type { CorrectionCause, Outcome, Req } from './types.js';

/** `commitSeq` of an entry still on the tentative list. */
export const TENTATIVE = Number.POSITIVE_INFINITY;

/** A version of one key (Creek §4.4): immutable (but for a cached hash), tagged by the entry that wrote it. */
export interface Version {
  readonly writer: Entry;
  readonly key: string;
  /** `undefined` is a delete (tombstone). */
  readonly value: JsonValue | undefined;
  /**
   * The hash this pair adds to the digest of the finalized state (state-digest.ts pairHash), once
   * known: set by a worker that ran the write, or when the version is finalized, and read again
   * when a later write replaces it, so each final value is hashed once.
   */
  pairHash?: PairHash;
  /**
   * The installation a store observer that mirrors the store numbered it with
   * (exec/mirror-feed.ts): a worker names the versions it read by key and this number.
   */
  install?: number;
}

/**
 * A new version. Made here, every version has one shape (the cached fields present from the
 * start), which keeps the store's hot loops over chains monomorphic.
 */
export function newVersion(
  writer: Entry,
  key: string,
  value: JsonValue | undefined,
  pairHash?: PairHash,
): Version {
  return { writer, key, value, pairHash, install: undefined };
}

/** What an execution read: one key (the version it saw), or a prefix scan (every version it saw). */
/**
 * What an execution read. `stale`: the read saw a version the store no longer has (an executor
 * that reads a mirror of the store, see exec/mirror-store.ts), so it can never validate.
 */
export type ReadRecord =
  | { readonly kind: 'key'; readonly key: string; version: Version | null; readonly stale?: true }
  | {
      readonly kind: 'scan';
      readonly prefix: string;
      versions: readonly Version[];
      readonly stale?: true;
    };

/** An execution whose versions are installed in the store. */
export interface Execution {
  readonly reads: ReadRecord[];
  readonly writes: readonly Version[];
  readonly outcome: Outcome;
  /**
   * Started beyond the validation frontier, concurrently with the executions before it (§4.4,
   * "concurrent execution"): its snapshot may miss their writes, so it is validated like any other.
   */
  readonly ahead: boolean;
}

/** Bookkeeping for ops invoked at this replica, whose client awaits responses. */
export interface LocalOp {
  readonly tag: number;
  /** The first response the client got (tentative, or stable if none came first). */
  first: Outcome | null;
  /** Whether that first response was tentative (it counts towards speculation accuracy). */
  firstWasTentative: boolean;
  /** The last tentative outcome sent, to avoid repeating an unchanged view. */
  lastTentative: Outcome | null;
  /**
   * What the execution behind the last tentative answer read (corrections.ts): a strong op's
   * stable answer that differs from it says which writes it had not seen. Null until then.
   */
  shown?: ShownReads | null;
}

/**
 * One operation on this replica's `committed · tentative` list, with its execution state.
 * The position of an entry is `(commitSeq, req.ts, req.id)`: committed entries by their index in the
 * committed list, tentative ones (commitSeq = TENTATIVE) after all of them, by timestamp and id.
 */
export class Entry {
  commitSeq = TENTATIVE;
  exec: Execution | null = null;
  /**
   * Why the op's answer last changed from one its client was shown, if known here
   * (corrections.ts): a later op that read its write inherits them.
   */
  causes?: readonly CorrectionCause[];
  /** Job id of an execution in flight, 0 if none. */
  running = 0;
  executions = 0;
  /** The replica's physical time when the entry arrived (for the no-op timer). */
  readonly arrivedAt: number;
  /** Another origin's strong op this replica CAB-cast on the origin's behalf (`cabAdopt`). */
  adopted = false;
  /** Dropped by the close of its origin (core/closing-origins.ts): off the list for good. */
  dropped = false;

  constructor(
    readonly req: Req,
    readonly local: LocalOp | null,
    arrivedAt: number,
  ) {
    this.arrivedAt = arrivedAt;
  }

  get committed(): boolean {
    return this.commitSeq !== TENTATIVE;
  }
}

/** True when `a` comes strictly before `b` in `committed · tentative`. */
export function precedes(a: Entry, b: Entry): boolean {
  if (a.commitSeq !== b.commitSeq) return a.commitSeq < b.commitSeq;
  if (a.commitSeq !== TENTATIVE) return false; // the same committed position: the same entry
  const x = a.req;
  const y = b.req;
  if (x.ts !== y.ts) return x.ts < y.ts;
  if (x.id.replica !== y.id.replica) return x.id.replica < y.id.replica;
  return x.id.eventNo < y.id.eventNo;
}

export function rankOf(e: Entry): Rank {
  return [e.commitSeq, e.req.ts, e.req.id.replica, e.req.id.eventNo];
}

/** `precedes` for ranks. */
export function rankPrecedes(a: Rank, b: Rank): boolean {
  if (a[0] !== b[0]) return a[0] < b[0];
  if (a[0] !== TENTATIVE) return false;
  if (a[1] !== b[1]) return a[1] < b[1];
  if (a[2] !== b[2]) return a[2] < b[2];
  return a[3] < b[3];
}

/**
 * What an execution read: by key, the writer of the version it saw (`null`: it saw no value) and
 * that version's value. A prefix scan counts each key it saw.
 */
export type ShownReads = ReadonlyMap<string, ShownRead>;
export interface ShownRead {
  readonly writer: Entry | null;
  readonly value: JsonValue | undefined;
}
