import { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type { AcceptorRecord, PaxosMessage } from '../cab/messages.js';
import { MultiPaxos, type PaxosOptions, type PaxosOutput } from '../cab/multi-paxos.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import { formatOpId, opKey, type OpId } from '../core/op-id.js';
import { Replica, type InvokeRequest, type ReplicaOptions } from '../core/replica.js';
import type { DurableRecord, ExecutionResult, Output, Req, Response } from '../core/types.js';
import type { Executor } from '../exec/executor.js';
import { Gossip, type GossipOptions } from '../gossip/gossip.js';
import type { GossipMessage, GossipOutput } from '../gossip/messages.js';

/** What replicas send each other: gossip (Reqs) and Paxos (ids). */
export type PeerMessage =
  | { readonly kind: 'gossip'; readonly msg: GossipMessage }
  | { readonly kind: 'paxos'; readonly msg: PaxosMessage };

/** Everything a replica writes to its disk. */
export type HostRecord =
  | { readonly layer: 'core'; readonly record: DurableRecord }
  | { readonly layer: 'cab'; readonly record: AcceptorRecord }
  /**
   * Supersedes every record written before it: once it is durable, a driver may drop them (and
   * should, in the same transaction or right after). Recovery starts from the last checkpoint on
   * disk and the records after it.
   */
  | { readonly layer: 'checkpoint'; readonly record: HostCheckpoint };

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
  | { readonly kind: 'checkpoint'; readonly count: number };

export interface HostOptions {
  readonly id: number;
  /** Every replica's id, this one included. */
  readonly replicas: readonly number[];
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
}

/**
 * One Creek replica process, without I/O: the core (Algorithm 1), gossip (reliable broadcast with
 * anti-entropy), Multi-Paxos (CAB) and the conditional delivery that feeds CAB's decisions to the
 * core when `checkDep` holds. It routes each part's outputs to the others and to the driver. The
 * simulator and the real runtime drive the same host.
 */
/** How a halt for state the peers compacted ends: what the operator can do (no state transfer). */
const CANNOT_REBUILD =
  'Restore its data directory; a replica cannot yet be rebuilt from its peers once they compacted.';

export class ReplicaHost {
  readonly id: number;
  readonly replica: Replica;
  readonly gossip: Gossip;
  readonly paxos: MultiPaxos;
  readonly delivery: ConditionalDelivery;
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
  private haltReason: string | null = null;
  /** Why this replica stopped for good (`HostEffects.halt`); null while it runs. */
  get halted(): string | null {
    return this.haltReason;
  }

  /**
   * It has no record of an op of its own — a new replica, or one whose disk was lost, perhaps
   * after it had begun to learn again (a crash then leaves it other replicas' ops but none of its
   * own) — and must take no client op, nor issue a no-op, yet: it has not had a summary from every
   * peer, or Paxos still rejoins (PaxosOptions.noDurableVotes). The only copy of an op of its past
   * may be at a peer that was down, and the summary is how it finds such an op and halts (Gossip
   * `unknownOwnOp`) instead of reusing its id: every peer, not a majority. And an op of its own on
   * disk must mean it is done rejoining, since Paxos counts such a replica as one that never lost
   * its votes. Never true again once false (summaries add up, a rejoin ends once).
   */
  get learningFromPeers(): boolean {
    return (
      this.replica.issuedCount() === 0 &&
      (this.gossip.peersSummarized() < this.gossip.others.length || this.paxos.rejoining)
    );
  }

  /** Counters for status pages and tests. */
  readonly counters = { checkpoints: 0, pruned: 0 };

  /** A fresh replica, or one rebuilt from `recovered` (everything it had made durable). */
  constructor(
    options: HostOptions,
    private readonly effects: HostEffects,
    recovered?: { readonly records: readonly HostRecord[]; readonly nowMs: number },
  ) {
    this.id = options.id;
    this.executor = options.executor;
    this.pullAfterMs = options.pullAfterMs ?? 20;
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    this.catchUpHold = options.catchUpHold ?? CATCH_UP_HOLD;
    this.catchUpStallMs = options.catchUpStallMs ?? CATCH_UP_STALL_MS;
    if (!(this.catchUpHold >= 1))
      throw new Error(`catchUpHold must be a number of ops, 1 or more, not ${this.catchUpHold}`);
    this.pruneEveryMs = options.pruneEveryMs ?? 50;
    const replicaOptions: ReplicaOptions = { ...options.replica, id: options.id };
    const { checkpoint, tail } = lastCheckpoint(recovered?.records ?? []);
    const cab = [
      ...(checkpoint?.cab ?? []),
      ...tail.flatMap((r) => (r.layer === 'cab' ? [r.record] : [])),
    ];
    const paxosOptions = (issuedOps: boolean): PaxosOptions => ({
      ...options.paxos,
      self: options.id,
      replicas: options.replicas,
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
    this.gossip = new Gossip({ ...options.gossip, self: options.id, peers: options.replicas });
    if (recovered === undefined) {
      this.replica = new Replica(replicaOptions);
      this.paxos = new MultiPaxos(paxosOptions(false));
      this.delivery = new ConditionalDelivery();
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
    this.now = recovered.nowMs;
    const { replica, outputs } = Replica.recover(
      replicaOptions,
      core,
      recovered.nowMs,
      checkpoint?.core,
    );
    this.replica = replica;
    this.paxos = new MultiPaxos(paxosOptions(replica.issuedCount() > 0), { records: cab });
    this.delivery = new ConditionalDelivery(truncatedBelow, delivered);
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
    this.applyCore(outputs);
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

  /** Inputs are waiting for `runDeferred`. */
  get executionDue(): boolean {
    return this.halted === null && this.replica.executionDue;
  }

  /** A job the executor deferred (returned undefined for) finished. */
  executed(result: ExecutionResult): void {
    if (this.halted !== null) return;
    this.applyCore(this.replica.executed(result));
  }

  receive(from: number, message: PeerMessage): void {
    if (this.halted !== null) return;
    if (message.kind === 'gossip') {
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
    this.applyCore(this.replica.tick(nowMs, !this.learningFromPeers));
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
      record: { kind: 'checkpoint', core, cab: this.paxos.durableState(), held, delivered },
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

  /** Runs executions inline, CAB-casts, gossips, and delivers what became deliverable. */
  private applyCore(first: Output[]): void {
    const queue = first;
    for (let i = 0; ; i++) {
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
      if (o.type === 'send')
        this.effects.send(o.to, { kind: 'gossip', msg: o.msg }, o.lazy === true);
      else if (o.type === 'deliver') {
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
        `${formatOpId(id)}, of which this replica has no record. Its data directory was ` +
        `wiped or replaced, commits made without --fsync were lost in a power failure, or another ` +
        `process runs with id ${this.id}. It stops rather than reuse op ids the cluster already ` +
        `has: restore its data directory, or make sure only one process has id ${this.id}, and ` +
        `start it again.`,
    );
  }

  private lostDroppedReq(from: number, id: OpId): void {
    this.haltWith(
      `replica ${this.id} has lost state: it needs the op ${formatOpId(id)}, of which it has no ` +
        `record, and replica ${from} dropped it once every replica held it, this one included. ` +
        `Its data directory was wiped or replaced, or commits made without --fsync were lost in a ` +
        `power failure. ${CANNOT_REBUILD}`,
    );
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
        this.haltWith(
          `replica ${this.id} started with no vote and no op of its own in its data directory ` +
            `(a new or a wiped one), but ${o.reason}. ${CANNOT_REBUILD}`,
        );
        return;
      } else {
        this.delivery.decide(o.instance, o.value);
        changed = true;
      }
    }
    if (changed) this.applyCore([]);
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
      s.tentative === stranded &&
      s.unvalidated === 0 &&
      s.running === 0 &&
      this.paxos.status().pendingCasts === 0 &&
      this.delivery.backlog() === 0
    );
  }
}
