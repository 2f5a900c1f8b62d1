import type { HostStatus, Waiting } from '@creek/protocol';
import { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type { ReconfigOutcome } from '../cab/configuration.js';
import { MultiPaxos, type PaxosOptions } from '../cab/multi-paxos.js';
import type { OpId } from '../core/op-id.js';
import {
  ORIGIN_UNDECIDED,
  Replica,
  type InvokeRequest,
  type ReplicaOptions,
} from '../core/replica.js';
import type { Executor } from '../exec/executor.js';
import { Gossip } from '../gossip/gossip.js';
import {
  CATCH_UP_HOLD,
  CATCH_UP_STALL_MS,
  DEFAULT_CHECKPOINT_EVERY,
  type HostOptions,
} from './options.js';
import type { PeerMessage } from './peer-message.js';
import { ReadyBuilder, type HostInput, type PeerSend, type Ready } from './ready.js';
import {
  checkpointOf,
  lastCheckpoint,
  lastDivergence,
  type HostCheckpoint,
  type HostRecord,
} from './records.js';
import type { HostParts } from './parts.js';
import { ClientView } from './client-view.js';
import { Router } from './router.js';
import { hostStatus, partsSettled } from './status.js';
import {
  droppedReqWhy,
  lostOwnOpReason,
  lostStateReason,
  originDecision,
  originIsDead,
} from './identity.js';
import { CatchUpHold } from './catch-up-hold.js';
import { Divergence, refusal } from './divergence.js';
import { ProgressWatch, waitingFor } from './progress.js';
import type { TransferredState } from './state-transfer.js';
import { noTransfers, Transfers, type TransferCounters } from './transfers.js';
import { backupOf, type BackupSnapshot } from './backup.js';

/**
 * One Creek replica process, without I/O: the core (Algorithm 1), gossip (reliable broadcast with
 * anti-entropy), Multi-Paxos (CAB) and the conditional delivery that feeds CAB's decisions to the
 * core when `checkDep` holds — one pure state machine with one entry, `step`, in the shape of etcd
 * raft's `Ready`: an input in (HostInput), a batch out (Ready). The simulator and the real runtime
 * drive the same host, and consume its batches the same way.
 *
 * What the parts output is routed to each other by one loop (router.ts), and leaves through a
 * ReadyBuilder, which holds every message and response until the records written before it are
 * durable. Rebuilding from a peer's checkpoint, and serving one, is transfers.ts's; the status
 * every driver shows is status.ts's.
 */
export class ReplicaHost {
  readonly id: number;
  private readonly options: HostOptions;
  // Rebuilt by a state transfer (`installed`): read them through the getters, never keep them.
  // Filled by `load`, before anything reads them (the constructor calls it first).
  private readonly parts = {} as HostParts;
  private get replica(): Replica {
    return this.parts.replica;
  }
  private get gossip(): Gossip {
    return this.parts.gossip;
  }
  private get paxos(): MultiPaxos {
    return this.parts.paxos;
  }
  private get delivery(): ConditionalDelivery {
    return this.parts.delivery;
  }

  /** What it knows of the ops client sessions saw: seen vectors, the hello wait (client-view.ts). */
  readonly clients: ClientView = new ClientView(
    this.parts,
    () => this.now,
    (origin) => this.out.firstNotDurable(origin),
  );

  /**
   * The parts, as they are now, for tests and the simulator's checkers, which look inside a
   * replica to judge it. Drivers do not: they give the host inputs (`step`), act on its Readies,
   * and read `status()` and the queries below.
   */
  inspect(): {
    readonly replica: Replica;
    readonly gossip: Gossip;
    readonly paxos: MultiPaxos;
    readonly delivery: ConditionalDelivery;
  } {
    return {
      replica: this.replica,
      gossip: this.gossip,
      paxos: this.paxos,
      delivery: this.delivery,
    };
  }

  // ---------------------------------------------------------------- queries

  /** Whom this replica talks to, itself included (MultiPaxos.peerIds): the same array until it changes. */
  peerIds(): readonly number[] {
    return this.paxos.peerIds();
  }

  /** The origin this replica numbers its ops under (core/op-id.ts); ORIGIN_UNDECIDED while it has none. */
  get origin(): number {
    return this.replica.id;
  }

  /** Keys that may have changed since the last call (live queries: Replica.takeChangedKeys). */
  takeChangedKeys(): Set<string> {
    return this.replica.takeChangedKeys();
  }

  /** Executions, rollbacks and reordering commits so far: cheap, for a viewer's every turn. */
  executionCounts(): { executions: number; rollbacks: number; reorderingCommits: number } {
    const { executions, rollbacks, reorderingCommits } = this.replica.metrics;
    return { executions, rollbacks, reorderingCommits };
  }

  /** The ids of its tentative list, in order. */
  tentativeIds(): OpId[] {
    return this.replica.tentativeIds();
  }
  private readonly executor: Executor;
  private readonly pullAfterMs: number;
  private readonly checkpointEvery: number;
  private readonly catchUp: CatchUpHold; // when it holds speculation for a catch-up
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
  private haltReason: string | null = null;
  /** What this host produced since the last step, and the outputs it holds for their records. */
  private readonly out = new ReadyBuilder();
  /** Routes the parts' outputs to each other and out. */
  private readonly router: Router;
  /** The state transfer it pulls to rebuild itself, and those it serves. */
  private readonly transfers: Transfers;
  private readonly divergence: Divergence; // compares its finalized state with its peers'.
  private readonly progress = new ProgressWatch(); // what it waits for, if stuck (progress.ts).
  /** Why this replica stopped for good (Ready.halted); null while it runs. */
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
      this.transfers.rebuilding ||
      this.replica.id === ORIGIN_UNDECIDED ||
      (this.replica.issuedCount() === 0 && this.paxos.rejoining)
    );
  }

  /**
   * A membership change removed it (decided, which its disk keeps across a restart, or told by a
   * peer; MultiPaxos.leaving): it takes no client op, since the members ignore its ops, and stays
   * an acceptor of the instances before its removal until the members say it is no longer needed
   * (`removed`, and it stops). Its clients go to a member.
   */
  get leaving(): boolean {
    return this.paxos.leaving;
  }

  /** What it waits for as of its last tick, while it cannot make progress by itself; or null. */
  get waiting(): Waiting | null {
    return this.progress.current;
  }

  /** Its finalized state now, for a backup (backup.ts); only between two steps. */
  backup(): BackupSnapshot {
    return backupOf(this.parts);
  }

  /** It pulls a checkpoint from a peer (state transfer), and takes part in nothing else meanwhile. */
  get rebuilding(): boolean {
    return this.transfers.rebuilding;
  }

  /** Counters for status pages and tests. */
  readonly counters: TransferCounters & { pruned: number } = { ...noTransfers(), pruned: 0 };

  /**
   * A fresh replica, or one rebuilt from `recovered` (everything it had made durable). What
   * recovery (or joining) wants done first is the Ready of the first step, `{ kind: 'start' }`.
   */
  constructor(
    options: HostOptions,
    recovered?: { readonly records: readonly HostRecord[]; readonly nowMs: number },
  ) {
    this.id = options.id;
    this.options = options;
    this.executor = options.executor;
    this.pullAfterMs = options.pullAfterMs ?? 20;
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.catchUp = new CatchUpHold(
      options.catchUpHold ?? CATCH_UP_HOLD,
      options.catchUpStallMs ?? CATCH_UP_STALL_MS,
    );
    this.pruneEveryMs = options.pruneEveryMs ?? 50;
    this.divergence = new Divergence(
      {
        self: options.id,
        out: this.out,
        digests: () => this.replica.finalDigests,
        members: () => this.paxos.membership().current.members.map((m) => m.id),
      },
      options.unsafeSkipDivergenceCheck === true,
    );
    this.router = new Router(this.parts, this.out, this.executor, {
      claim: () => this.divergence.claim(),
      servesStable: () => this.divergence.stopped === null,
      syncPeers: () => this.syncPeers(),
      retireIfRemoved: () => this.retireIfRemoved(),
      delivered: (id) => this.noteDelivered(id),
      lastDeliveredOf: (origin) => this.lastDelivered.get(origin) ?? 0,
      lostOwnOp: (from, id) => this.haltWith(lostOwnOpReason(this.id, from, id)),
      lostDroppedReq: (from, id) => this.lostDroppedReq(from, id),
      rebuildOrHalt: (from, why) => this.rebuildOrHalt(from, why),
    });
    this.transfers = new Transfers(
      {
        parts: this.parts,
        out: this.out,
        counters: this.counters,
        now: () => this.now,
        // Diverged without a majority's state: a copy would make it one (host/divergence.ts).
        givesNoState: () =>
          this.learningFromPeers || this.leaving || this.divergence.stopped !== null,
        lastDelivered: () =>
          [...this.lastDelivered].map(([replica, eventNo]) => ({ replica, eventNo })),
        installed: (checkpoint, t) => this.installed(checkpoint, t),
      },
      options.transferChunkChars,
      options.unsafeInstallIncomplete === true,
      options.transferPacing,
    );
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
    this.transfers.resume(
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
    this.parts.gossip = new Gossip({
      ...options.gossip,
      self: options.id,
      peers: options.members?.map((m) => m.id) ?? options.replicas,
      origin,
    });
    this.lastDelivered.clear();
    this.syncedPeerIds = null;
    // Reads of the replica this one replaces: their tags and indexes mean nothing any more.
    this.router.reset();
    if (records === undefined || records.length === 0) {
      this.now = Math.max(this.now, nowMs);
      this.parts.replica = new Replica(replicaOptions);
      this.parts.paxos = new MultiPaxos(paxosOptions(false));
      this.parts.delivery = new ConditionalDelivery();
      this.syncPeers();
      // A new member trusts no genesis configuration: a peer's checkpoint gives it the cluster's.
      if (options.join === true && !this.transfers.rebuilding)
        this.transfers.pullFrom(this.gossip.others[0]!);
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
    this.parts.replica = replica;
    this.parts.paxos = new MultiPaxos(paxosOptions(replica.issuedCount() > 0), { records: cab });
    this.parts.delivery = new ConditionalDelivery(truncatedBelow, delivered);
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
    this.divergence.restore(lastDivergence(checkpoint, tail), this.now);
    this.router.core(outputs);
  }

  /** The ids `syncPeers` last gave gossip and the driver. */
  private syncedPeerIds: readonly number[] | null = null;

  /**
   * Gossip talks to the replicas Paxos talks to: every member of a configuration from the decided
   * prefix on (cab/configuration.ts). Called after every Paxos input; cheap when nothing changed.
   */
  private syncPeers(): void {
    const ids = this.paxos.peerIds();
    if (ids === this.syncedPeerIds) return;
    const before = this.syncedPeerIds;
    this.syncedPeerIds = ids;
    if (before !== null && before.length === ids.length && before.every((x, i) => x === ids[i]))
      return;
    this.gossip.setPeers(ids);
    const m = this.paxos.membership();
    const peers = ids.map((id) => ({ id, address: m.addressOf(id) ?? '' }));
    this.out.event({ kind: 'peers', peers });
  }

  /** What this replica knows of the cluster's membership (MultiPaxos.membership). */
  membership(): ReturnType<MultiPaxos['membership']> {
    return this.paxos.membership();
  }

  /**
   * Takes one input and returns what the host asks of its driver now (Ready): the records to
   * write, the messages and responses whose records are durable, the events, and whether it
   * halted. A halted or removed replica ignores every input but `durable` (what it held may still
   * leave once its records are on disk).
   */
  step(input: HostInput): Ready {
    // A driver acts on a Ready after the step that made it: one that stepped again from inside a
    // step would get the outer step's outputs, and its own would land in the outer Ready.
    if (!this.router.idle) throw new Error('ReplicaHost.step was called from inside a step');
    if (input.kind === 'durable') this.out.durableUpTo(input.upTo);
    else if (input.kind !== 'start' && this.halted === null) {
      switch (input.kind) {
        case 'invoke':
          this.invoke(input.now, input.request);
          break;
        case 'receive':
          this.receive(input.from, input.message);
          break;
        case 'tick':
          this.tick(input.now);
          break;
        case 'run':
          this.router.core(this.replica.runDeferred());
          break;
        case 'executed':
          // A job of the replica a state transfer replaced: its result means nothing any more.
          if (input.result.jobId >= this.firstJobId)
            this.router.core(this.replica.executed(input.result));
          break;
        case 'reconfigure':
          // A membership change an operator asked this replica for: ordered through the log (the
          // leader proposes it once the last change is in force). Its fate:
          // `reconfigOutcome(request.nonce)`.
          if (this.rebuilding) break;
          this.now = Math.max(this.now, input.now);
          this.router.paxos(this.paxos.reconfigure(input.request));
          break;
        case 'checkpoint':
          this.checkpoint();
          break;
      }
    }
    return this.out.take();
  }

  /** Messages and responses the host holds until records are durable (ReadyBuilder). */
  get holding(): number {
    return this.out.holding;
  }

  /**
   * Whether the host holds, until records are durable, a message that satisfies `pred`: a driver
   * that makes its writes durable in batches may commit early for one that others wait on.
   */
  holdsMessage(pred: (send: PeerSend) => boolean): boolean {
    return this.out.holdsMessage(pred);
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
    this.out.event({ kind: 'removed', reason });
  }

  private invoke(nowMs: number, request: InvokeRequest): void {
    this.now = Math.max(this.now, nowMs);
    // Drivers send no op to a replica that serves no stable answer (`diverged`): none is taken.
    const stopped = this.divergence.stopped;
    if (stopped === null) this.router.core(this.replica.invoke(nowMs, request));
    else this.out.respond(refusal(request.tag, stopped));
  }

  /** Why it serves no stable answer nor takes client ops (host/divergence.ts), or null. */
  get diverged(): string | null {
    return this.divergence.stopped;
  }

  /**
   * A `tick` now would do what an input waits for (a strong read's no-op: Replica.noopWanted).
   * The runtime, whose ticks are 25 ms apart, ticks at once when this holds.
   */
  get tickWanted(): boolean {
    return (
      this.halted === null &&
      !this.transfers.rebuilding &&
      !this.learningFromPeers &&
      this.replica.noopWanted
    );
  }

  /** Inputs are waiting for a `run` step. */
  get executionDue(): boolean {
    return this.halted === null && this.replica.executionDue;
  }

  private receive(from: number, message: PeerMessage): void {
    if (message.kind === 'transfer') this.transfers.receive(from, message.msg);
    // While it rebuilds itself it takes part in nothing else: what it would learn, the checkpoint
    // it installs replaces (and its gossip or Paxos stopped when it found it lost state).
    else if (this.rebuilding) return;
    else if (message.kind === 'divergence') this.divergence.receive(from, message.msg, this.now);
    else if (message.kind === 'gossip') {
      const msg = message.msg;
      if (msg.kind === 'push') this.catchUp.pushed(this.now);
      else if (msg.kind === 'summary' && msg.digest !== undefined)
        this.divergence.onClaim(from, msg.digest, this.now);
      this.router.gossip(this.gossip.receive(from, msg));
      this.holdSpeculationWhileBehind();
    } else this.router.paxos(this.paxos.receive(from, message.msg));
  }

  /** Holds speculation while it catches up on many ops (catch-up-hold.ts), or releases it. */
  private holdSpeculationWhileBehind(): void {
    const hold = this.catchUp.decide(this.gossip.behind(), this.now);
    if (hold !== null) this.router.core(this.replica.holdSpeculation(hold));
  }

  /** Speculation is held for a catch-up (holdSpeculationWhileBehind). */
  get speculationHeld(): boolean {
    return this.replica.speculationHeld;
  }

  private tick(nowMs: number): void {
    this.now = Math.max(this.now, nowMs);
    this.watchProgress();
    if (this.transfers.tick(this.now)) return;
    this.decideOrigin();
    // A removed replica issues nothing of its own any more (no no-op either): nobody orders it.
    const mayIssue = !this.learningFromPeers && !this.leaving;
    const closes = this.options.closesAllowed?.() ?? true;
    const isDead = (o: number): boolean => closes && originIsDead(this.parts, o);
    this.router.core(this.replica.tick(nowMs, mayIssue, isDead));
    this.router.gossip(this.gossip.tick(nowMs));
    this.holdSpeculationWhileBehind();
    // Reported with heartbeats, which leave only after earlier writes are durable.
    this.paxos.setDeliveredBelow(this.delivery.deliveredBelow());
    this.router.paxos(this.paxos.tick(nowMs));
    this.divergence.tick(this.now);
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
   * acceptor's compacted state, the Reqs gossip holds for peers, and the delivery position. Only
   * between inputs, with every part's outputs routed (as `tick` and the `checkpoint` input do): the
   * checkpoint follows every record it refers to.
   */
  private checkpoint(): void {
    const record = checkpointOf(this.parts, this.lastDelivered, this.divergence.status().current);
    this.out.persist({ layer: 'checkpoint', record });
    const { core, held } = record;
    this.checkpointedAt = core.finalized;
    this.checkpointItems = core.state.length + core.reqs.length + held.length;
    this.counters.checkpoints++;
    this.out.event({ kind: 'checkpoint', count: this.counters.checkpoints });
  }

  private noteDelivered(id: OpId): void {
    if ((this.lastDelivered.get(id.replica) ?? 0) < id.eventNo)
      this.lastDelivered.set(id.replica, id.eventNo);
  }

  private lostDroppedReq(from: number, id: OpId): void {
    // Removed: its peers compact without it, and it will never execute that op (it stops once
    // the members tell it it is no longer needed). The simulator: seeds 2123 and 11927.
    if (this.paxos.retiring) return;
    this.rebuildOrHalt(from, droppedReqWhy(from, id));
  }

  /**
   * It lacks what its peers compacted (`why`). With no op of its own yet (a new or wiped replica,
   * possibly part-way through learning or rebuilding when it crashed), it rebuilds itself from a
   * peer's checkpoint, starting with `peer`, which had what it lacks. With ops of its own, a
   * checkpoint could not give back those only it had, whose ids it would then reuse: it halts.
   */
  private rebuildOrHalt(peer: number, why: string): void {
    if (this.replica.issuedCount() === 0) this.transfers.pullFrom(peer);
    else this.haltWith(lostStateReason(this.id, why));
  }

  /**
   * A replica with no origin takes one (identity.ts), or first a peer's checkpoint. The record is
   * durable before the first op numbered under it.
   */
  private decideOrigin(): void {
    const decision = originDecision(this.parts, this.id);
    if (decision === null) return;
    if ('pullFrom' in decision) {
      this.transfers.pullFrom(decision.pullFrom);
      return;
    }
    const { origin } = decision;
    this.out.persist({ layer: 'identity', record: { kind: 'identity', origin } });
    this.replica.adoptOrigin(origin);
    this.gossip.setOrigin(origin);
    this.out.event({ kind: 'identity', origin });
  }

  /**
   * A peer's checkpoint, written already (Transfers.install), is this replica's own now: every
   * part is rebuilt from it, as a restart would.
   */
  private installed(checkpoint: HostCheckpoint, t: TransferredState): void {
    this.firstJobId = this.replica.jobIdsUsed;
    this.counters.transfersIn++;
    this.counters.checkpoints++;
    this.blockedSince = null;
    this.catchUp.reset();
    this.load([{ layer: 'checkpoint', record: checkpoint }], this.now);
    this.out.event({
      kind: 'transferred',
      finalized: t.finalized,
      committed: t.finalized + t.committedLive,
      keys: t.state.length,
    });
  }

  /** Stops for good: every later input is ignored (Ready.halted). */
  private haltWith(reason: string): void {
    this.haltReason = reason;
    this.out.halt(reason);
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
    if (missing.length > 0) this.router.gossip(this.gossip.want(missing));
  }

  /**
   * The host is idle: nothing tentative, nothing to deliver, no own strong op waiting for CAB.
   * `stranded`: how many tentative ops may stay, because they wait for an op that died with its
   * origin (the simulator counts them for a replica lost for good).
   */
  settled(stranded = 0): boolean {
    return !this.transfers.rebuilding && partsSettled(this.parts, stranded);
  }

  /** Notes what it waits for now, if anything (progress.ts): on each tick, and for `status`. */
  private watchProgress(): void {
    const facts = { halted: this.halted, leaving: this.leaving, pulling: this.transfers.pulling };
    this.progress.observe(waitingFor(this.parts, facts), this.now);
  }

  /**
   * The replica's account of itself (HostStatus): what `/status`, `/metrics`, the event stream and
   * the simulator's frames all show, built here once from its parts.
   */
  status(): HostStatus {
    this.watchProgress();
    return hostStatus(this.parts, {
      id: this.id,
      settled: this.settled(),
      learning: this.learningFromPeers,
      halted: this.halted,
      waiting: this.progress.current,
      leaving: this.leaving,
      rebuilding: this.rebuilding,
      counters: this.counters,
      divergence: this.divergence.status(),
    });
  }
}
