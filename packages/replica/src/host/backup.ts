/**
 * Backups: what an online backup of a replica holds, and the checkpoint a replica of a new cluster
 * restored from one starts with.
 *
 * A backup is the replica's finalized state at its finalized position, taken between two inputs
 * (so one consistent cut, with no pause of the replica beyond building the sorted state, as a
 * checkpoint does). Client sessions' exactly-once records live in that state (`~creek/session/`,
 * core/session-dedupe.ts), so they come with it. Ops not final yet (committed but not final, and
 * tentative ones) are left out: a restored cluster holds exactly the state at the backup's
 * position. The configuration is kept for the record only: a restored cluster is a new one, with
 * the members its operator starts.
 *
 * Pure data and functions (DESIGN.md, "the central rule").
 */
import type { JsonValue } from '@creek/app';
import { DottedVersionVector } from '../core/dvv.js';
import { formatOpId } from '../core/op-id.js';
import type { SeenJson } from '../gossip/messages.js';
import type { HostParts } from './parts.js';
import type { HostCheckpoint } from './records.js';

export interface BackupSnapshot {
  /** Ops in the finalized prefix of the committed list: the position the state is at. */
  readonly finalized: number;
  /** The state after the finalized prefix: every key with a value, sorted by key. */
  readonly state: ReadonlyArray<readonly [string, JsonValue]>;
  /**
   * The ops the replica had delivered. A restored replica starts with it as its causal context, so
   * the identities it takes are above every incarnation of the old cluster (host/identity.ts): its
   * op ids never coincide with the old cluster's.
   */
  readonly known: SeenJson;
  /** The hybrid logical clock: the restored cluster's timestamps continue from it. */
  readonly hlc: number;
  /** The members of the configuration in force at the replica (for the record). */
  readonly members: readonly { readonly id: number; readonly address: string }[];
  /**
   * The ops the replica held that the backup leaves out (not final at the cut), for the record:
   * what a cluster restored from it will not hold. Absent in backups made before it was kept.
   */
  readonly leftOut?: LeftOutOps;
}

/** How many of the left-out ops a backup names one by one (the counts are always exact). */
export const LEFT_OUT_LISTED = 10_000;

/**
 * Ops a replica held beyond its finalized position: committed ones not final yet (their clients
 * may have had their final answers) and tentative ones (their clients had at most a tentative
 * answer from this replica; a final one only if replicas that are gone had committed them).
 */
export interface LeftOutOps {
  readonly committed: number;
  readonly tentative: number;
  /** The first LEFT_OUT_LISTED of them, committed ones first, each in its order. */
  readonly ops: readonly LeftOutOp[];
}

export interface LeftOutOp {
  /** `r<origin>#<event>`, as logs and /status name ops. */
  readonly id: string;
  readonly op: string;
  readonly strong: boolean;
  readonly committed: boolean;
}

/**
 * The backup of a replica's parts, as they are now. Only what must come from one instant: the
 * replica serves nothing meanwhile, so the state's digest is computed later, while it is streamed.
 */
export function backupOf(parts: HostParts): BackupSnapshot {
  const core = parts.replica.checkpoint();
  const m = parts.paxos.membership();
  return {
    finalized: core.finalized,
    state: core.state,
    known: core.known.toJSON(),
    hlc: core.hlc,
    members: m.current.members.map((x) => ({ id: x.id, address: x.address })),
    leftOut: {
      committed: core.committedLive,
      tentative: core.reqs.length - core.committedLive,
      ops: core.reqs.slice(0, LEFT_OUT_LISTED).map((q, i) => ({
        id: formatOpId(q.id),
        op: q.op,
        strong: q.strong,
        committed: i < core.committedLive,
      })),
    },
  };
}

/**
 * The checkpoint a replica of a restored cluster starts from: the backup's state at its position,
 * no op of its own (it takes a new identity once it has heard its peers, as a new replica does),
 * no vote and no promise (the new cluster's Paxos starts from its genesis), nothing in flight.
 */
export function restoredCheckpoint(b: BackupSnapshot): HostCheckpoint {
  return {
    kind: 'checkpoint',
    core: {
      finalized: b.finalized,
      state: b.state,
      reqs: [],
      committedLive: 0,
      known: DottedVersionVector.fromJSON(b.known),
      hlc: b.hlc,
      eventNo: 0,
      lastStrongEventNo: 0,
      finalizedOwnStrong: 0,
    },
    cab: [],
    held: [],
    delivered: [],
    origin: null,
  };
}
