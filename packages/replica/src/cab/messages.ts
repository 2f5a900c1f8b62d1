import type { OpId } from '../core/op-id.js';
import type { ConfigEntry, ReconfigRequest } from './configuration.js';

/**
 * A strong op id as CAB-cast by its origin, with the origin's previous strong op (0 if none):
 * the leader orders each origin's ids in that chain, so CAB keeps per-origin invocation order.
 */
export interface CastId {
  readonly id: OpId;
  readonly prevStrong: number;
}

/**
 * A membership change in the ordered log (cab/configuration.ts): a leader proposes it alone in an
 * instance, and it is in force CONFIG_DELAY instances after the one that decides it.
 */
export interface ReconfigEntry {
  readonly reconfig: ReconfigRequest;
}

/** What one consensus instance can hold: an op id, or a membership change. */
export type BatchEntry = CastId | ReconfigEntry;

/**
 * The value of one consensus instance: a batch of ids (empty for a gap filled by a new leader), or
 * a membership change.
 */
export type Batch = readonly BatchEntry[];

/** Whether a batch entry is an op id (not a membership change). */
export function isCast(entry: BatchEntry): entry is CastId {
  return !('reconfig' in entry);
}

/** The op ids of a batch, without its membership changes. */
export function castsOf(value: Batch): CastId[] {
  return value.filter(isCast);
}

/** A ballot is `round * MAX_REPLICAS + leader id`: totally ordered and unique to its leader. */
export const MAX_REPLICAS = 256;

export function ballotOf(round: number, leader: number): number {
  return round * MAX_REPLICAS + leader;
}

export function ballotLeader(ballot: number): number {
  return ballot % MAX_REPLICAS;
}

export function ballotRound(ballot: number): number {
  return Math.floor(ballot / MAX_REPLICAS);
}

export interface AcceptedEntry {
  readonly instance: number;
  readonly ballot: number;
  readonly value: Batch;
}

/** Multi-Paxos over operation ids (Creek §5: indirect consensus, ids only). */
export type PaxosMessage =
  /** Origin → leader: ids to order. */
  | { readonly type: 'forward'; readonly casts: readonly CastId[] }
  /** Any replica → leader: a membership change to order (its admin API took it). */
  | { readonly type: 'reconfigure'; readonly request: ReconfigRequest }
  /**
   * A replica → the leader: read indexes for these strong reads (read-index.ts). `promised`, the
   * highest ballot the sender had promised when it sent this, is its ack of the leader's ballot
   * for these reads if no higher (left out by a replica that cannot vouch: it is rejoining).
   */
  | { readonly type: 'readIndex'; readonly nonces: readonly string[]; readonly promised?: number }
  /** Leader → members: a read round; an acceptor acks it unless it promised a higher ballot. */
  | { readonly type: 'readProbe'; readonly ballot: number; readonly seq: number }
  | { readonly type: 'readAck'; readonly ballot: number; readonly seq: number }
  /** Leader → the replica that asked: the read index of these reads. */
  | { readonly type: 'readIndexed'; readonly nonces: readonly string[]; readonly index: number }
  /** A replica → every member: their frontiers, for these strong reads (quorum-reads.ts). */
  | { readonly type: 'frontierAsk'; readonly nonces: readonly string[] }
  /** A member → the replica that asked: one past the highest instance it accepted (or decided). */
  | { readonly type: 'frontier'; readonly nonces: readonly string[]; readonly below: number }
  /**
   * To a replica a membership change removed that still speaks (it was down when it happened, and
   * nobody talks to it any more): the configuration that retired it. It stops.
   */
  | {
      readonly type: 'retired';
      readonly entry: ConfigEntry;
      /**
       * The sender truncated its log below this, past what the removed replica asked for: it
       * cannot learn those instances any more, and stops at once.
       */
      readonly truncatedBelow?: number;
    }
  /** Phase 1a, once per ballot, for every instance from `from` on. */
  | { readonly type: 'prepare'; readonly ballot: number; readonly from: number }
  /** Phase 1b: what the acceptor accepted from `from` on, and what it knows decided there. */
  | {
      readonly type: 'promise';
      readonly ballot: number;
      readonly accepted: readonly AcceptedEntry[];
      readonly decided: readonly { readonly instance: number; readonly value: Batch }[];
      /** Instances below this were delivered by every replica and are gone. */
      readonly truncatedBelow: number;
    }
  /** The acceptor promised a higher ballot. */
  | { readonly type: 'nack'; readonly ballot: number; readonly promised: number }
  /** Phase 2a. */
  | {
      readonly type: 'accept';
      readonly ballot: number;
      readonly instance: number;
      readonly value: Batch;
    }
  /** Phase 2b, sent to every replica: a majority of these decides the instance. */
  | { readonly type: 'accepted'; readonly ballot: number; readonly instance: number }
  /** Liveness (Ω), the leader's decided prefix, and how far the sender delivered (for truncation). */
  | {
      readonly type: 'heartbeat';
      readonly ballot: number;
      readonly leading: boolean;
      /**
       * The sender hears a majority (itself included): only such a replica may lead. Optional on
       * the wire, so replicas from before it was added still interoperate (absent: may lead).
       */
      readonly quorate?: boolean;
      readonly decidedBelow: number;
      readonly deliveredBelow: number;
      /** The sender's promised ballot (a rejoining replica promises the highest it hears). */
      readonly promised: number;
      /** One past the highest instance the sender accepted a value for or knows decided. */
      readonly knownBelow: number;
    }
  /**
   * Leader → the preferred leader (PaxosOptions.preferredLeader), once that member is heard, hears
   * a majority and is caught up: run for leader now, without waiting for this leader to fall
   * silent (Raft's TimeoutNow). `ballot` is the sender's: a hand-over from a ballot older than one
   * the receiver has seen is stale and ignored (leader-transfer.ts).
   */
  | { readonly type: 'handOver'; readonly ballot: number }
  /** A learner that is behind asks for decisions from `from` on. */
  | { readonly type: 'catchup'; readonly from: number }
  | {
      readonly type: 'decisions';
      readonly entries: readonly { readonly instance: number; readonly value: Batch }[];
      /** Instances below this were delivered by every replica and are gone. */
      readonly truncatedBelow: number;
    };

/** Acceptor state the driver must make durable before sending anything that follows it. */
export type AcceptorRecord =
  | { readonly kind: 'promise'; readonly ballot: number }
  | {
      readonly kind: 'accept';
      readonly instance: number;
      readonly ballot: number;
      readonly value: Batch;
    }
  | { readonly kind: 'truncate'; readonly below: number }
  /**
   * A configuration this replica learned (decided, or from a checkpoint): it outlives the
   * truncation of the instance that decided it. With none on disk, the genesis configuration
   * (PaxosOptions.replicas) governs every instance.
   */
  | { readonly kind: 'config'; readonly entry: ConfigEntry };
