import type { AcceptorRecord } from '../cab/messages.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import type { OpId } from '../core/op-id.js';
import type { DurableRecord, Req } from '../core/types.js';
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
  | { readonly layer: 'transfer'; readonly record: TransferChunkRecord };

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
