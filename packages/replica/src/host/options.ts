import type { Member } from '../cab/configuration.js';
import type { PaxosOptions } from '../cab/multi-paxos.js';
import type { ReplicaOptions } from '../core/replica.js';
import type { Executor } from '../exec/executor.js';
import type { GossipOptions } from '../gossip/gossip.js';
import type { TransferPacing } from './state-transfer.js';

/** Default `checkpointEvery`: finalized ops between two checkpoints. */
export const DEFAULT_CHECKPOINT_EVERY = 10_000;

/**
 * Ops a peer holds that this replica lacks, from which it holds speculation until it has caught up
 * (to a quarter of this): well above what is in flight between replicas in normal running (a few
 * gossip rounds of a loaded cluster), well below a real lag (thousands of ops).
 */
export const CATCH_UP_HOLD = 1024;

/**
 * A hold ends when no push from a peer has arrived for this long: the catch-up stalled (the
 * replica is cut off from the peers that have what it lacks), and a replica in a minority must
 * answer tentatively. Two anti-entropy rounds, so a catch-up paced by rounds keeps it.
 */
export const CATCH_UP_STALL_MS = 100;

export interface HostOptions {
  readonly id: number;
  /**
   * The genesis configuration's replica ids (PaxosOptions.replicas); `members` gives their
   * addresses. A configuration on disk wins over both.
   */
  readonly replicas: readonly number[];
  /** The genesis configuration with addresses; when given, `replicas` is ignored. */
  readonly members?: readonly Member[];
  /**
   * A replica added to a running cluster (`creek start --join`): with nothing on its disk it trusts
   * no genesis configuration, and first takes a peer's checkpoint, configuration included (state
   * transfer, asking the replicas of `members`/`replicas` in turn).
   */
  readonly join?: boolean;
  /** A planted bug (PaxosOptions.unsafeGenesisQuorum); only the simulator's checkers want it. */
  readonly unsafeGenesisQuorum?: boolean;
  /** A planted bug (PaxosOptions.unsafeReadWithoutQuorum); only the simulator's checkers want it. */
  readonly unsafeReadWithoutQuorum?: boolean;
  readonly replica: Omit<ReplicaOptions, 'id'>;
  readonly paxos?: Omit<PaxosOptions, 'self' | 'replicas' | 'isOrdered'>;
  readonly gossip?: Omit<GossipOptions, 'self' | 'peers'>;
  /** Answers at once (the inline executor), or later through `executed` (see Executor). */
  readonly executor: Executor;
  /**
   * Whether every member applies closes of dead origins (the cluster version allows CLOSE_SINCE of
   * @creek/protocol): until then this replica proposes none. Absent: they do (one build, as in the
   * simulator).
   */
  readonly closesAllowed?: () => boolean;
  /** How long the head of the delivery stream may wait for missing Reqs before they are pulled. */
  readonly pullAfterMs?: number;
  /**
   * Take a checkpoint (a `checkpoint` record) once this many more ops are final, and at least as
   * many as the last checkpoint held keys and Reqs; 0: never. Default DEFAULT_CHECKPOINT_EVERY.
   * Disk and restart time stay proportional to it and to the state, not to the number of ops
   * ever run.
   */
  readonly checkpointEvery?: number;
  /** How often gossip drops Reqs that are final here and every peer has. Default: 50 ms. */
  readonly pruneEveryMs?: number;
  /**
   * Ops a peer holds that this replica lacks from which it holds speculation (CATCH_UP_HOLD by
   * default); Infinity never holds, which only a test of what the hold saves should want.
   */
  readonly catchUpHold?: number;
  /** CATCH_UP_STALL_MS by default; Infinity holds while cut off, which only a planted bug wants. */
  readonly catchUpStallMs?: number;
  /**
   * The origin of a replica known to be new, for a driver with no disk (the in-memory cluster):
   * it numbers ops under it from the start instead of learning its identity from its peers
   * (`decideOrigin`). An IdentityRecord on disk wins over it.
   */
  readonly origin?: number;
  /** About how many characters a state-transfer chunk carries (TRANSFER_CHUNK_CHARS). */
  readonly transferChunkChars?: number;
  /**
   * How this replica paces a state transfer it pulls: chunks per ask and the silence before it
   * asks again (DEFAULT_TRANSFER_PACING, made for one data centre; `creek start --network wan`
   * sets the WAN one, geo/timers.ts).
   */
  readonly transferPacing?: TransferPacing;
  /**
   * A planted bug: install a transfer as soon as its last chunk is in, without the chunks that
   * are still missing and without checking its digest. Only the simulator's checkers want it.
   */
  readonly unsafeInstallIncomplete?: boolean;
  /**
   * A planted bug: peers' digests of their finalized state are never compared with this
   * replica's, so a nondeterministic op goes unnoticed. Only the simulator's checkers want it.
   */
  readonly unsafeSkipDivergenceCheck?: boolean;
}
