import { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type {
  ConfigEntry,
  Member,
  ReconfigOutcome,
  ReconfigRequest,
} from '../cab/configuration.js';
import type { AcceptorRecord, PaxosMessage } from '../cab/messages.js';
import { MultiPaxos, type PaxosOptions, type PaxosOutput } from '../cab/multi-paxos.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import { formatOpId, incarnationOf, opKey, originOf, slotOf, type OpId } from '../core/op-id.js';
import {
  ORIGIN_UNDECIDED,
  Replica,
  type InvokeRequest,
  type ReplicaOptions,
} from '../core/replica.js';
import type { DurableRecord, ExecutionResult, Output, Req, Response } from '../core/types.js';
import type { Executor } from '../exec/executor.js';
import { Gossip, type GossipOptions } from '../gossip/gossip.js';
import type { GossipMessage, GossipOutput } from '../gossip/messages.js';
import {
  fromChunks,
  IncomingTransfer,
  OutgoingTransfers,
  type TransferMessage,
  type TransferPart,
  type TransferredState,
} from './state-transfer.js';

/** What replicas send each other: gossip (Reqs), Paxos (ids) and state transfers (checkpoints). */
export type PeerMessage =
  | { readonly kind: 'gossip'; readonly msg: GossipMessage }
  | { readonly kind: 'paxos'; readonly msg: PaxosMessage }
  | { readonly kind: 'transfer'; readonly msg: TransferMessage };

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

/**
 * What the host asks of its driver, in order. A driver must make each record durable before it
 * acts on any later send or response (the simulator defers them; the runtime writes synchronously).
 */
export interface HostEffects {
  persist(record: HostRecord): void;
  /** `lazy`: nothing waits for it; it may wait to travel with later messages (GossipOutput, PaxosOutput). */
  send(to: number, msg: PeerMessage, lazy?: boolean): void;
  respond(response: Response): void;
  /**
   * The replica cannot go on safely and has stopped: it ignores every input from now on, and the
   * driver should take it down and report `reason`. Raised when a peer holds ops of this replica
   * that its durable state lacks (GossipOutput `unknownOwnOp`: a wiped or replaced data directory,
   * unsynced commits lost in a power failure, or two processes with one id), or when a replica that
   * lost its disk finds that its peers compacted what it had: Paxos instances it had delivered
   * (PaxosOutput `lostState`), or Reqs every replica held (GossipOutput `droppedByPeer`).
   */
  halt(reason: string): void;
  /**
   * What the replica did, for a driver that shows it (the runtime's event stream for viewers):
   * called synchronously, it must not call back into the host.
   */
  observe?(event: HostEvent): void;
}

/** What `HostEffects.observe` is told. */
export type HostEvent =
  /** An op reached the replica: issued for one of its clients (`local`), or gossiped by a peer. */
  | { readonly kind: 'op'; readonly req: Req; readonly local: boolean }
  /** Ops became committed, in order, from committed position `position` on. */
  | { readonly kind: 'commit'; readonly ids: readonly OpId[]; readonly position: number }
  /** A checkpoint was written. */
  | { readonly kind: 'checkpoint'; readonly count: number }
  /** The replica took its origin (IdentityRecord). */
  | { readonly kind: 'identity'; readonly origin: number }
  /**
   * The replicas this one talks to changed (a membership change was decided, or came into
   * force): every member of the configurations from its decided prefix on, with their addresses.
   */
  | { readonly kind: 'peers'; readonly peers: readonly Member[] }
  /** A membership change was decided (applied, or refused and why). */
  | { readonly kind: 'reconfigured'; readonly outcome: ReconfigOutcome }
  /**
   * This replica was removed from the cluster (the configuration in force retired it): it takes
   * part in nothing from now on, and its driver should stop it.
   */
  | { readonly kind: 'removed'; readonly reason: string }
  /** The replica installed a peer's checkpoint (state transfer). */
  | {
      readonly kind: 'transferred';
      readonly finalized: number;
      /** Its committed position now: the finalized ops and the committed ones not final. */
      readonly committed: number;
      readonly keys: number;
    };

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
   * A planted bug: install a transfer as soon as its last chunk is in, without the chunks that
   * are still missing and without checking its digest. Only the simulator's checkers want it.
   */
  readonly unsafeInstallIncomplete?: boolean;
}

/**
 * One Creek replica process, without I/O: the core (Algorithm 1), gossip (reliable broadcast with
 * anti-entropy), Multi-Paxos (CAB) and the conditional delivery that feeds CAB's decisions to the
 * core when `checkDep` holds. It routes each part's outputs to the others and to the driver. The
 * simulator and the real runtime drive the same host.
 */
/** What an operator can do about a replica that halted for lost state. */
const REBUILD =
  'Restore its data directory, or start it on an empty one: it then rebuilds itself from its ' +
  'peers (state transfer) and numbers its ops under a new identity.';

export class ReplicaHost {
  readonly id: number;
  private readonly options: HostOptions;
  // Rebuilt by a state transfer (`install`): read them through the getters, never keep them.
  private _replica!: Replica;
  private _gossip!: Gossip;
  private _paxos!: MultiPaxos;
  private _delivery!: ConditionalDelivery;
  get replica(): Replica {
    return this._replica;
  }
  get gossip(): Gossip {
    return this._gossip;
  }
  get paxos(): MultiPaxos {
    return this._paxos;
  }
  get delivery(): ConditionalDelivery {
    return this._delivery;
  }
  private readonly executor: Executor;
  private readonly pullAfterMs: number;
  private readonly checkpointEvery: number;
  private readonly catchUpHold: number;
  private readonly catchUpStallMs: number;
  /**
   * When a gossip push last arrived, or a catch-up began (a peer's summary showed `catchUpHold`
   * ops this replica lacks), by the host's clock: a catch-up in progress.
   */
  private catchUpProgressAt = Number.NEGATIVE_INFINITY;
  /** What `Gossip.behind` said at the last check. */
  private wasBehind = 0;
  private readonly pruneEveryMs: number;
  private blockedSince: number | null = null;
  private now = 0;
  private lastPruneAt = Number.NEGATIVE_INFINITY;
  /** `finalized` of the last checkpoint written (or recovered from). */
  private checkpointedAt = 0;
  /** Items (keys, Reqs) in the last checkpoint: the next waits at least as many final ops. */
  private checkpointItems = 0;
  /** Per origin, the event number of the last strong op delivered here. */
  private readonly lastDelivered = new Map<number, number>();
  /** Execution jobs numbered below this belong to a replica a state transfer replaced. */
  private firstJobId = 1;
  /** The state transfer this replica pulls from a peer, while it rebuilds itself. */
  private incoming: IncomingTransfer | null = null;
  /** A transfer restored from disk waits for its first ask (`resumeTransfer`). */
  private resumeAsk = false;
  /** Transfer sessions this host started (each gets a new number). */
  private transferSessions = 0;
  /** Snapshots this replica serves to peers that rebuild themselves. */
  private readonly outgoing = new OutgoingTransfers();
  private readonly transferChunkChars: number | undefined;
  private readonly unsafeInstallIncomplete: boolean;
  private haltReason: string | null = null;
  /** Why this replica stopped for good (`HostEffects.halt`); null while it runs. */
  get halted(): string | null {
    return this.haltReason;
  }

  /**
   * It must take no client op, nor issue a no-op, yet. Either it has no origin (a new replica, or
   * one whose disk was lost: no IdentityRecord) and has not yet heard every peer and decided one
   * (`decideOrigin`), or it rebuilds itself from a peer (`rebuilding`), or it has no op of its own
   * and Paxos still rejoins (PaxosOptions.noDurableVotes). Every peer's summary, not a majority's:
   * the only copy of an op of an earlier incarnation may be at a peer that was down, and this
   * replica's new origin must be above every incarnation any peer holds ops of. And an op of its
   * own on disk must mean it is done rejoining, since Paxos counts such a replica as one that
   * never lost its votes. Never true again once false, unless a transfer starts: a member added
   * later (cab/configuration.ts) makes no replica that has an origin wait for its summary (an idle
   * cluster's members, with no op of their own, waited for a new member that was waiting for a
   * checkpoint from one of them).
   */
  get learningFromPeers(): boolean {
    return (
      this.incoming !== null ||
      this.replica.id === ORIGIN_UNDECIDED ||
      (this.replica.issuedCount() === 0 && this.paxos.rejoining)
    );
  }

  /**
   * A membership change removed it, in force at its decided prefix: it takes no client op (its
   * ops could not be ordered: the members ignore it) and stays only as an acceptor of the
   * instances before its removal, which a member that restarts may have to decide again, until
   * the members tell it it is no longer needed (`removed`, and it stops). Its clients go to a
   * member (the simulator: seed 51467 with 3 replicas, where they waited on it for good).
   */
  get leaving(): boolean {
    return this.paxos.leaving;
  }

  /** It pulls a checkpoint from a peer (state transfer), and takes part in nothing else meanwhile. */
  get rebuilding(): boolean {
    return this.incoming !== null;
  }

  /** Counters for status pages and tests. */
  readonly counters = {
    checkpoints: 0,
    pruned: 0,
    /** Checkpoints installed from a peer (state transfers completed here). */
    transfersIn: 0,
    /** Transfers started or restarted with another peer. */
    transferAttempts: 0,
    /** Transfers taken up again after a restart, from the chunks on disk. */
    transfersResumed: 0,
    /** Transfers whose chunks did not make up the checkpoint their header described. */
    transfersRejected: 0,
    /** Chunks this replica sent to peers that rebuilt themselves. */
    chunksSent: 0,
    /** Chunks received. */
    chunksReceived: 0,
  };

  /** A fresh replica, or one rebuilt from `recovered` (everything it had made durable). */
  constructor(
    options: HostOptions,
    private readonly effects: HostEffects,
    recovered?: { readonly records: readonly HostRecord[]; readonly nowMs: number },
  ) {
    this.id = options.id;
    this.options = options;
    this.executor = options.executor;
    this.pullAfterMs = options.pullAfterMs ?? 20;
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.catchUpHold = options.catchUpHold ?? CATCH_UP_HOLD;
    this.catchUpStallMs = options.catchUpStallMs ?? CATCH_UP_STALL_MS;
    this.transferChunkChars = options.transferChunkChars;
    this.unsafeInstallIncomplete = options.unsafeInstallIncomplete === true;
    if (!(this.catchUpHold >= 1))
      throw new Error(`catchUpHold must be a number of ops, 1 or more, not ${this.catchUpHold}`);
    this.pruneEveryMs = options.pruneEveryMs ?? 50;
    this.load(recovered?.records, recovered?.nowMs ?? 0);
  }

  /**
   * Builds the replica's parts from what it made durable (none: a fresh replica): the constructor,
   * and a state transfer's install, which replaces them all.
   */
  private load(records: readonly HostRecord[] | undefined, nowMs: number): void {
    const options = this.options;
    const { checkpoint, tail } = lastCheckpoint(records ?? []);
    let origin = checkpoint?.origin ?? options.origin ?? null;
    for (const r of tail) if (r.layer === 'identity') origin = r.record.origin;
    this.resumeTransfer(
      tail.flatMap((r) => (r.layer === 'transfer' ? [r.record] : [])),
      nowMs,
    );
    const replicaOptions: ReplicaOptions = {
      ...options.replica,
      id: origin ?? ORIGIN_UNDECIDED,
      firstJobId: this.firstJobId,
    };
    const cab = [
      ...(checkpoint?.cab ?? []),
      ...tail.flatMap((r) => (r.layer === 'cab' ? [r.record] : [])),
    ];
    const paxosOptions = (issuedOps: boolean): PaxosOptions => ({
      ...options.paxos,
      self: options.id,
      replicas: options.replicas,
      ...(options.members === undefined ? {} : { members: options.members }),
      ...(options.unsafeGenesisQuorum === true ? { unsafeGenesisQuorum: true } : {}),
      ...(options.unsafeReadWithoutQuorum === true ? { unsafeReadWithoutQuorum: true } : {}),
      isOrdered: (id) => this.delivery.hasOrdered(id),
      missing: (id) => this.replica.missingDeps(id, 64),
      awaited: (id) => this.replica.awaitedDep(id),
      receivedUpTo: (origin) => this.replica.receivedUpTo(origin),
      // No promise, no vote and no op of its own on its disk, whatever else is there: a rejoining
      // replica writes none of them until it has learned all it may have forgotten (it takes no
      // client op before: `learningFromPeers`), so a crash meanwhile leaves it to rejoin again.
      // A replica that never voted but took ops never lost its disk since, and need not rejoin.
      noDurableVotes: !issuedOps && !cab.some((r) => r.kind === 'promise' || r.kind === 'accept'),
    });
    this._gossip = new Gossip({
      ...options.gossip,
      self: options.id,
      peers: options.members?.map((m) => m.id) ?? options.replicas,
      origin,
    });
    this.lastDelivered.clear();
    this.peerIds = null;
    // Reads of the replica this one replaces: their tags and indexes mean nothing any more.
    this.readsIndexed = [];
    if (records === undefined || records.length === 0) {
      this.now = Math.max(this.now, nowMs);
      this._replica = new Replica(replicaOptions);
      this._paxos = new MultiPaxos(paxosOptions(false));
      this._delivery = new ConditionalDelivery();
      this.syncPeers();
      // A new member trusts no genesis configuration: a peer's checkpoint gives it the cluster's.
      if (options.join === true && this.incoming === null) this.pullFrom(this.gossip.others[0]!);
      return;
    }
    const core = tail.flatMap((r) => (r.layer === 'core' ? [r.record] : []));
    // The strong ids this replica delivered are the last id of each of its commit records.
    const delivered: OpId[] = [
      ...(checkpoint?.delivered ?? []),
      ...core.flatMap((r) => (r.kind === 'commit' ? [r.ids[r.ids.length - 1]!] : [])),
    ];
    const truncatedBelow = cab.reduce(
      (m, r) => (r.kind === 'truncate' ? Math.max(m, r.below) : m),
      0,
    );
    this.now = Math.max(this.now, nowMs);
    const { replica, outputs } = Replica.recover(replicaOptions, core, this.now, checkpoint?.core);
    this._replica = replica;
    this._paxos = new MultiPaxos(paxosOptions(replica.issuedCount() > 0), { records: cab });
    this._delivery = new ConditionalDelivery(truncatedBelow, delivered);
    for (const id of delivered) this.noteDelivered(id);
    this.checkpointedAt = checkpoint?.core.finalized ?? 0;
    this.checkpointItems =
      checkpoint === undefined
        ? 0
        : checkpoint.core.state.length + checkpoint.core.reqs.length + checkpoint.held.length;
    this.gossip.recover(
      [
        ...(checkpoint?.core.reqs ?? []),
        ...(checkpoint?.held ?? []),
        ...core.flatMap((r) => (r.kind === 'req' ? [r.req] : [])),
      ],
      checkpoint?.core.known,
    );
    this.syncPeers();
    this.applyCore(outputs);
  }

  /** The ids `syncPeers` last gave gossip and the driver. */
  private peerIds: readonly number[] | null = null;

  /**
   * Gossip talks to the replicas Paxos talks to: every member of a configuration from the decided
   * prefix on (cab/configuration.ts). Called after every Paxos input; cheap when nothing changed.
   */
  private syncPeers(): void {
    const ids = this.paxos.peerIds();
    if (ids === this.peerIds) return;
    const before = this.peerIds;
    this.peerIds = ids;
    if (before !== null && before.length === ids.length && before.every((x, i) => x === ids[i]))
      return;
    this.gossip.setPeers(ids);
    const m = this.paxos.membership();
    const peers = ids.map((id) => ({ id, address: m.addressOf(id) ?? '' }));
    this.effects.observe?.({ kind: 'peers', peers });
  }

  /** What this replica knows of the cluster's membership (MultiPaxos.membership). */
  membership(): ReturnType<MultiPaxos['membership']> {
    return this.paxos.membership();
  }

  /**
   * A membership change an operator asked this replica for: ordered through the log (the leader
   * proposes it once the last change is in force). Its fate: `reconfigOutcome(request.nonce)`.
   */
  reconfigure(nowMs: number, request: ReconfigRequest): void {
    if (this.halted !== null || this.rebuilding) return;
    this.now = Math.max(this.now, nowMs);
    this.applyPaxos(this.paxos.reconfigure(request));
  }

  /** What became of a membership change decided at this replica (MultiPaxos.reconfigOutcome). */
  reconfigOutcome(nonce: string): ReconfigOutcome | undefined {
    return this.paxos.reconfigOutcome(nonce);
  }

  /**
   * A membership change removed this replica, and a majority of the configuration that did has it
   * in force (MultiPaxos.removed): nobody needs its vote any more, and it stops (HostEvent
   * `removed`; its `halted` reason says so, and the driver takes it down as it would a halt).
   */
  private retireIfRemoved(): void {
    if (this.haltReason !== null || !this.paxos.removed) return;
    const reason =
      `removed from the cluster: replica ${this.id} was removed by a membership change and takes no ` +
      `part any more; its data directory can be deleted`;
    this.haltReason = reason;
    this.effects.observe?.({ kind: 'removed', reason });
  }

  invoke(nowMs: number, request: InvokeRequest): void {
    if (this.halted !== null) return;
    this.now = Math.max(this.now, nowMs);
    this.applyCore(this.replica.invoke(nowMs, request));
  }

  /**
   * With ReplicaOptions.deferExecution: the executions the inputs since the last call made
   * necessary. The driver calls it once per batch of inputs (the runtime: once per event-loop turn).
   */
  runDeferred(): void {
    if (this.halted !== null) return;
    this.applyCore(this.replica.runDeferred());
  }

  /**
   * A `tick` now would do what an input waits for (a strong read's no-op: Replica.noopWanted).
   * The runtime, whose ticks are 25 ms apart, ticks at once when this holds.
   */
  get tickWanted(): boolean {
    return (
      this.halted === null &&
      this.incoming === null &&
      !this.learningFromPeers &&
      this.replica.noopWanted
    );
  }

  /** Inputs are waiting for `runDeferred`. */
  get executionDue(): boolean {
    return this.halted === null && this.replica.executionDue;
  }

  /** A job the executor deferred (returned undefined for) finished. */
  executed(result: ExecutionResult): void {
    if (this.halted !== null) return;
    // A job of the replica a state transfer replaced: its result means nothing any more.
    if (result.jobId < this.firstJobId) return;
    this.applyCore(this.replica.executed(result));
  }

  receive(from: number, message: PeerMessage): void {
    if (this.halted !== null) return;
    if (message.kind === 'transfer') this.onTransfer(from, message.msg);
    // While it rebuilds itself it takes part in nothing else: what it would learn, the checkpoint
    // it installs replaces (and its gossip or Paxos stopped when it found it lost state).
    else if (this.rebuilding) return;
    else if (message.kind === 'gossip') {
      if (message.msg.kind === 'push') this.catchUpProgressAt = this.now;
      this.applyGossip(this.gossip.receive(from, message.msg));
      this.holdSpeculationWhileBehind();
    } else this.applyPaxos(this.paxos.receive(from, message.msg));
  }

  /**
   * Speculation is held while a peer holds `catchUpHold` (CATCH_UP_HOLD) or more ops this replica
   * lacks and pushes keep arriving (Replica.holdSpeculation), so the tentative tail is not
   * re-executed for every batch of a long catch-up. It resumes below a quarter of that, or when
   * no push came for CATCH_UP_STALL_MS since the catch-up began: cut off mid-catch-up, it answers
   * tentatively again.
   */
  private holdSpeculationWhileBehind(): void {
    const behind = this.gossip.behind();
    if (behind >= this.catchUpHold && this.wasBehind < this.catchUpHold)
      this.catchUpProgressAt = this.now; // the pushes are on their way: hold the first ones too
    this.wasBehind = behind;
    const arriving = this.now - this.catchUpProgressAt < this.catchUpStallMs;
    if (behind >= this.catchUpHold && arriving) this.applyCore(this.replica.holdSpeculation(true));
    else if (behind < this.catchUpHold / 4 || !arriving)
      this.applyCore(this.replica.holdSpeculation(false));
  }

  /** Speculation is held for a catch-up (holdSpeculationWhileBehind). */
  get speculationHeld(): boolean {
    return this.replica.speculationHeld;
  }

  tick(nowMs: number): void {
    if (this.halted !== null) return;
    this.now = Math.max(this.now, nowMs);
    this.outgoing.expire(this.now);
    if (this.incoming !== null) {
      if (this.resumeAsk) {
        this.resumeAsk = false;
        this.sendTransfer(this.incoming.peer, this.incoming.ask(this.now));
        return;
      }
      const due = this.incoming.due(this.now);
      if (due === 'retry') this.sendTransfer(this.incoming.peer, this.incoming.ask(this.now));
      else if (due === 'switch') this.pullFrom(this.nextPeer(this.incoming.peer));
      return;
    }
    this.decideOrigin();
    // A removed replica issues nothing of its own any more (no no-op either): nobody orders it.
    this.applyCore(this.replica.tick(nowMs, !this.learningFromPeers && !this.leaving));
    this.applyGossip(this.gossip.tick(nowMs));
    this.holdSpeculationWhileBehind();
    // Reported with heartbeats, which the driver sends only after earlier writes are durable.
    this.paxos.setDeliveredBelow(this.delivery.deliveredBelow());
    this.applyPaxos(this.paxos.tick(nowMs));
    this.pullMissing();
    if (nowMs - this.lastPruneAt >= this.pruneEveryMs) {
      this.lastPruneAt = nowMs;
      this.counters.pruned += this.gossip.prune((id) => this.replica.isFinal(id));
    }
    // Here, between inputs, every earlier output has gone to the driver: the checkpoint follows
    // every record it refers to. A checkpoint costs its size (the state, and the Reqs of ops not
    // final or still held for a peer that lags), so it waits for at least that many final ops:
    // the cost per op stays bounded when the state or a lagging peer's backlog is large.
    if (
      this.checkpointEvery > 0 &&
      this.replica.finalizedCount() - this.checkpointedAt >=
        Math.max(this.checkpointEvery, this.checkpointItems)
    )
      this.checkpoint();
  }

  /**
   * Writes a checkpoint now: the core's finalized state and the Reqs of what is not final, the
   * acceptor's compacted state, the Reqs gossip holds for peers, and the delivery position. Call it
   * only between inputs (as `tick` does).
   */
  checkpoint(): void {
    const core = this.replica.checkpoint();
    const live = new Set(core.reqs.map((q) => opKey(q.id)));
    const held = this.gossip.heldReqs().filter((q) => !live.has(opKey(q.id)));
    const delivered = [...this.lastDelivered].map(([replica, eventNo]) => ({ replica, eventNo }));
    this.effects.persist({
      layer: 'checkpoint',
      record: {
        kind: 'checkpoint',
        core,
        cab: this.paxos.durableState(),
        held,
        delivered,
        // It supersedes the IdentityRecord too.
        origin: this.replica.id === ORIGIN_UNDECIDED ? null : this.replica.id,
      },
    });
    this.checkpointedAt = core.finalized;
    this.checkpointItems = core.state.length + core.reqs.length + held.length;
    this.counters.checkpoints++;
    this.effects.observe?.({ kind: 'checkpoint', count: this.counters.checkpoints });
  }

  private noteDelivered(id: OpId): void {
    if ((this.lastDelivered.get(id.replica) ?? 0) < id.eventNo)
      this.lastDelivered.set(id.replica, id.eventNo);
  }

  /** Strong reads whose read index arrived, and the index (cab/read-index.ts). */
  private readsIndexed: { readonly tag: number; readonly index: number }[] = [];

  /** Runs executions inline, CAB-casts, gossips, and delivers what became deliverable. */
  private applyCore(first: Output[]): void {
    const queue = first;
    for (let i = 0; ; i++) {
      if (i === queue.length && this.readsIndexed.length > 0) {
        // Strong reads whose index is delivered here read the committed state.
        const below = this.delivery.deliveredBelow();
        const due = this.readsIndexed.filter((r) => r.index <= below);
        if (due.length > 0) {
          this.readsIndexed = this.readsIndexed.filter((r) => r.index > below);
          for (const r of due) queue.push(...this.replica.readIndexReached(r.tag));
        }
      }
      if (i === queue.length) {
        const id = this.delivery.next((x) => this.replica.checkDep(x));
        if (id === null) break;
        this.delivery.markDelivered(id);
        this.paxos.delivered(id);
        this.noteDelivered(id);
        queue.push(...this.replica.deliverStrong(id));
        if (i === queue.length) continue;
      }
      const o = queue[i]!;
      switch (o.type) {
        case 'execute': {
          const result = this.executor.execute(o.job);
          if (result !== undefined) queue.push(...this.replica.executed(result));
          break;
        }
        case 'rbCast':
          this.effects.observe?.({ kind: 'op', req: o.req, local: true });
          this.applyGossip(this.gossip.cast(o.req));
          break;
        case 'cabCast':
          this.applyPaxos(this.paxos.cast({ id: o.id, prevStrong: o.prevStrong }));
          break;
        case 'readIndex':
          this.applyPaxos(this.paxos.requestRead(o.tag));
          break;
        case 'cabAdopt':
          // Its origin's earlier strong ops are all delivered here (they are in its context), so
          // the last one delivered is its predecessor.
          if (!this.delivery.hasOrdered(o.id))
            this.applyPaxos(
              this.paxos.cast({ id: o.id, prevStrong: this.lastDelivered.get(o.id.replica) ?? 0 }),
            );
          break;
        case 'persist':
          this.effects.persist({ layer: 'core', record: o.record });
          if (o.record.kind === 'commit' && this.effects.observe !== undefined)
            this.effects.observe({
              kind: 'commit',
              ids: o.record.ids,
              position: this.replica.committedOps - o.record.ids.length,
            });
          break;
        case 'respond':
          this.effects.respond(o);
          break;
      }
    }
  }

  private applyGossip(outputs: GossipOutput[]): void {
    const delivered: OpId[] = [];
    for (const o of outputs) {
      if (o.type === 'send') {
        const told = o.msg.kind === 'gone' ? this.paxos.tellRemovedInsteadOfGone(o.to) : null;
        if (told === null) this.effects.send(o.to, { kind: 'gossip', msg: o.msg }, o.lazy === true);
        else this.applyPaxos(told);
      } else if (o.type === 'deliver') {
        this.effects.observe?.({ kind: 'op', req: o.req, local: false });
        delivered.push(o.req.id);
        this.deliverReq(o.req);
      } else if (o.type === 'unknownOwnOp') this.lostOwnOp(o.from, o.id);
      else this.lostDroppedReq(o.from, o.id);
    }
    // Ids whose Reqs Paxos waited for may be proposed or accepted now.
    if (delivered.length > 0) this.applyPaxos(this.paxos.reqsArrived(delivered));
  }

  private lostOwnOp(from: number, id: OpId): void {
    this.haltWith(
      `replica ${this.id} has lost ops it once sent: replica ${from} holds or knows of its op ` +
        `${formatOpId(id)}, of which this replica has no record. Commits made without --fsync ` +
        `were lost in a power failure, its data directory was replaced by an older copy, or ` +
        `another process runs with id ${this.id}. It stops rather than reuse op ids the cluster ` +
        `already has. ${REBUILD}`,
    );
  }

  private lostDroppedReq(from: number, id: OpId): void {
    // Removed: its peers compact without it, and it will never execute that op (it stops once
    // the members tell it it is no longer needed). The simulator: seeds 2123 and 11927.
    if (this.paxos.retiring) return;
    this.rebuildOrHalt(
      from,
      `it needs the op ${formatOpId(id)}, of which it has no record, and replica ${from} ` +
        `dropped it once every replica held it, this one included`,
    );
  }

  /**
   * It lacks what its peers compacted (`why`). With no op of its own yet (a new or wiped replica,
   * possibly part-way through learning or rebuilding when it crashed), it rebuilds itself from a
   * peer's checkpoint, starting with `peer`, which had what it lacks. With ops of its own, a
   * checkpoint could not give back those only it had, whose ids it would then reuse: it halts.
   */
  private rebuildOrHalt(peer: number, why: string): void {
    if (this.replica.issuedCount() === 0) {
      this.pullFrom(peer);
      return;
    }
    this.haltWith(
      `replica ${this.id} has lost state: ${why}. Commits made without --fsync were lost in a ` +
        `power failure, or its data directory was replaced by an older copy. ${REBUILD}`,
    );
  }

  // ---------------------------------------------------------------- identity and state transfer

  /**
   * A replica with no origin (no IdentityRecord: a new disk, or a wiped one) takes one once it has
   * heard every peer and rejoined Paxos: the first incarnation of its slot above every incarnation
   * of it that it or any peer knows ops of (core/op-id.ts). Ops of an earlier incarnation that no
   * peer holds were never anywhere else and are gone, so their ids are never seen again; those a
   * peer holds stay the ops of an origin that will never issue another, and commit as any
   * other's (a stranded strong one is cast on its behalf, Replica `cabAdopt`). The record is
   * durable before the first op numbered under it.
   */
  private decideOrigin(): void {
    if (
      this.replica.id !== ORIGIN_UNDECIDED ||
      this.gossip.peersSummarized() < this.gossip.others.length ||
      // Every peer has had a summary of this process: none prunes by what a wiped predecessor
      // reported any more (the `pruned` it reports covers what it did before).
      !this.gossip.echoedByAll() ||
      this.paxos.rejoining
    )
      return;
    // First it takes a peer's checkpoint if a peer dropped ops it lacks
    // (gossip prunes what every replica reported, this replica's earlier incarnation included):
    // it must not number ops of its own before it has a state no peer compacted away, since it
    // could not rebuild itself after (`rebuildOrHalt`). A snapshot taken now holds every op a peer
    // dropped before this replica's summaries reached it, and no peer drops an op this replica's
    // summary lacks.
    const compacted = this.gossip.compactedAtPeer();
    if (compacted !== null) {
      this.pullFrom(compacted);
      return;
    }
    let incarnation = 0;
    for (const o of this.gossip.knownOrigins())
      if (slotOf(o) === this.id) incarnation = Math.max(incarnation, incarnationOf(o) + 1);
    const origin = originOf(this.id, incarnation);
    this.effects.persist({ layer: 'identity', record: { kind: 'identity', origin } });
    this.replica.adoptOrigin(origin);
    this.gossip.setOrigin(origin);
    this.effects.observe?.({ kind: 'identity', origin });
  }

  /**
   * After a crash mid-transfer: the chunks it made durable, of its last session, are kept, and it
   * asks the same peer for the rest (`resumeAsk`, at the next tick). A sender that no longer has
   * that session's snapshot refuses, and the transfer starts over elsewhere.
   */
  private resumeTransfer(chunks: readonly TransferChunkRecord[], nowMs: number): void {
    this.incoming = null;
    const last = chunks[chunks.length - 1];
    if (last === undefined) return;
    const mine = chunks.filter((c) => c.session === last.session && c.peer === last.peer);
    this.incoming = IncomingTransfer.resume(last.peer, last.session, last.total, mine, nowMs);
    this.transferSessions = Math.max(this.transferSessions, last.session);
    this.resumeAsk = true;
    this.counters.transfersResumed++;
  }

  /** Starts (or restarts, with another peer) pulling a checkpoint from `peer`. */
  private pullFrom(peer: number): void {
    this.transferSessions = Math.max(this.transferSessions + 1, Math.floor(this.now));
    if (this.incoming === null)
      this.incoming = new IncomingTransfer(peer, this.transferSessions, this.now);
    else this.incoming.restart(peer, this.transferSessions, this.now);
    this.counters.transferAttempts++;
    this.sendTransfer(peer, this.incoming.ask(this.now));
  }

  private nextPeer(after: number): number {
    const others = this.gossip.others;
    return others.find((p) => p > after) ?? others[0]!;
  }

  private sendTransfer(to: number, msg: TransferMessage): void {
    this.effects.send(to, { kind: 'transfer', msg });
  }

  private onTransfer(from: number, msg: TransferMessage): void {
    if (msg.type === 'ask') {
      // A replica that is still learning or rebuilding has no state worth giving, nor one that
      // was removed: it learns no more (the simulator: seed 1371 with 3 replicas, where a new
      // member pulled the removed replica's stale checkpoint, rejected it and asked it again).
      if (this.learningFromPeers || this.leaving) {
        this.sendTransfer(from, { type: 'refuse', session: msg.session });
        return;
      }
      for (const chunk of this.outgoing.answer(
        from,
        msg,
        this.now,
        () => this.snapshot(from),
        this.transferChunkChars,
      )) {
        this.counters.chunksSent++;
        this.sendTransfer(from, chunk);
      }
      return;
    }
    const t = this.incoming;
    if (t === null || from !== t.peer || msg.session !== t.session) return;
    if (msg.type === 'refuse') {
      this.pullFrom(this.nextPeer(from));
      return;
    }
    this.counters.chunksReceived++;
    const progress = t.onChunk(from, msg, this.now);
    if (progress !== 'duplicate')
      this.effects.persist({
        layer: 'transfer',
        record: {
          kind: 'chunk',
          peer: from,
          session: msg.session,
          index: msg.index,
          total: msg.total,
          part: msg.part,
        },
      });
    if (progress === 'next') this.sendTransfer(from, t.ask(this.now));
    else if (progress === 'duplicate') return;
    else if (progress === 'complete' || (this.unsafeInstallIncomplete && t.lastChunkIn))
      this.finishTransfer(t);
  }

  private finishTransfer(t: IncomingTransfer): void {
    const result = fromChunks(t.chunks(), this.unsafeInstallIncomplete);
    if (!result.ok) {
      // Mangled or inconsistent: nothing of it is installed; pull a fresh one elsewhere.
      this.counters.transfersRejected++;
      this.pullFrom(this.nextPeer(t.peer));
      return;
    }
    this.install(result.state);
  }

  /**
   * What this replica gives peer `to`, which rebuilds itself: its checkpoint, made now. Of the
   * final ops' Reqs it holds for peers, only those another replica than `to` may still lack: the
   * rest it holds because `to` never reported them (a new member holds up every prune until it
   * has joined), and `to` gets them as state. Sending them all made a new member's checkpoint grow
   * with every op the cluster ran while it pulled it, and the pull never ended (the simulator,
   * with a small chunk size and a lossy network).
   */
  private snapshot(to: number): TransferredState {
    const core = this.replica.checkpoint();
    const live = new Set(core.reqs.map((q) => opKey(q.id)));
    const held = this.gossip
      .heldReqs()
      .filter((q) => !live.has(opKey(q.id)) && this.gossip.lackedBeyond(q.id, to));
    return {
      finalized: core.finalized,
      committedLive: core.committedLive,
      known: core.known,
      hlc: core.hlc,
      truncatedBelow: this.paxos.status().truncatedBelow,
      config: this.paxos.membership().entries,
      delivered: [...this.lastDelivered].map(([replica, eventNo]) => ({ replica, eventNo })),
      state: core.state,
      reqs: core.reqs,
      held,
    };
  }

  /**
   * Installs a peer's checkpoint as this replica's own, in one durable `checkpoint` record that
   * supersedes everything it wrote before, and rebuilds every part from it, as a restart would.
   * The replica keeps its identity (its origin, if it had one: it has no op under it) and its own
   * promises and votes, if any survived; it takes none of the peer's. With no vote on disk it
   * rejoins Paxos from the peer's truncation point (PaxosOptions.noDurableVotes).
   */
  private install(t: TransferredState): void {
    // Nothing this replica has may be lost by it: peers drop a Req once every replica reported
    // it, this one included, so what it reported it must keep. Its finalized prefix must be part
    // of the checkpoint's (committed lists are prefixes of one another): a peer behind it gave an
    // older state, and it asks another. The Reqs it holds that the checkpoint does not have stay,
    // as ops not committed yet.
    if (t.finalized < this.replica.finalizedCount()) {
      this.counters.transfersRejected++;
      this.pullFrom(this.gossip.furthestAhead()?.peer ?? this.nextPeer(this.incoming!.peer));
      return;
    }
    const inCheckpoint = new Set([...t.reqs, ...t.held].map((q) => opKey(q.id)));
    const kept = this.gossip
      .heldReqs()
      .filter((q) => !t.known.has(q.id) && !inCheckpoint.has(opKey(q.id)));
    const own = this.paxos
      .durableState()
      .filter(
        (r) => r.kind === 'promise' || (r.kind === 'accept' && r.instance >= t.truncatedBelow),
      );
    const origin = this.replica.id === ORIGIN_UNDECIDED ? null : this.replica.id;
    const checkpoint: HostCheckpoint = {
      kind: 'checkpoint',
      core: {
        finalized: t.finalized,
        state: t.state,
        reqs: [...t.reqs, ...kept],
        committedLive: t.committedLive,
        known: t.known,
        hlc: t.hlc,
        eventNo: 0,
        lastStrongEventNo: 0,
        finalizedOwnStrong: 0,
      },
      cab: [
        ...own,
        ...(t.truncatedBelow > 0 ? [{ kind: 'truncate' as const, below: t.truncatedBelow }] : []),
        // The cluster's configurations from the truncation point on, as the peer knew them (a new
        // member learns the cluster's membership here; the placeholder it started with goes).
        ...t.config.map((entry: ConfigEntry) => ({ kind: 'config' as const, entry })),
      ],
      held: t.held,
      delivered: t.delivered,
      origin,
    };
    this.effects.persist({ layer: 'checkpoint', record: checkpoint });
    this.firstJobId = this.replica.jobIdsUsed;
    this.incoming = null;
    this.counters.transfersIn++;
    this.counters.checkpoints++;
    this.blockedSince = null;
    this.catchUpProgressAt = Number.NEGATIVE_INFINITY;
    this.wasBehind = 0;
    this.load([{ layer: 'checkpoint', record: checkpoint }], this.now);
    this.effects.observe?.({
      kind: 'transferred',
      finalized: t.finalized,
      committed: t.finalized + t.committedLive,
      keys: t.state.length,
    });
  }

  /** Stops for good: every later input is ignored (HostEffects.halt). */
  private haltWith(reason: string): void {
    this.haltReason = reason;
    this.effects.halt(reason);
  }

  private deliverReq(req: Req): void {
    this.applyCore(this.replica.deliverReq(req));
  }

  private applyPaxos(outputs: PaxosOutput[]): void {
    let changed = false;
    for (const o of outputs) {
      if (o.type === 'send')
        this.effects.send(o.to, { kind: 'paxos', msg: o.msg }, o.lazy === true);
      else if (o.type === 'persist') this.effects.persist({ layer: 'cab', record: o.record });
      else if (o.type === 'want') this.applyGossip(this.gossip.want(o.ids));
      else if (o.type === 'skip') {
        this.delivery.skipTo(o.below);
        changed = true;
      } else if (o.type === 'lostState') {
        this.rebuildOrHalt(o.from, o.reason);
        return;
      } else if (o.type === 'config') {
        this.effects.observe?.({ kind: 'reconfigured', outcome: o.outcome });
      } else if (o.type === 'readIndex') {
        this.readsIndexed.push({ tag: o.key, index: o.index });
        changed = true;
      } else {
        this.delivery.decide(o.instance, o.value);
        changed = true;
      }
    }
    this.syncPeers();
    if (changed) this.applyCore([]);
    this.retireIfRemoved();
  }

  /** If the head of the delivery stream has waited a while for its dependencies, pull them ("no loss", §5). */
  private pullMissing(): void {
    let blocked: OpId | null = null;
    this.delivery.next((id) => {
      blocked = id;
      return false;
    });
    if (blocked === null || this.replica.checkDep(blocked)) {
      this.blockedSince = null;
      return;
    }
    this.blockedSince ??= this.now;
    if (this.now - this.blockedSince < this.pullAfterMs) return;
    const missing = this.replica.missingDeps(blocked);
    if (missing.length > 0) this.applyGossip(this.gossip.want(missing));
  }

  /**
   * The host is idle: nothing tentative, nothing to deliver, no own strong op waiting for CAB.
   * `stranded`: how many tentative ops may stay, because they wait for an op that died with its
   * origin (the simulator counts them for a replica lost for good).
   */
  settled(stranded = 0): boolean {
    const s = this.replica.stats();
    return (
      this.incoming === null &&
      s.tentative === stranded &&
      s.unvalidated === 0 &&
      s.running === 0 &&
      this.paxos.status().pendingCasts === 0 &&
      this.delivery.backlog() === 0
    );
  }
}
