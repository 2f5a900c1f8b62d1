import type { AcceptorRecord } from '../cab/messages.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import { opKey, type OpId } from '../core/op-id.js';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { DurableRecord, Req } from '../core/types.js';
import type { DivergenceReport } from './divergence-messages.js';
import type { HostParts } from './parts.js';
import type { TransferPart } from './state-transfer.js';

/** Everything a replica writes to its disk. */
export type HostRecord =
  | { readonly layer: 'core'; readonly record: DurableRecord }
  | { readonly layer: 'cab'; readonly record: AcceptorRecord }
  /**
   * Supersedes every record written before it: once it is durable, a driver may drop them (and
   * should, in the same transaction or right after). Recovery starts from the last checkpoint on
   * disk and the records after it.
   */
  | { readonly layer: 'checkpoint'; readonly record: HostCheckpoint }
  /**
   * The origin this replica numbers its ops under (core/op-id.ts), written once it has decided it
   * and before its first op: a replica whose disk holds none (a new or wiped one) still learns
   * which incarnation it is.
   */
  | { readonly layer: 'identity'; readonly record: IdentityRecord }
  /**
   * A chunk of the state transfer in progress (host/state-transfer.ts), kept so that a crash
   * mid-transfer resumes from the chunks it has; the checkpoint it installs supersedes them.
   */
  | { readonly layer: 'transfer'; readonly record: TransferChunkRecord }
  /**
   * The divergence this replica knows of (host/divergence.ts), or null once it is over: kept, so
   * that a replica whose state may be the wrong one does not serve again because it restarted.
   */
  | { readonly layer: 'divergence'; readonly record: DivergenceRecord };

/** What DivergenceReport a replica had last (null: none). */
export interface DivergenceRecord {
  readonly kind: 'divergence';
  readonly report: DivergenceReport | null;
}

export interface TransferChunkRecord {
  readonly kind: 'chunk';
  /** The peer it came from and the session it belongs to. */
  readonly peer: number;
  readonly session: number;
  readonly index: number;
  readonly total: number;
  readonly part: TransferPart;
}

export interface IdentityRecord {
  readonly kind: 'identity';
  readonly origin: number;
}

/** What a replica needs to recover in place of every record it wrote before (see `checkpoint`). */
export interface HostCheckpoint {
  readonly kind: 'checkpoint';
  /** The core: finalized state, the Reqs of ops not final, its clocks and counters. */
  readonly core: ReplicaCheckpoint;
  /** The acceptor's state, compacted (`MultiPaxos.durableState`). */
  readonly cab: readonly AcceptorRecord[];
  /**
   * Reqs gossip still holds for peers that are not among the core's: final here, but not yet known
   * to every replica, which may still need them (a lagging or restarted one).
   */
  readonly held: readonly Req[];
  /** Per origin, the last strong op delivered here: the delivery stream resumes after it. */
  readonly delivered: readonly OpId[];
  /** The replica's origin (IdentityRecord); absent or null while it has none. */
  readonly origin?: number | null;
  /** The divergence it knew of (DivergenceRecord); absent while it knows of none. */
  readonly divergence?: DivergenceReport;
}

/**
 * The last checkpoint among records in write order, and the records after it: what recovery starts
 * from (a driver may not have dropped the records the checkpoint superseded yet).
 */
export function lastCheckpoint(records: readonly HostRecord[]): {
  checkpoint: HostCheckpoint | undefined;
  tail: readonly HostRecord[];
} {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.layer === 'checkpoint') return { checkpoint: r.record, tail: records.slice(i + 1) };
  }
  return { checkpoint: undefined, tail: records };
}

/**
 * The checkpoint of a host's parts as they are now (ReplicaHost's `checkpoint`): the core's
 * finalized state and the Reqs of what is not final, the acceptor's compacted state, the Reqs
 * gossip holds for peers that the core's leave out, and the delivery position.
 */
export function checkpointOf(
  parts: HostParts,
  lastDelivered: ReadonlyMap<number, number>,
  divergence: DivergenceReport | null,
): HostCheckpoint {
  const { replica, gossip, paxos } = parts;
  const core = replica.checkpoint();
  const live = new Set(core.reqs.map((q) => opKey(q.id)));
  return {
    kind: 'checkpoint',
    core,
    cab: paxos.durableState(),
    held: gossip.heldReqs().filter((q) => !live.has(opKey(q.id))),
    delivered: [...lastDelivered].map(([replica, eventNo]) => ({ replica, eventNo })),
    // It supersedes the IdentityRecord too, and the DivergenceRecords.
    origin: replica.id === ORIGIN_UNDECIDED ? null : replica.id,
    ...(divergence === null ? {} : { divergence }),
  };
}

/** The divergence a replica knew of when it wrote these records (after `checkpoint`), or null. */
export function lastDivergence(
  checkpoint: HostCheckpoint | undefined,
  tail: readonly HostRecord[],
): DivergenceReport | null {
  for (let i = tail.length - 1; i >= 0; i--) {
    const r = tail[i]!;
    if (r.layer === 'divergence') return r.record.report;
  }
  return checkpoint?.divergence ?? null;
}
