import { opKey, slotOf, type OpId } from '../core/op-id.js';
import { ReqWaits, type Awaited } from './req-waits.js';
import { ReadIndexRounds, type ReadRequest, type ReadRound } from './read-index.js';
import {
  CONFIG_DELAY,
  ConfigHistory,
  genesis,
  majorityOf,
  type ConfigEntry,
  type Member,
  type ReconfigOutcome,
  type ReconfigRequest,
} from './configuration.js';
import {
  ballotLeader,
  ballotOf,
  ballotRound,
  isCast,
  type AcceptedEntry,
  type AcceptorRecord,
  type Batch,
  type CastId,
  type PaxosMessage,
} from './messages.js';

export interface PaxosOptions {
  readonly self: number;
  /**
   * The genesis configuration's replica ids, this one included (`members` gives their addresses):
   * it governs every instance until a membership change decided in the log (cab/configuration.ts).
   * A configuration on disk (PaxosRecovery) wins over it.
   */
  readonly replicas: readonly number[];
  /** The genesis configuration with addresses; when given, `replicas` is ignored. */
  readonly members?: readonly Member[];
  /**
   * A planted bug: every instance's quorum is a majority of the genesis configuration's size,
   * counted over any replicas, whatever changed since. Only the simulator's checkers want it.
   */
  readonly unsafeGenesisQuorum?: boolean;
  /**
   * A planted bug: the leader answers a read index at once, without the round that confirms no
   * higher ballot was promised (read-index.ts). Only the simulator's checkers want it.
   */
  readonly unsafeReadWithoutQuorum?: boolean;
  /** How often every replica announces itself (Ω) and its progress. */
  readonly heartbeatMs?: number;
  /** Silence after which a replica is presumed down. */
  readonly electionTimeoutMs?: number;
  /** When unanswered prepares, accepts, forwards and catch-ups are sent again. */
  readonly retransmitMs?: number;
  /** Most ids in one instance. */
  readonly maxBatch?: number;
  /** Most undecided instances a leader keeps open (pipelining); beyond that, ids wait and batch. */
  readonly maxInFlight?: number;
  /** Whether an id was already decided (the delivery stream knows): a leader does not propose it again. */
  readonly isOrdered?: (id: OpId) => boolean;
  /**
   * What this replica lacks to deliver `id` once decided: its Req, or Reqs of its causal context
   * (empty when it has them all). A leader proposes, and an acceptor accepts, only ids it lacks
   * nothing for (indirect consensus): so everything a decided id needs is held by a majority and
   * outlives any minority of crashes, its origin's included. Otherwise an origin that died after
   * its cast reached the leader but before its Req (or an op before it) reached anyone else would
   * leave a decided id nobody can deliver, and every later instance blocked behind it. Default:
   * nothing is ever lacking.
   */
  readonly missing?: (id: OpId) => readonly OpId[];
  /**
   * What `id` waits for, or null when nothing is lacking: one Req of what `missing(id)` would
   * name, or an origin's prefix that covers some of them (Awaited). A waiting cast or 2a is filed
   * under it until it arrives (`reqsArrived`), then checked again (Replica.awaitedDep). Default:
   * the Req `missing(id)[0]`.
   */
  readonly awaited?: (id: OpId) => Awaited | null;
  /**
   * How many of an origin's Reqs this replica holds without a gap: when one of its Reqs arrives,
   * waiters on its prefix are due (Awaited.prefix). Default: none (0).
   */
  readonly receivedUpTo?: (origin: number) => number;
  /**
   * This replica starts with no promise and no vote in its durable state (and, the host adds, no
   * op of its own): a new cluster's replica, or one whose disk was lost, possibly after it had
   * begun to rejoin (rejoining writes none of them, so a crash then leaves it here again; found by
   * the simulator's 'wipe' fault). The cases look the same to it, and the second may have
   * promised ballots and voted for values it no longer remembers: were it to promise or vote again
   * as if it never had, a majority formed with it could choose a second value for an instance
   * already decided (found end to end: a wiped replica and one that had missed the decision chose
   * again, with the third down). So it only learns (`rejoining`) until it has heard a heartbeat
   * from every peer, has promised the highest ballot any of them promised, and has learned every
   * instance any of them knew of; only then does it promise, vote or campaign. Each vote it forgot
   * was cast on an instance that its ballot's leader had accepted in place before the vote, so that
   * leader's heartbeat covers it. And since instances that every replica delivered are truncated,
   * a peer that reports such instances beyond what this replica delivered proves it lost state it
   * cannot get back: it stops (`lostState`). Default false.
   */
  readonly noDurableVotes?: boolean;
}

/**
 * What a peer's last heartbeat said: whether it hears a majority (a heartbeat without the field
 * says it does); one past the highest instance it knew decided, and delivered; one past the
 * highest it accepted a value for or knew decided; and the ballot it had promised.
 */
interface PeerHeartbeat {
  readonly quorate: boolean;
  readonly decidedBelow: number;
  readonly deliveredBelow: number;
  readonly knownBelow: number;
  readonly promised: number;
}

export type PaxosOutput =
  /**
   * `lazy`: no answer waits for this copy (see `fastQuorum`); a driver may hold it for a moment to
   * send it with later messages. Delaying a message is always safe; only liveness could suffer,
   * and the copies that matter are not lazy.
   */
  | {
      readonly type: 'send';
      readonly to: number;
      readonly msg: PaxosMessage;
      readonly lazy?: true;
    }
  /** Must be durable before any later output of this replica is acted on. */
  | { readonly type: 'persist'; readonly record: AcceptorRecord }
  /** An instance was decided (learned); decisions come in any order, each exactly once. */
  | { readonly type: 'decide'; readonly instance: number; readonly value: Batch }
  /** Every replica delivered everything below `below`, and those instances are gone: skip them. */
  | { readonly type: 'skip'; readonly below: number }
  /** Reqs this replica needs before it can propose or accept their ids: fetch them (gossip). */
  | { readonly type: 'want'; readonly ids: readonly OpId[] }
  /**
   * This replica started without durable votes (`noDurableVotes`) and peer `from` truncated
   * instances it never delivered: it lost state that no replica's log has any more. Reported once,
   * then inert: the host rebuilds the replica from a peer's checkpoint (host/state-transfer.ts).
   */
  | { readonly type: 'lostState'; readonly from: number; readonly reason: string }
  /**
   * A membership change was decided (applied or not: `outcome`), in instance order. Its record
   * comes before it among the outputs; the host updates whom gossip talks to.
   */
  | { readonly type: 'config'; readonly outcome: ReconfigOutcome }
  /**
   * The read asked for with `requestRead(key)` may be answered from the committed state once
   * every instance below `index` is delivered here (read-index.ts).
   */
  | { readonly type: 'readIndex'; readonly key: number; readonly index: number };

/** What a restarted replica recovers from its disk. */
export interface PaxosRecovery {
  readonly records: readonly AcceptorRecord[];
}

type Role = 'follower' | 'candidate' | 'leader';
type PromiseMsg = Extract<PaxosMessage, { type: 'promise' }>;

const CATCHUP_LIMIT = 512;
/** Decided membership changes whose outcome a replica remembers (`reconfigOutcome`). */
const OUTCOMES_KEPT = 64;
/**
 * Most op ids one `decisions` answer carries (about 50 bytes each as JSON): 512 instances of
 * full batches made frames of megabytes, over the protocol's 1 MiB frame limit, which the learner
 * dropped unread and asked again. The learner asks again from where the answer ended.
 */
const CATCHUP_IDS = 8192;
/** Most op ids one `want` asks gossip for. */
const MAX_WANTED = 1024;

/**
 * Multi-Paxos on operation ids, the consensus under conditional atomic broadcast (Creek §3.3, §5):
 * indirect consensus agrees on ids only, the Reqs travel by gossip.
 *
 * - Every replica is an acceptor and a learner; one is the distinguished leader (proposer).
 * - Leader election is Ω by heartbeats: with no live leader, the lowest-numbered replica that is
 *   heard from and hears a majority itself becomes candidate; a replica that hears a live leader
 *   defers to it, so one-way link failures do not make two replicas duel. A replica that hears no
 *   majority never campaigns, and a leader that hears no majority stands down (the "check quorum" of
 *   Raft implementations): so a replica that can send but not receive neither deposes a working
 *   leader again and again nor, as the leader, holds the others back with its heartbeats.
 *   Heartbeats say whether their sender hears a majority (`quorate`).
 * - Phase 1 runs once per ballot and covers every instance from the candidate's first undecided one;
 *   the new leader re-proposes the highest-ballot value it learns for each open instance and fills
 *   gaps with empty batches.
 * - Phase 2 runs per instance; ids that arrive while `maxInFlight` instances are open wait and go
 *   out together in the next instance (batching), and up to `maxInFlight` instances are open at once
 *   (pipelining). Acceptors send their 2b to every replica, so a learner decides after 3 message
 *   delays from the origin: forward, 2a, 2b. The leader's own accept and vote, and each acceptor's
 *   own vote, take no message (see `send`): with 3 replicas, an origin that is a follower decides
 *   on the frame that brings the leader's 2a and 2b, 2 message delays after its forward.
 * - An acceptor's promise or accept is a `persist` output placed before the messages that depend on
 *   it; the driver must make it durable before acting on anything after it.
 * - Learners that fall behind catch up from the leader; instances every replica has delivered are
 *   truncated.
 * - Each origin's ids are delivered in the origin's order (`prevStrong` chains); the delivery stream
 *   (conditional-delivery.ts) enforces it, since a leader change can decide them out of order.
 */
export class MultiPaxos {
  readonly self: number;
  /** The configuration of every instance from the one before the truncation point on. */
  private history: ConfigHistory;
  private readonly genesisMajority: number;
  private readonly unsafeGenesisQuorum: boolean;
  private readonly unsafeReadWithoutQuorum: boolean;
  /** Reads this replica asked a read index for and has no answer yet: nonce → the caller's key. */
  private readonly readsAsked = new Map<string, number>();
  private readCounter = 0;
  /** Leader: the read rounds (read-index.ts). */
  private readonly readRounds = new ReadIndexRounds();
  private readonly heartbeatMs: number;
  private readonly electionTimeoutMs: number;
  private readonly retransmitMs: number;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly isOrdered: (id: OpId) => boolean;
  private readonly missing: (id: OpId) => readonly OpId[];
  private readonly awaited: (id: OpId) => Awaited | null;
  private readonly receivedUpTo: (origin: number) => number;
  /** Waiting casts and 2a by what each awaits: an arrival rechecks only what waited on it. */
  private readonly waits = new ReqWaits();
  /** When waiting casts and 2a were last all rechecked (the index's backstop). */
  private lastFullRecheckAt = Number.NEGATIVE_INFINITY;
  /**
   * Casts and 2a that only the backstop found ready: a Req became held without `reqsArrived`
   * naming it. Zero unless an arrival path is missing; the simulator fails a run that has any.
   */
  private backstopHits = 0;
  /** How many times a cast was checked for what it lacks (`awaited`): see PaxosStatus. */
  private lackChecks = 0;
  private inBackstop = false;
  /** Leader: casts it lacks Reqs for (`missing`), by op key; proposed once they arrive. */
  private readonly castsWaiting = new Map<
    string,
    { readonly cast: CastId; readonly since: number }
  >();
  /** Acceptor: per instance, the latest 2a it lacks Reqs for; accepted once they arrive. */
  private readonly acceptsWaiting = new Map<
    number,
    {
      readonly from: number;
      readonly ballot: number;
      readonly value: Batch;
      readonly since: number;
      /**
       * Casts of `value` before this index lacked nothing when last checked, and never will (a
       * replica does not lose Reqs): a recheck resumes here, so a batch of k casts costs O(k)
       * checks in all, not one scan from its start per arrival.
       */
      checked: number;
    }
  >();
  /**
   * When this replica last asked gossip for what its waiting casts and 2a lack. Usually the Reqs
   * are on their way (a push that nothing waits for may linger, and travels apart from the 2a), so
   * it asks only for what has waited a retransmit period, and at most once per period.
   */
  private lastWantAt = Number.NEGATIVE_INFINITY;

  // Acceptor (durable).
  private promised = 0;
  private readonly accepted = new Map<number, { ballot: number; value: Batch }>();
  private truncatedBelow = 0;

  // Learner.
  private readonly decided = new Map<number, Batch>();
  private decidedBelow = 0;
  private readonly votes = new Map<number, Map<number, Set<number>>>();
  /** What each peer's last heartbeat said (PeerHeartbeat): catch-up, truncation, Ω and no-op fill. */
  private readonly peerHeartbeats = new Map<number, PeerHeartbeat>();
  private lastCatchupAt = Number.NEGATIVE_INFINITY;
  private localDeliveredBelow = 0;

  // Leader.
  private role: Role = 'follower';
  private ballot = 0;
  private maxSeenBallot = 0;
  private readonly promises = new Map<number, PromiseMsg>();
  private prepareFrom = 0;
  private electionAt = Number.NEGATIVE_INFINITY;
  private nextInstance = 0;
  private readonly inFlight = new Map<
    number,
    { readonly value: Batch; readonly proposedAt: number; sentAt: number }
  >();
  private readonly queue: CastId[] = [];
  /** Ids this leader queued or proposed and has not seen decided. */
  private readonly proposed = new Set<string>();
  /**
   * Per instance from `nextInstance` on, the highest-ballot value the promises of this ballot
   * reported (phase 1): proposed again there. Up to `recoveredTop`, an instance nobody reported a
   * value for gets an empty batch.
   */
  private readonly recovered = new Map<number, { ballot: number; value: Batch }>();
  private recoveredTop = -1;
  /** When this leader last asked members it has no promise from for one (a new configuration's). */
  private lastReprepareAt = Number.NEGATIVE_INFINITY;
  /** Membership changes waiting for their turn at this leader (one at a time). */
  private reconfigQueue: ReconfigRequest[] = [];
  /** Nonces of the membership changes this leader proposed and has not seen decided. */
  private readonly proposedReconfigs = new Set<string>();

  // Ω.
  private readonly lastHeard = new Map<number, number>();
  /** When this leader first found it heard no majority (null: it does). */
  private quorumLostAt: number | null = null;
  private leaderHint: { id: number; ballot: number; at: number } | null = null;
  private lastHeartbeatAt = Number.NEGATIVE_INFINITY;

  // Origin.
  private readonly pending = new Map<string, CastId>();
  /** Membership changes asked for here and not decided yet, by nonce: forwarded like casts. */
  private readonly pendingReconfigs = new Map<string, ReconfigRequest>();
  /** What became of the last decided membership changes, by nonce (the last OUTCOMES_KEPT). */
  private readonly outcomes = new Map<string, ReconfigOutcome>();
  private forwardedTo = -1;
  private lastForwardAt = Number.NEGATIVE_INFINITY;

  private now = 0;
  private startedAt: number | null = null;
  /**
   * While it may not yet promise or vote (`noDurableVotes`): per peer, the first heartbeat heard
   * from it, which tells what it had promised and the instances it knew of. Null once this replica
   * takes part (or when it never had to rejoin).
   */
  private heardWhileRejoining: Map<number, { promised: number; knownBelow: number }> | null = null;

  /** It still learns before it may promise, vote or campaign (PaxosOptions.noDurableVotes). */
  get rejoining(): boolean {
    return this.heardWhileRejoining !== null;
  }
  private readonly noDurableVotes: boolean;
  /** It rejoined (or never had to): its promise record stays on disk, whatever its ballot. */
  private rejoined = false;
  /** `lostState` was reported: this replica does nothing more. */
  private lost = false;
  private out: PaxosOutput[] = [];
  /** Counters for benchmarks and status pages. */
  readonly counters = {
    elections: 0,
    instancesProposed: 0,
    idsProposed: 0,
    decided: 0,
    truncated: 0,
  };

  constructor(options: PaxosOptions, recovery?: PaxosRecovery) {
    this.self = options.self;
    const first = genesis(options.members ?? options.replicas.map((id) => ({ id, address: '' })));
    this.history = new ConfigHistory([first]);
    this.genesisMajority = majorityOf(first.members);
    this.unsafeGenesisQuorum = options.unsafeGenesisQuorum === true;
    this.unsafeReadWithoutQuorum = options.unsafeReadWithoutQuorum === true;
    this.heartbeatMs = options.heartbeatMs ?? 10;
    this.electionTimeoutMs = options.electionTimeoutMs ?? 60;
    this.retransmitMs = options.retransmitMs ?? 30;
    this.maxBatch = options.maxBatch ?? 1024;
    this.maxInFlight = options.maxInFlight ?? 8;
    this.isOrdered = options.isOrdered ?? (() => false);
    this.missing = options.missing ?? (() => []);
    const missing = this.missing;
    const firstLack =
      options.awaited ??
      ((id: OpId) => {
        const lacking = missing(id)[0];
        return lacking === undefined ? null : { id: lacking, prefix: false };
      });
    this.receivedUpTo = options.receivedUpTo ?? (() => 0);
    // Counted: the work of waiting for Reqs, which must not grow with how far behind this is.
    this.awaited = (id) => {
      this.lackChecks++;
      return firstLack(id);
    };
    this.noDurableVotes = options.noDurableVotes === true;
    if (this.noDurableVotes) this.heardWhileRejoining = new Map();
    else this.rejoined = true;
    if (recovery !== undefined) this.recover(recovery);
    // A replica outside every configuration it knows (a new one, before it took a checkpoint)
    // only learns: it is nobody's acceptor yet.
  }

  private recover(recovery: PaxosRecovery): void {
    const configs: ConfigEntry[] = [];
    for (const r of recovery.records) {
      if (r.kind === 'config') configs.push(r.entry);
      else if (r.kind === 'promise') this.promised = Math.max(this.promised, r.ballot);
      else if (r.kind === 'accept') {
        this.promised = Math.max(this.promised, r.ballot);
        const prev = this.accepted.get(r.instance);
        if (prev === undefined || prev.ballot <= r.ballot)
          this.accepted.set(r.instance, { ballot: r.ballot, value: r.value });
      } else {
        this.truncatedBelow = Math.max(this.truncatedBelow, r.below);
      }
    }
    for (const i of [...this.accepted.keys()]) if (i < this.truncatedBelow) this.accepted.delete(i);
    // Each configuration record is one entry; a checkpoint's replace the older ones (same `from`).
    if (configs.length > 0) {
      const byFrom = new Map<number, ConfigEntry>();
      for (const e of configs) byFrom.set(e.from, e);
      this.history = new ConfigHistory([...byFrom.values()]);
    }
    this.maxSeenBallot = this.promised;
    this.decidedBelow = this.truncatedBelow;
    this.localDeliveredBelow = this.truncatedBelow;
  }

  // ---------------------------------------------------------------- inputs

  /** CAB-cast of a local strong op id (`prevStrong`: the origin's previous strong op, 0 if none). */
  cast(c: CastId): PaxosOutput[] {
    this.pending.set(opKey(c.id), c);
    const leader = this.currentLeader();
    if (leader === this.self) this.enqueue([c]);
    else if (leader !== null) this.send(leader, { type: 'forward', casts: [c] });
    return this.flush();
  }

  /**
   * A membership change an operator asked this replica for (cab/configuration.ts): it goes to the
   * leader, again after each retransmit period and leader change, until it is decided
   * (`reconfigOutcome`). Asking again with a nonce already decided does nothing.
   */
  reconfigure(request: ReconfigRequest): PaxosOutput[] {
    if (!this.outcomes.has(request.nonce) && !this.pendingReconfigs.has(request.nonce)) {
      this.pendingReconfigs.set(request.nonce, request);
      const leader = this.currentLeader();
      if (leader === this.self) this.enqueueReconfig(request);
      else if (leader !== null) this.send(leader, { type: 'reconfigure', request });
    }
    return this.flush();
  }

  /**
   * A strong read-only op to answer without a log write (read-index.ts): the leader is asked for a
   * read index, again after each retransmit period and leader change, until it answers; then a
   * `readIndex` output with `key` says from which delivered instance on the committed state
   * answers it.
   */
  requestRead(key: number): PaxosOutput[] {
    const nonce = `${Math.floor(this.now)}.${++this.readCounter}`;
    this.readsAsked.set(nonce, key);
    const leader = this.currentLeader();
    if (leader === this.self) this.leaderRead({ from: this.self, nonce });
    else if (leader !== null) this.send(leader, this.readIndexRequest([nonce]));
    return this.flush();
  }

  /** What became of a membership change decided here; undefined while it is not (or long after). */
  reconfigOutcome(nonce: string): ReconfigOutcome | undefined {
    return this.outcomes.get(nonce);
  }

  /**
   * The configurations this replica knows: the one in force at its first undecided instance
   * (`current`), the newest (`latest`: in force from its `from` on, maybe not yet), and every
   * entry in between.
   */
  membership(): {
    readonly current: ConfigEntry;
    readonly latest: ConfigEntry;
    readonly entries: readonly ConfigEntry[];
    readonly decidedBelow: number;
    /** The address of a replica in the newest configuration that has it. */
    addressOf(id: number): string | undefined;
  } {
    const history = this.history;
    return {
      current: this.current(),
      latest: history.latest(),
      entries: history.all(),
      decidedBelow: this.decidedBelow,
      addressOf: (id) => history.address(id),
    };
  }

  /**
   * Whom this replica talks to, itself included: every member of a configuration from its first
   * undecided instance on. The same array until that set changes.
   */
  peerIds(): readonly number[] {
    return this.peers();
  }

  /**
   * This replica was removed, and the cluster needs nothing more from it: a majority of the
   * configuration that retired its id have it in force (they told it so: PaxosMessage `retired`).
   * Until then it goes on as an acceptor, since members that have not reached that configuration
   * may still need its vote for instances before it. It takes part in nothing any more (the host
   * stops it).
   */
  get removed(): boolean {
    const entry = this.retiredBy;
    if (entry === null) return false;
    let told = 0;
    for (const m of entry.members) if (this.toldByMembers.has(m.id)) told++;
    return told >= majorityOf(entry.members);
  }

  /**
   * A membership change this replica knows of removed it (decided here, or a peer said so), in
   * force or not: what its peers compact from then on is no loss of its own.
   */
  get retiring(): boolean {
    return this.retiredBy !== null || this.history.removalOf(this.self) !== undefined;
  }

  /**
   * Its removal is in force at its decided prefix: it is no member of the instances it would order
   * next, and stays only as an acceptor of the earlier ones, until told it is no longer needed.
   */
  get leaving(): boolean {
    const current = this.current();
    return current.retired.includes(this.self) && !current.members.some((m) => m.id === this.self);
  }

  /** The configuration that retired this replica, as a peer that has it in force told it. */
  private retiredBy: ConfigEntry | null = null;
  /** The members of `retiredBy` that told this replica it is retired. */
  private readonly toldByMembers = new Set<number>();
  /** Per removed replica that still speaks, when it was last told so. */
  private readonly toldRetired = new Map<number, number>();

  /**
   * Reqs arrived (`arrived`: their ids): waiting casts and 2a that lacked them are checked again,
   * and proposed or accepted once nothing is lacking. Without `arrived`, everything waiting is
   * checked (what a driver that cannot name the arrivals calls).
   */
  reqsArrived(arrived?: readonly OpId[]): PaxosOutput[] {
    if (arrived === undefined) this.recheckAll();
    else {
      const casts = new Set<string>();
      for (const w of this.waits.arrived(arrived, this.receivedUpTo)) {
        if ('instance' in w) this.recheckAccept(w.instance);
        else casts.add(w.cast);
      }
      this.recheckCasts(casts);
    }
    if (this.acceptsWaiting.size === 0 && this.castsWaiting.size === 0) this.waits.clear();
    return this.flush();
  }

  /** Every waiting cast and 2a, checked again (and filed again under what each lacks now). */
  private recheckAll(): void {
    this.lastFullRecheckAt = this.now;
    this.waits.clear();
    for (const instance of [...this.acceptsWaiting.keys()]) this.recheckAccept(instance);
    this.recheckCasts(new Set(this.castsWaiting.keys()));
  }

  private recheckAccept(instance: number): void {
    const a = this.acceptsWaiting.get(instance);
    if (a === undefined) return;
    if (this.isDecided(instance)) {
      this.acceptsWaiting.delete(instance);
      return;
    }
    const { lacking, at } = this.firstLacking(a.value, a.checked);
    a.checked = at;
    if (lacking !== null) this.waits.file(lacking, { instance });
    else {
      if (this.inBackstop) this.backstopHits++;
      this.acceptsWaiting.delete(instance);
      this.onAccept(a.from, a.ballot, instance, a.value);
    }
  }

  private recheckCasts(keys: Iterable<string>): void {
    if (this.role !== 'leader') return; // casts wait only at a leader (cleared on stepping down)
    const ready: CastId[] = [];
    for (const key of keys) {
      const w = this.castsWaiting.get(key);
      if (w === undefined) continue;
      const lacking = this.awaited(w.cast.id);
      if (lacking !== null) this.waits.file(lacking, { cast: key });
      else {
        if (this.inBackstop) this.backstopHits++;
        this.castsWaiting.delete(key);
        ready.push(w.cast);
      }
    }
    if (ready.length > 0) this.enqueue(ready);
  }

  /**
   * The first Req any cast of `value` from index `from` on lacks, or null; `at`: the index of the
   * cast that lacks it (the length when none does).
   */
  private firstLacking(value: Batch, from = 0): { lacking: Awaited | null; at: number } {
    for (let i = from; i < value.length; i++) {
      const e = value[i]!;
      if (!isCast(e)) continue; // a membership change needs no Req
      const lacking = this.awaited(e.id);
      if (lacking !== null) return { lacking, at: i };
    }
    return { lacking: null, at: value.length };
  }

  /** The replica delivered `id`: if it was one of its own casts, it is done. */
  delivered(id: OpId): void {
    this.pending.delete(opKey(id));
  }

  /**
   * Everything below `instance` is delivered here, and the commit records saying so are durable
   * (the driver reports it no earlier). Heartbeats carry it; truncation waits for every replica's.
   */
  setDeliveredBelow(instance: number): void {
    this.localDeliveredBelow = Math.max(this.localDeliveredBelow, instance);
  }

  receive(from: number, msg: PaxosMessage): PaxosOutput[] {
    if (this.lost) return [];
    // A replica the configuration in force here removed is told so, and nothing else: what this
    // replica truncated since, without waiting for it, would look like state it lost.
    if (this.tellIfRetired(from)) return this.flush();
    this.lastHeard.set(from, this.now);
    switch (msg.type) {
      case 'retired':
        // Peers are authenticated, and a removed id never comes back (cab/configuration.ts).
        if (msg.entry.retired.includes(this.self)) {
          if (this.retiredBy === null || msg.entry.from > this.retiredBy.from) {
            this.retiredBy = msg.entry;
            this.toldByMembers.clear();
          }
          // Told it is no longer needed; or, with `truncatedBelow` (`tellPassed`), only that it is
          // removed and cannot learn what it asked for: it goes on as an acceptor until told.
          if (msg.entry.from === this.retiredBy.from && msg.truncatedBelow === undefined)
            this.toldByMembers.add(from);
        }
        break;
      case 'forward':
        if (this.role === 'leader') this.enqueue(msg.casts);
        break;
      case 'reconfigure':
        if (this.role === 'leader') this.enqueueReconfig(msg.request);
        break;
      case 'readIndex':
        if (!this.answerWithSendersAck(from, msg.nonces, msg.promised))
          for (const nonce of msg.nonces) this.leaderRead({ from, nonce });
        break;
      case 'readProbe':
        // No promise, no vote: only "I promised no higher ballot". A rejoining replica cannot say.
        if (!this.rejoining && msg.ballot >= this.promised)
          this.send(from, { type: 'readAck', ballot: msg.ballot, seq: msg.seq });
        break;
      case 'readAck':
        if (this.role === 'leader' && msg.ballot === this.ballot) {
          const round = this.readRounds.ack(from, msg.seq);
          if (round !== null) this.maybeFinishRead(round);
        }
        break;
      case 'readIndexed':
        for (const nonce of msg.nonces) this.readAnswered(nonce, msg.index);
        break;
      case 'prepare':
        this.onPrepare(from, msg.ballot, msg.from);
        break;
      case 'promise':
        this.onPromise(from, msg);
        break;
      case 'nack':
        this.seeBallot(msg.promised);
        if (msg.ballot === this.ballot && this.role !== 'follower' && msg.promised > this.ballot)
          this.stepDown();
        break;
      case 'accept':
        this.onAccept(from, msg.ballot, msg.instance, msg.value);
        break;
      case 'accepted':
        this.onAccepted(from, msg.ballot, msg.instance);
        break;
      case 'heartbeat':
        this.onHeartbeat(from, msg);
        break;
      case 'catchup':
        this.onCatchup(from, msg.from);
        break;
      case 'decisions':
        this.skipTo(msg.truncatedBelow, from);
        for (const e of msg.entries) this.decide(e.instance, e.value);
        break;
    }
    return this.flush();
  }

  tick(nowMs: number): PaxosOutput[] {
    if (this.lost) return [];
    this.now = Math.max(this.now, nowMs);
    const now = this.now;
    // A replica that just started listens for one election timeout before it may run: otherwise
    // every replica of a starting cluster believes it is the lowest one alive.
    if (this.startedAt === null) {
      this.startedAt = now;
      this.electionAt = now;
    }
    if (now - this.lastHeartbeatAt >= this.heartbeatMs) {
      this.lastHeartbeatAt = now;
      const hb: PaxosMessage = {
        type: 'heartbeat',
        ballot: this.role === 'leader' ? this.ballot : 0,
        leading: this.role === 'leader',
        // A replica still rejoining may not lead, nor one that knows it was removed: Ω must pass
        // it over.
        quorate: this.hearsMajority() && !this.rejoining && this.retiredBy === null,
        decidedBelow: this.decidedBelow,
        // While rejoining, only what survives a crash here as Paxos state (its truncation): what it
        // delivered meanwhile is on its disk as commits, which a restart cannot map to instances,
        // so peers must not truncate it yet, or a crash before the rejoin ends would look like lost
        // state (`lostState`) at the next start.
        deliveredBelow: this.rejoining ? this.truncatedBelow : this.localDeliveredBelow,
        promised: this.promised,
        knownBelow: this.knownBelow(),
      };
      for (const r of this.peers()) if (r !== this.self) this.send(r, hb);
      this.truncate();
    }
    // A leader outside the configuration in force at its decided prefix (it was removed) leads no
    // more; the members elect one of their own.
    if (this.role !== 'follower' && !this.history.isMember(this.decidedBelow, this.self))
      this.stepDown();
    // Check quorum: a leader that no longer hears a majority cannot order anything; standing down
    // stops its heartbeats from holding the others back (Ω below defers to a live leader). Only
    // once it has failed for a heartbeat period: a process that was stalled itself (GC, a busy
    // core) ticks before it reads the heartbeats waiting in its sockets, and must not stand down
    // for that.
    if (this.role === 'leader' && !this.hearsMajority()) {
      this.quorumLostAt ??= now;
      if (now - this.quorumLostAt >= this.heartbeatMs) this.stepDown();
    } else this.quorumLostAt = null;
    this.finishRejoining();
    this.elect();
    if (this.role === 'leader' && this.reproposalStalled()) this.startElection();
    if (this.role === 'leader') {
      const round = this.readRounds.current;
      if (round !== null) {
        if (now - round.sentAt >= this.retransmitMs) this.sendReadProbes(round);
        this.maybeFinishRead(round);
      }
      for (const [instance, f] of this.inFlight) {
        if (now - f.sentAt >= this.retransmitMs) {
          f.sentAt = now;
          this.broadcast({ type: 'accept', ballot: this.ballot, instance, value: f.value });
        }
      }
      this.tryPropose();
    }
    this.forwardPending();
    this.maybeCatchup();
    this.wantMissing();
    // The index's backstop: should a Req ever become held without `reqsArrived` naming it, what
    // waited on it is picked up here, a few election timeouts late rather than never.
    if (
      (this.acceptsWaiting.size > 0 || this.castsWaiting.size > 0) &&
      now - this.lastFullRecheckAt >= 4 * this.electionTimeoutMs
    ) {
      this.inBackstop = true;
      this.recheckAll();
      this.inBackstop = false;
    }
    return this.flush();
  }

  // ---------------------------------------------------------------- acceptor

  private onPrepare(from: number, ballot: number, fromInstance: number): void {
    this.seeBallot(ballot);
    if (this.rejoining) return; // no promise it could not keep (`noDurableVotes`)
    if (this.tellPassed(from, fromInstance)) return;
    if (ballot < this.promised) {
      this.send(from, { type: 'nack', ballot, promised: this.promised });
      return;
    }
    if (ballot > this.promised) {
      this.promised = ballot;
      this.out.push({ type: 'persist', record: { kind: 'promise', ballot } });
    }
    if (ballot > this.ballot && this.role !== 'follower') this.stepDown();
    const accepted: AcceptedEntry[] = [];
    for (const [instance, a] of this.accepted) {
      if (instance >= fromInstance && !this.decided.has(instance))
        accepted.push({ instance, ballot: a.ballot, value: a.value });
    }
    const decided: { instance: number; value: Batch }[] = [];
    for (const [instance, value] of this.decided)
      if (instance >= fromInstance) decided.push({ instance, value });
    this.send(from, {
      type: 'promise',
      ballot,
      accepted,
      decided,
      truncatedBelow: this.truncatedBelow,
    });
  }

  private onAccept(from: number, ballot: number, instance: number, value: Batch): void {
    this.seeBallot(ballot);
    if (this.rejoining) return; // no vote it could not keep (`noDurableVotes`)
    if (ballot < this.promised) {
      this.send(from, { type: 'nack', ballot, promised: this.promised });
      return;
    }
    const { lacking, at } = this.isDecided(instance)
      ? { lacking: null, at: 0 }
      : this.firstLacking(value);
    if (lacking !== null) {
      // Not a vote yet (and no promise): the 2a waits here for the Reqs (`reqsArrived`).
      const waiting = this.acceptsWaiting.get(instance);
      if (waiting === undefined || waiting.ballot <= ballot) {
        this.acceptsWaiting.set(instance, {
          from,
          ballot,
          value,
          since: waiting?.since ?? this.now,
          checked: at,
        });
        this.waits.file(lacking, { instance });
      }
      return;
    }
    this.promised = ballot;
    if (ballot > this.ballot && this.role !== 'follower') this.stepDown();
    if (instance < this.truncatedBelow) return;
    const prev = this.accepted.get(instance);
    if (prev === undefined || prev.ballot !== ballot) {
      this.accepted.set(instance, { ballot, value });
      this.out.push({ type: 'persist', record: { kind: 'accept', instance, ballot, value } });
    }
    this.broadcast({ type: 'accepted', ballot, instance });
  }

  // ---------------------------------------------------------------- learner

  private onAccepted(from: number, ballot: number, instance: number): void {
    if (this.isDecided(instance)) return;
    let byBallot = this.votes.get(instance);
    if (byBallot === undefined) {
      byBallot = new Map();
      this.votes.set(instance, byBallot);
    }
    let voters = byBallot.get(ballot);
    if (voters === undefined) {
      voters = new Set();
      byBallot.set(ballot, voters);
    }
    voters.add(from);
    // Counted against the instance's own configuration, once this replica knows it (it decided
    // everything CONFIG_DELAY before): until then the votes wait here (`recheckVotes`).
    if (!this.configKnown(instance) || !this.isQuorum(instance, voters)) return;
    this.chosen(instance, ballot);
  }

  /** A quorum of `instance`'s configuration accepted `ballot`: learn its value. */
  private chosen(instance: number, ballot: number): void {
    // Chosen at `ballot`. Any value this acceptor accepted at a ballot ≥ it is the chosen one
    // (Paxos: every proposal above a chosen ballot carries the chosen value).
    const mine = this.accepted.get(instance);
    if (mine !== undefined && mine.ballot >= ballot) this.decide(instance, mine.value);
    // Otherwise the 2a never reached us: maybeCatchup asks the leader for the value.
  }

  private decide(instance: number, value: Batch): void {
    if (this.isDecided(instance)) return;
    this.decided.set(instance, value);
    this.votes.delete(instance);
    this.inFlight.delete(instance);
    this.recovered.delete(instance);
    this.counters.decided++;
    for (const c of value)
      if (isCast(c)) this.proposed.delete(opKey(c.id));
      else this.proposedReconfigs.delete(c.reconfig.nonce);
    const before = this.decidedBelow;
    while (this.decided.has(this.decidedBelow)) {
      this.applyConfigOf(this.decidedBelow);
      this.decidedBelow++;
    }
    this.out.push({ type: 'decide', instance, value });
    // The configurations of CONFIG_DELAY more instances are known now: votes that waited count.
    if (this.decidedBelow > before)
      this.recheckVotes(before + CONFIG_DELAY, this.decidedBelow + CONFIG_DELAY);
    if (this.role === 'leader') this.tryPropose();
  }

  /**
   * Instance `instance`, decided, is next in instance order: its membership change, if it holds
   * one, takes effect CONFIG_DELAY instances on (durably: the record outlives the instance's
   * truncation), or changes nothing and says why.
   */
  private applyConfigOf(instance: number): void {
    for (const e of this.decided.get(instance) ?? []) {
      if (isCast(e)) continue;
      // A request decided twice (two leaders proposed it) changes nothing the second time (the
      // member is there already, or gone), and its first outcome is the one that counts.
      let outcome = this.history.apply(instance, e.reconfig);
      if (outcome.applied)
        this.out.push({ type: 'persist', record: { kind: 'config', entry: outcome.entry } });
      else {
        // Decided before, and applied: this replica restarted since and knows it only from the
        // configuration the first decision made (its nonce), which is the outcome to report
        // (the simulator: seed 51467 with 3 replicas, where the operator was told an addition in
        // force everywhere was not applied, "a member already", and never started the replica).
        const earlier = this.history.madeBy(e.reconfig.nonce);
        if (earlier !== undefined)
          outcome = { applied: true, entry: earlier, decidedAt: earlier.from - CONFIG_DELAY };
      }
      this.pendingReconfigs.delete(e.reconfig.nonce);
      if (this.outcomes.has(e.reconfig.nonce)) continue;
      this.outcomes.set(e.reconfig.nonce, outcome);
      if (this.outcomes.size > OUTCOMES_KEPT)
        this.outcomes.delete(this.outcomes.keys().next().value!);
      this.out.push({ type: 'config', outcome });
    }
  }

  /** Votes for instances in [from, to) that waited to learn their configuration, counted now. */
  private recheckVotes(from: number, to: number): void {
    for (const [instance, byBallot] of [...this.votes]) {
      if (instance < from || instance >= to || this.isDecided(instance)) continue;
      for (const [ballot, voters] of byBallot)
        if (this.isQuorum(instance, voters)) {
          this.chosen(instance, ballot);
          break;
        }
    }
  }

  /**
   * Instances below `below` were delivered by every replica, this one included (it reported so,
   * durably, before anyone truncated), and are truncated elsewhere: jump past them.
   */
  private skipTo(below: number, from: number): void {
    if (below <= this.decidedBelow) return;
    // A removed replica cannot learn what its peers truncated, and need not: it stays an acceptor
    // for the instances before its removal, which others may still have to decide again, until
    // the members tell it it is no longer needed (`removed`). A jump past what it delivered is not
    // state it lost (the simulator: seeds 1194, 1383 and 2123 with 3 replicas, once peers told
    // removed replicas only from their truncation point).
    if (below > this.localDeliveredBelow) {
      const r = this.retiredBy ?? this.history.removalOf(this.self);
      if (r !== undefined) {
        this.retiredBy ??= r;
        return;
      }
    }
    if (this.noDurableVotes && below > this.localDeliveredBelow) {
      // Truncated everywhere means delivered everywhere, by this replica too once: it lost it.
      this.lost = true;
      this.out.push({
        type: 'lostState',
        from,
        reason:
          `a peer truncated its Paxos log below instance ${below}, which every replica had ` +
          `delivered, while this replica delivered only the instances below ` +
          `${this.localDeliveredBelow}: it lost its state, and the cluster no longer has it`,
      });
      return;
    }
    for (const i of [...this.decided.keys()]) if (i < below) this.decided.delete(i);
    for (const i of [...this.votes.keys()]) if (i < below) this.votes.delete(i);
    for (const i of [...this.inFlight.keys()]) if (i < below) this.inFlight.delete(i);
    this.decidedBelow = below;
    // Decided instances past the jump are passed in order, their membership changes applied.
    while (this.decided.has(this.decidedBelow)) {
      this.applyConfigOf(this.decidedBelow);
      this.decidedBelow++;
    }
    if (this.nextInstance < this.decidedBelow) this.nextInstance = this.decidedBelow;
    // Truncated here too: this replica never has to serve what it skipped.
    if (below > this.truncatedBelow) {
      for (const i of [...this.accepted.keys()]) if (i < below) this.accepted.delete(i);
      this.truncatedBelow = below;
      this.history.compact(below);
      this.out.push({ type: 'persist', record: { kind: 'truncate', below } });
    }
    this.out.push({ type: 'skip', below });
  }

  private onCatchup(from: number, fromInstance: number): void {
    if (this.tellPassed(from, fromInstance)) return;
    const entries: { instance: number; value: Batch }[] = [];
    let ids = 0;
    const full = (): boolean => entries.length >= CATCHUP_LIMIT || ids >= CATCHUP_IDS;
    for (
      let i = Math.max(fromInstance, this.truncatedBelow);
      i < this.decidedBelow && !full();
      i++
    ) {
      const value = this.decided.get(i)!;
      entries.push({ instance: i, value });
      ids += value.length;
    }
    // Decided instances past a gap help too (a learner may miss only some).
    for (const [instance, value] of this.decided) {
      if (full()) break;
      if (instance >= this.decidedBelow && instance >= fromInstance) {
        entries.push({ instance, value });
        ids += value.length;
      }
    }
    if (entries.length > 0 || this.truncatedBelow > fromInstance) {
      this.send(from, { type: 'decisions', entries, truncatedBelow: this.truncatedBelow });
    }
  }

  /** A learner behind the most advanced replica it hears from, or missing a chosen value, asks it. */
  private maybeCatchup(): void {
    if (this.now - this.lastCatchupAt < this.retransmitMs) return;
    let target: number | null = null;
    let best = this.decidedBelow;
    for (const [r, { decidedBelow }] of this.peerHeartbeats) {
      if (decidedBelow > best && this.heardRecently(r)) {
        best = decidedBelow;
        target = r;
      }
    }
    if (target === null) {
      let stuck = false;
      for (const [instance, byBallot] of this.votes) {
        if (!this.configKnown(instance)) continue;
        for (const voters of byBallot.values()) if (this.isQuorum(instance, voters)) stuck = true;
      }
      const leader = this.currentLeader();
      if (stuck && leader !== null && leader !== this.self) target = leader;
    }
    if (target === null) return;
    this.lastCatchupAt = this.now;
    this.send(target, { type: 'catchup', from: this.decidedBelow });
  }

  private onHeartbeat(from: number, msg: Extract<PaxosMessage, { type: 'heartbeat' }>): void {
    if (this.heardWhileRejoining !== null && !this.heardWhileRejoining.has(from))
      this.heardWhileRejoining.set(from, { promised: msg.promised, knownBelow: msg.knownBelow });
    this.peerHeartbeats.set(from, {
      quorate: msg.quorate ?? true,
      decidedBelow: msg.decidedBelow,
      deliveredBelow: msg.deliveredBelow,
      knownBelow: msg.knownBelow,
      promised: msg.promised,
    });
    // A replica outside the configuration (removed, and not aware of it yet) is nobody's leader.
    if (!msg.leading || !this.history.isMember(this.decidedBelow, from)) return;
    this.seeBallot(msg.ballot);
    if (msg.ballot > this.ballot && this.role !== 'follower') this.stepDown();
    if (
      this.leaderHint === null ||
      msg.ballot >= this.leaderHint.ballot ||
      this.now - this.leaderHint.at > this.electionTimeoutMs
    ) {
      this.leaderHint = { id: from, ballot: msg.ballot, at: this.now };
    }
    this.forwardPending();
    this.maybeCatchup();
  }

  /** Drops instances every replica has delivered: nobody will ask for them again. */
  private truncate(): void {
    // Members only, those of the configuration in force and those about to join (a new one may
    // already have taken a checkpoint, and must find what follows it): a removed replica holds
    // nothing back.
    let below = this.localDeliveredBelow;
    for (const id of this.peers()) {
      if (id === this.self) continue;
      below = Math.min(below, this.peerHeartbeats.get(id)?.deliveredBelow ?? 0);
    }
    below = Math.min(below, this.decidedBelow);
    if (below <= this.truncatedBelow) return;
    for (let i = this.truncatedBelow; i < below; i++) {
      this.accepted.delete(i);
      this.decided.delete(i);
      this.votes.delete(i);
    }
    this.counters.truncated += below - this.truncatedBelow;
    this.truncatedBelow = below;
    this.history.compact(below);
    this.out.push({ type: 'persist', record: { kind: 'truncate', below } });
  }

  // ---------------------------------------------------------------- leader

  private elect(): void {
    const now = this.now;
    const leaderAlive =
      this.leaderHint !== null &&
      this.leaderHint.id !== this.self &&
      now - this.leaderHint.at <= this.electionTimeoutMs;
    if (this.role === 'leader' || this.rejoining) return;
    // Told it was removed: it may not know the instances since (its peers truncated them), and
    // leads none (the simulator: seed 220 with 3 replicas, faults reconfig, where the removed
    // replica, lowest of those alive, ran for leader forever and its peers waited for it).
    if (this.retiredBy !== null) {
      if (this.role === 'candidate') this.stepDown();
      return;
    }
    if (this.role === 'candidate') {
      // A candidate that stopped hearing a majority gives up rather than retry with ever higher
      // ballots that only the others hear (see below).
      if ((leaderAlive && this.leaderHint!.ballot > this.ballot) || !this.hearsMajority())
        this.stepDown();
      else if (now - this.electionAt >= this.retransmitMs * 2) this.askAgain();
      return;
    }
    if (leaderAlive || now - this.electionAt < this.electionTimeoutMs) return;
    // A replica that hears no majority cannot win an election (it would never hear the promises),
    // and its prepares would only depose a leader that works: with one-way links, a replica the
    // others hear but that hears nobody ran an election every few retransmit periods and made the
    // leader step down each time.
    if (!this.hearsMajority()) return;
    // Ω: the lowest-numbered member we hear from that hears a majority itself leads.
    const lowestAlive = this.current().members.find(
      (m) =>
        m.id === this.self ||
        (this.heardRecently(m.id) && this.peerHeartbeats.get(m.id)?.quorate !== false),
    );
    if (lowestAlive?.id === this.self) this.startElection();
  }

  /** Replica `r` was heard from within the election timeout. */
  private heardRecently(r: number): boolean {
    return this.now - (this.lastHeard.get(r) ?? Number.NEGATIVE_INFINITY) <= this.electionTimeoutMs;
  }

  /**
   * This replica heard from a majority of the configuration in force (itself included, if a
   * member) within the election timeout.
   */
  private hearsMajority(): boolean {
    const members = this.current().members;
    let n = 0;
    for (const m of members) if (m.id === this.self || this.heardRecently(m.id)) n++;
    return n >= (this.unsafeGenesisQuorum ? this.genesisMajority : majorityOf(members));
  }

  // ---------------------------------------------------------------- reads (read-index.ts)

  /**
   * The read index now: the first instance this leader has not opened. Values chosen by earlier
   * ballots lie at or below `recoveredTop` (phase 1), those chosen by it below `nextInstance`.
   */
  private readPoint(): number {
    return Math.max(this.nextInstance, this.recoveredTop + 1, this.decidedBelow);
  }

  /** A request for read indexes, with this replica's ack of any ballot it did not promise past. */
  private readIndexRequest(nonces: string[]): PaxosMessage {
    // A rejoining replica may have lost promises it made: it vouches for nothing.
    return this.rejoining
      ? { type: 'readIndex', nonces }
      : { type: 'readIndex', nonces, promised: this.promised };
  }

  /**
   * The fast path: a request that carries its sender's ack of this leader's ballot (`promised`
   * no higher) answers its own reads at once when the sender and this leader are a majority (3
   * replicas): two message delays, no round. Safe by the argument of read-index.ts with the ack
   * sent when the request was, after the reads began: a higher ballot that chose a value before
   * they began had, by then, a promise from this leader (which would not lead) or from the sender
   * (which would not vouch). True when answered.
   */
  private answerWithSendersAck(
    from: number,
    nonces: readonly string[],
    promised: number | undefined,
  ): boolean {
    if (this.role !== 'leader' || this.unsafeReadWithoutQuorum) return false;
    if (promised === undefined || promised > this.ballot) return false;
    const index = this.readPoint();
    if (!this.confirmedBy(new Set([this.self, from]), index)) return false;
    this.answerReads(
      nonces.map((nonce) => ({ from, nonce })),
      index,
    );
    return true;
  }

  /** A read request reached this replica as leader: it joins the next round. */
  private leaderRead(request: ReadRequest): void {
    if (this.role !== 'leader') return; // its replica asks again (forwardPending)
    if (this.unsafeReadWithoutQuorum) {
      this.answerReads([request], this.readPoint());
      return;
    }
    this.readRounds.enqueue(request);
    this.startReadRound();
  }

  private startReadRound(): void {
    const round = this.readRounds.start(this.readPoint(), this.self, this.now);
    if (round === null) return;
    this.sendReadProbes(round);
    this.maybeFinishRead(round);
  }

  private sendReadProbes(round: ReadRound): void {
    round.sentAt = this.now;
    for (const r of this.peers())
      if (r !== this.self && !round.acks.has(r))
        this.send(r, { type: 'readProbe', ballot: this.ballot, seq: round.seq });
  }

  /**
   * The round's acks are a majority of every configuration from the decided prefix to its index
   * (one that is not known yet makes it wait): the index is answered.
   */
  private maybeFinishRead(round: ReadRound): void {
    if (!this.confirmedBy(round.acks, round.index)) return;
    const done = this.readRounds.finish();
    if (done === null) return;
    this.answerReads(done.requests, done.index);
    this.startReadRound();
  }

  /** `acks` are a majority of every configuration from the decided prefix to read index `index`. */
  private confirmedBy(acks: ReadonlySet<number>, index: number): boolean {
    const last = Math.max(index - 1, this.decidedBelow);
    for (const e of this.history.all()) {
      const at = Math.max(e.from, this.decidedBelow);
      if (at > last || this.history.at(at) !== e) continue;
      if (!this.configKnown(at) || !this.isQuorum(at, acks)) return false;
    }
    return true;
  }

  private answerReads(requests: readonly ReadRequest[], index: number): void {
    const byReplica = new Map<number, string[]>();
    for (const r of requests) {
      if (r.from === this.self) this.readAnswered(r.nonce, index);
      else byReplica.set(r.from, [...(byReplica.get(r.from) ?? []), r.nonce]);
    }
    for (const [to, nonces] of byReplica) this.send(to, { type: 'readIndexed', nonces, index });
  }

  private readAnswered(nonce: string, index: number): void {
    const key = this.readsAsked.get(nonce);
    if (key === undefined) return;
    this.readsAsked.delete(nonce);
    this.out.push({ type: 'readIndex', key, index });
  }

  // ---------------------------------------------------------------- configuration

  /**
   * `from` was removed from the cluster and still speaks: nobody else talks to it, so it would
   * never learn why. It is told the configuration that removed it, at most once an election
   * timeout.
   */
  private tellIfRetired(from: number): boolean {
    // Retired in the configuration in force here: a removal decided but not in force yet still
    // needs the replica's votes for the instances before it.
    const current = this.current();
    if (!current.retired.includes(from) || !current.members.some((m) => m.id === this.self))
      return false;
    // Told only from what survives a crash here as Paxos state: the configuration in force at the
    // truncation point. A replica that restarts learns its instances again from there, with the
    // quorums of their configurations, which may need the removed replica's vote (the simulator:
    // seed 2118, where survivors told from what they had decided; then seeds 5438, 19972 and
    // others with 3 replicas, where they told from what they had delivered, which a restart does
    // not map back to instances). Had it told, the removed replica would have stopped for good.
    if (this.rejoining || !this.history.at(this.truncatedBelow).retired.includes(from)) return true;
    const last = this.toldRetired.get(from) ?? Number.NEGATIVE_INFINITY;
    if (this.now - last >= this.electionTimeoutMs) {
      this.toldRetired.set(from, this.now);
      this.send(from, { type: 'retired', entry: current });
    }
    return true;
  }

  /**
   * `from` asks for instances from `fromInstance` on, and this replica truncated some of them: were
   * `from` removed by a change this replica knows of, it is told so, with the truncation point,
   * instead of sent a jump past what it never delivered, which would look to it like state it lost
   * (it may not have learned its removal yet; the simulator: seeds 1383 and 11924 with 3
   * replicas). It goes on as an acceptor (`skipTo`): this replica may itself need its vote again.
   */
  private tellPassed(from: number, fromInstance: number): boolean {
    if (this.truncatedBelow <= fromInstance) return false;
    const entry = this.history.removalOf(from);
    if (entry === undefined) return false;
    this.send(from, { type: 'retired', entry, truncatedBelow: this.truncatedBelow });
    return true;
  }

  /**
   * Gossip would answer `to`'s pull with `gone` (the Reqs were dropped once every replica held
   * them, `to` included), but a membership change this replica knows of removed `to`: its peers
   * compact without a removed replica, so it may never have held them, and would take the answer
   * for state it lost. It is told it was removed instead (`retired` with the truncation point, as
   * `tellPassed`: only that; it goes on as an acceptor until told it is no longer needed), and the
   * caller sends no `gone`. Null when `to` was not removed: the `gone` stands. The simulator: seed
   * 13667 with 5 replicas, where a new member fresh from a state transfer, still catching up on
   * the instances that removed replica 0, answered 0's pull of a Req the others had compacted
   * once the removal was in force, and 0, which had not yet learned of it, halted.
   */
  tellRemovedInsteadOfGone(to: number): PaxosOutput[] | null {
    const entry = this.history.removalOf(to);
    if (entry === undefined) return null;
    this.send(to, { type: 'retired', entry, truncatedBelow: this.truncatedBelow });
    return this.flush();
  }

  /** The configuration in force at this replica's first undecided instance. */
  private current(): ConfigEntry {
    return this.history.at(this.decidedBelow);
  }

  /** This replica knows `instance`'s configuration: it decided every instance CONFIG_DELAY before. */
  private configKnown(instance: number): boolean {
    return instance < this.decidedBelow + CONFIG_DELAY;
  }

  /** `voters` include a majority of `instance`'s configuration (which must be known). */
  private isQuorum(instance: number, voters: ReadonlySet<number> | Iterable<number>): boolean {
    if (this.unsafeGenesisQuorum) return [...voters].length >= this.genesisMajority;
    const members = this.history.at(instance).members;
    let n = 0;
    for (const v of voters) if (members.some((m) => m.id === v)) n++;
    return n >= majorityOf(members);
  }

  private peersCache: {
    readonly below: number;
    readonly history: ConfigHistory;
    readonly version: number;
    readonly ids: readonly number[];
  } | null = null;

  /**
   * Whom this replica talks to: every member of a configuration from its first undecided instance
   * on (a member about to be added, or about to leave, included), and itself.
   */
  private peers(): readonly number[] {
    const c = this.peersCache;
    const h = this.history;
    if (c !== null && c.below === this.decidedBelow && c.history === h && c.version === h.version)
      return c.ids;
    const ids = h.membersFrom(this.decidedBelow);
    if (!ids.includes(this.self)) ids.push(this.self);
    this.peersCache = { below: this.decidedBelow, history: h, version: h.version, ids };
    return ids;
  }

  private startElection(): void {
    this.counters.elections++;
    this.role = 'candidate';
    this.ballot = ballotOf(ballotRound(this.maxSeenBallot) + 1, this.self);
    this.maxSeenBallot = this.ballot;
    // Promise our own ballot durably before anyone hears of it: a leader that restarts must never
    // run with the same ballot again (two different accepts at one ballot could both be chosen).
    this.promised = this.ballot;
    this.out.push({ type: 'persist', record: { kind: 'promise', ballot: this.ballot } });
    this.promises.clear();
    this.prepareFrom = this.decidedBelow;
    this.electionAt = this.now;
    this.broadcast({ type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  /**
   * No majority of promises yet: a prepare or a promise may have been lost, so the candidate asks
   * again at the same ballot (an acceptor promises a ballot it already promised again). Asking
   * with a new ballot each time livelocked whenever a round trip took longer than two retransmit
   * periods: every promise arrived for a ballot the candidate had already left (the simulator,
   * seed 1878 with 5 replicas: no leader for 360 ms at 10–50 ms delays). A higher ballot elsewhere
   * still ends the candidacy (a nack, or a leader's heartbeat).
   */
  private askAgain(): void {
    this.electionAt = this.now;
    this.broadcast({ type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  private onPromise(from: number, msg: PromiseMsg): void {
    this.skipTo(msg.truncatedBelow, from);
    for (const d of msg.decided) this.decide(d.instance, d.value);
    if (this.role === 'follower' || msg.ballot !== this.ballot) return;
    this.promises.set(from, msg);
    if (this.role === 'leader') {
      // A late promise (a member of a configuration this leader reached since): what it accepted
      // counts for the instances not proposed yet.
      this.mergePromise(msg);
      this.tryPropose();
    } else if (this.isQuorum(Math.max(this.prepareFrom, this.decidedBelow), this.promises.keys()))
      this.becomeLeader();
  }

  /**
   * Phase 1's promises, for every instance this leader has not proposed in yet: the highest-ballot
   * value reported there (or, up to the highest instance any promise knew, an empty batch).
   */
  private mergePromise(p: PromiseMsg): void {
    for (const a of p.accepted) {
      if (a.instance < this.nextInstance) continue;
      this.recoveredTop = Math.max(this.recoveredTop, a.instance);
      const b = this.recovered.get(a.instance);
      if (b === undefined || a.ballot > b.ballot)
        this.recovered.set(a.instance, { ballot: a.ballot, value: a.value });
    }
    for (const d of p.decided) this.recoveredTop = Math.max(this.recoveredTop, d.instance);
  }

  private becomeLeader(): void {
    this.role = 'leader';
    this.leaderHint = { id: this.self, ballot: this.ballot, at: this.now };
    this.inFlight.clear();
    this.queue.length = 0;
    this.castsWaiting.clear();
    this.proposed.clear();
    this.proposedReconfigs.clear();
    this.reconfigQueue = [];
    this.recovered.clear();
    this.readRounds.clear();
    // Every open instance from the first one not decided here is proposed again (tryPropose): the
    // highest-ballot value any acceptor of the majority accepted, or an empty batch.
    this.nextInstance = Math.max(this.prepareFrom, this.decidedBelow);
    this.recoveredTop = this.decidedBelow - 1;
    for (const p of this.promises.values()) this.mergePromise(p);
    for (const i of this.decided.keys()) this.recoveredTop = Math.max(this.recoveredTop, i);
    this.tryPropose();
    // Announce at once, so origins re-forward their pending ids here.
    this.lastHeartbeatAt = Number.NEGATIVE_INFINITY;
  }

  private stepDown(): void {
    this.role = 'follower';
    this.inFlight.clear();
    this.queue.length = 0;
    this.castsWaiting.clear();
    this.proposed.clear();
    this.promises.clear();
    this.recovered.clear();
    this.reconfigQueue = [];
    this.proposedReconfigs.clear();
    this.readRounds.clear();
  }

  /** A membership change reached this leader: it waits its turn (`nextReconfig`). */
  private enqueueReconfig(request: ReconfigRequest): void {
    const nonce = request.nonce;
    if (
      this.outcomes.has(nonce) ||
      this.proposedReconfigs.has(nonce) ||
      this.reconfigQueue.some((r) => r.nonce === nonce) ||
      this.history.madeBy(nonce) !== undefined
    )
      return;
    this.reconfigQueue.push(request);
    this.tryPropose();
  }

  /**
   * The membership change to propose now, or null. One at a time: only once the last change is
   * in force at the decided prefix and no instance on its way holds another.
   */
  private nextReconfig(): ReconfigRequest | null {
    if (this.reconfigQueue.length === 0) return null;
    if (this.history.latest().from > this.decidedBelow) return null;
    for (const f of this.inFlight.values()) if (!f.value.every(isCast)) return null;
    while (this.reconfigQueue.length > 0) {
      const r = this.reconfigQueue.shift()!;
      if (!this.outcomes.has(r.nonce) && !this.proposedReconfigs.has(r.nonce)) return r;
    }
    return null;
  }

  private enqueue(casts: readonly CastId[]): void {
    for (const c of casts) {
      const key = opKey(c.id);
      if (this.proposed.has(key) || this.isOrdered(c.id)) continue;
      const lacking = this.awaited(c.id);
      if (lacking !== null) {
        if (!this.castsWaiting.has(key)) this.castsWaiting.set(key, { cast: c, since: this.now });
        this.waits.file(lacking, { cast: key });
        continue;
      }
      this.castsWaiting.delete(key);
      this.proposed.add(key);
      this.queue.push(c);
    }
    this.tryPropose();
  }

  /** `instance` is decided here, or lies below what is (decided and maybe truncated). */
  private isDecided(instance: number): boolean {
    return instance < this.decidedBelow || this.decided.has(instance);
  }

  /** One past the highest instance this replica accepted a value for or knows decided. */
  private knownBelow(): number {
    let below = this.decidedBelow;
    for (const i of this.accepted.keys()) if (i >= below) below = i + 1;
    for (const i of this.decided.keys()) if (i >= below) below = i + 1;
    return below;
  }

  /**
   * Ends `rejoining` once every peer's first heartbeat arrived and this replica has learned every
   * instance they knew of (catch-up brings them), first promising the highest ballot they had
   * promised, durably, so it never takes a lower one it may once have refused.
   */
  private finishRejoining(): void {
    const heard = this.heardWhileRejoining;
    if (heard === null) return;
    // Every other member of the configuration in force (as far as this replica learned it).
    if (this.current().members.some((m) => m.id !== this.self && !heard.has(m.id))) return;
    let promised = 0;
    let knownBelow = 0;
    for (const h of heard.values()) {
      promised = Math.max(promised, h.promised);
      knownBelow = Math.max(knownBelow, h.knownBelow);
    }
    if (this.decidedBelow < knownBelow) return;
    this.promised = Math.max(this.promised, promised);
    this.seeBallot(promised);
    // Durable even when it is 0 (a new cluster): a replica with a promise on its disk never rejoins
    // again. Every vote it casts from now on is on its disk before anyone hears of it, so after a
    // crash it remembers them all, and must not wait again for every member: one of them may have
    // died meanwhile (a genesis replica that crashed before its first vote, with a member lost
    // for good, waited for it forever; the simulator found it with a membership change).
    this.out.push({ type: 'persist', record: { kind: 'promise', ballot: this.promised } });
    this.rejoined = true;
    this.heardWhileRejoining = null;
  }

  /**
   * A value this leader had to propose again after its election (the highest-ballot one a promise
   * reported) has waited an election timeout for Reqs that no replica sent, so it cannot vote for
   * it, nor can any acceptor that lacks them. Every acceptor that accepted the value held its Reqs
   * (onAccept) and keeps them; if none of them is alive, fewer than a majority can have accepted it,
   * so it was not chosen, and a new election, whose majority reports it no more, passes it over
   * (an empty batch there). If one is alive, its promise reports the value again and it answers
   * the pull. Without this, the instance stayed open for good and nothing after it was delivered.
   * A value the leader proposed itself never waits: it proposes only what it holds (enqueue).
   */
  private reproposalStalled(): boolean {
    for (const [instance, w] of this.acceptsWaiting) {
      const f = this.inFlight.get(instance);
      if (
        f !== undefined &&
        w.ballot === this.ballot &&
        this.now - f.proposedAt >= this.electionTimeoutMs
      )
        return true;
    }
    return false;
  }

  /** Asks gossip for what casts and 2a that waited a retransmit period still lack. */
  private wantMissing(): void {
    if (this.castsWaiting.size === 0 && this.acceptsWaiting.size === 0) return;
    if (this.now - this.lastWantAt < this.retransmitMs) return;
    const due = this.now - this.retransmitMs;
    // Bounded: a replica far behind lacks thousands; the next pull asks for the rest.
    const ids: OpId[] = [];
    const asked = new Set<string>();
    const ask = (lacking: readonly OpId[]): void => {
      for (const id of lacking) {
        const key = opKey(id);
        if (ids.length < MAX_WANTED && !asked.has(key)) {
          asked.add(key);
          ids.push(id);
        }
      }
    };
    for (const { cast, since } of this.castsWaiting.values())
      if (since <= due && ids.length < MAX_WANTED) ask(this.missing(cast.id));
    for (const [instance, a] of this.acceptsWaiting) {
      if (ids.length >= MAX_WANTED) break;
      if (this.isDecided(instance)) continue;
      if (a.since <= due) for (const c of a.value) if (isCast(c)) ask(this.missing(c.id));
    }
    if (ids.length === 0) return;
    this.lastWantAt = this.now;
    this.out.push({ type: 'want', ids });
  }

  /**
   * Opens instances in order from `nextInstance`: first those phase 1 recovered (up to
   * `recoveredTop`), then new batches of the queue, at most `maxInFlight` open at once. Never an
   * instance whose configuration this leader does not know yet (more than CONFIG_DELAY past its
   * decided prefix), nor one without promises of this ballot from a majority of that
   * configuration, nor one of a configuration it is not a member of.
   */
  private tryPropose(): void {
    while (this.role === 'leader') {
      const j = this.nextInstance;
      if (!this.configKnown(j)) return;
      if (this.isDecided(j)) {
        this.nextInstance++;
        continue;
      }
      if (!this.history.isMember(j, this.self)) return;
      if (!this.isQuorum(j, this.promises.keys())) {
        this.askForPromises(j);
        return;
      }
      if (j <= this.recoveredTop) {
        const value = this.recovered.get(j)?.value ?? [];
        this.recovered.delete(j);
        for (const c of value)
          if (isCast(c)) this.proposed.add(opKey(c.id));
          else this.proposedReconfigs.add(c.reconfig.nonce);
        this.propose(this.nextInstance++, value);
        continue;
      }
      if (this.inFlight.size >= this.maxInFlight) return;
      const reconfig = this.nextReconfig();
      if (reconfig !== null) {
        this.proposedReconfigs.add(reconfig.nonce);
        this.propose(this.nextInstance++, [{ reconfig }]);
        continue;
      }
      if (this.queue.length > 0) {
        this.propose(this.nextInstance++, this.queue.splice(0, this.maxBatch));
        continue;
      }
      // A decided change comes into force CONFIG_DELAY instances on: with nothing else to order,
      // empty instances bring it there now rather than after as many batches.
      if (this.history.latest().from > j) {
        this.propose(this.nextInstance++, []);
        continue;
      }
      // A member accepted values here from an earlier ballot that no majority chose (phase 1 did
      // not report them). A member rejoining waits until every instance any peer knows of is
      // decided (finishRejoining); in an idle cluster nothing else would decide these, so it
      // waited for good (the simulator: seed 16274 with 5 replicas). Any value is safe here, as
      // for any instance past `recoveredTop`; an empty one decides them now.
      if (this.memberKnowsOf(j)) {
        this.propose(this.nextInstance++, []);
        continue;
      }
      return;
    }
  }

  /**
   * A member of instance `j`'s configuration told of a value it accepted at `j` or beyond, with no
   * promise past this leader's ballot (one that promised more refuses its accepts anyway, and
   * tells of a leader this one does not know of yet).
   */
  private memberKnowsOf(j: number): boolean {
    for (const m of this.history.at(j).members) {
      const known = m.id === this.self ? undefined : this.peerHeartbeats.get(m.id);
      if (known !== undefined && known.knownBelow > j && known.promised <= this.ballot) return true;
    }
    return false;
  }

  /**
   * This leader lacks promises from a majority of instance `j`'s configuration (members added
   * since its election): it asks those it has none from, once per retransmit period.
   */
  private askForPromises(j: number): void {
    if (this.now - this.lastReprepareAt < this.retransmitMs) return;
    this.lastReprepareAt = this.now;
    for (const m of this.history.at(j).members)
      if (!this.promises.has(m.id))
        this.send(m.id, { type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  private propose(instance: number, value: Batch): void {
    this.counters.instancesProposed++;
    this.counters.idsProposed += value.length;
    this.inFlight.set(instance, { value, proposedAt: this.now, sentAt: this.now });
    this.broadcast({ type: 'accept', ballot: this.ballot, instance, value });
  }

  // ---------------------------------------------------------------- origin and Ω helpers

  private currentLeader(): number | null {
    if (this.role === 'leader') return this.self;
    const h = this.leaderHint;
    if (h !== null && h.id !== this.self && this.now - h.at <= this.electionTimeoutMs) return h.id;
    return null;
  }

  private forwardPending(): void {
    if (this.pending.size === 0 && this.pendingReconfigs.size === 0 && this.readsAsked.size === 0)
      return;
    const leader = this.currentLeader();
    if (leader === null) return;
    if (leader === this.forwardedTo && this.now - this.lastForwardAt < this.retransmitMs) return;
    this.forwardedTo = leader;
    this.lastForwardAt = this.now;
    for (const request of this.pendingReconfigs.values())
      if (leader === this.self) this.enqueueReconfig(request);
      else this.send(leader, { type: 'reconfigure', request });
    if (this.readsAsked.size > 0) {
      if (leader === this.self)
        for (const nonce of this.readsAsked.keys()) this.leaderRead({ from: this.self, nonce });
      else this.send(leader, this.readIndexRequest([...this.readsAsked.keys()]));
    }
    if (this.pending.size === 0) return;
    const casts = [...this.pending.values()].sort((a, b) => a.id.eventNo - b.id.eventNo);
    if (leader === this.self) this.enqueue(casts);
    else this.send(leader, { type: 'forward', casts });
  }

  private seeBallot(b: number): void {
    if (b > this.maxSeenBallot) this.maxSeenBallot = b;
  }

  private broadcast(msg: PaxosMessage): void {
    const quorum =
      msg.type === 'accept'
        ? this.fastQuorum(msg.instance, msg.ballot, msg.value)
        : msg.type === 'accepted'
          ? this.fastQuorum(msg.instance, msg.ballot, this.accepted.get(msg.instance)?.value ?? [])
          : null;
    for (const r of this.peers()) this.send(r, msg, quorum !== null && !quorum.has(r));
  }

  /**
   * The replicas that decide an instance holding `value` at `ballot` on their own: its leader and
   * the origins of its ids, when they are a majority (with 3 replicas, the leader and a follower
   * origin). Each of them decides on its own vote and the other's, so the 2a and 2b copies to the
   * rest are lazy: they only make a decided value known. On a machine with fewer cores than
   * processes, that keeps the third replica's work off the critical path of a stable answer.
   * Null when they are not a majority (an empty batch, the leader's own ops, 5 replicas and one
   * origin): then every copy may be needed and none is lazy.
   */
  private fastQuorum(instance: number, ballot: number, value: Batch): Set<number> | null {
    const quorum = new Set<number>([ballotLeader(ballot)]);
    for (const c of value) if (isCast(c)) quorum.add(slotOf(c.id.replica));
    return this.configKnown(instance) && this.isQuorum(instance, quorum) ? quorum : null;
  }

  /**
   * Phase 2 addressed to this replica itself is handled here, inside the same input, instead of
   * as a message that comes back through the driver (one more turn and one more disk commit per
   * step): the leader accepts its own 2a as it proposes, and an acceptor counts its own 2b as it
   * accepts. That is safe because an input's outputs act in order: the accept's `persist` comes
   * before everything it leads to, a decision included, so the driver makes the vote durable
   * before any effect of it can be seen (and a crash loses the vote with its effects). Prepares
   * and promises still go round, since phase 1 runs once per ballot.
   */
  private send(to: number, msg: PaxosMessage, lazy = false): void {
    if (to === this.self && msg.type === 'accept') {
      this.onAccept(to, msg.ballot, msg.instance, msg.value);
      return;
    }
    if (to === this.self && msg.type === 'accepted') {
      this.onAccepted(to, msg.ballot, msg.instance);
      return;
    }
    this.out.push(lazy ? { type: 'send', to, msg, lazy } : { type: 'send', to, msg });
  }

  private flush(): PaxosOutput[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  /**
   * The acceptor's durable state, compacted: the records that rebuild it (`recovery`) in place of
   * every acceptor record written so far. Its promise, the truncation point, and the value accepted
   * for each instance not truncated. Every value here was persisted before it was acted on, so the
   * driver may write these and drop the older records (a checkpoint does, atomically).
   */
  durableState(): AcceptorRecord[] {
    const out: AcceptorRecord[] = [];
    if (this.promised > 0 || this.rejoined) out.push({ kind: 'promise', ballot: this.promised });
    if (this.truncatedBelow > 0) out.push({ kind: 'truncate', below: this.truncatedBelow });
    for (const entry of this.history.all()) out.push({ kind: 'config', entry });
    for (const [instance, a] of [...this.accepted].sort((x, y) => x[0] - y[0]))
      out.push({ kind: 'accept', instance, ballot: a.ballot, value: a.value });
    return out;
  }

  // ---------------------------------------------------------------- inspection

  status(): PaxosStatus {
    return {
      role: this.role,
      ballot: this.role === 'leader' ? this.ballot : this.promised,
      leader: this.currentLeader(),
      quorate: this.hearsMajority(),
      rejoining: this.rejoining,
      decidedBelow: this.decidedBelow,
      truncatedBelow: this.truncatedBelow,
      inFlight: this.inFlight.size,
      queued: this.queue.length,
      pendingCasts: this.pending.size,
      acceptedHeld: this.accepted.size,
      decidedHeld: this.decided.size,
      backstopHits: this.backstopHits,
      lackChecks: this.lackChecks,
      members: this.current().members.map((m) => m.id),
    };
  }
}

export interface PaxosStatus {
  role: Role;
  ballot: number;
  leader: number | null;
  /** This replica heard from a majority (itself included) within the election timeout. */
  quorate: boolean;
  /** It still learns before it may promise or vote (PaxosOptions.noDurableVotes). */
  rejoining: boolean;
  /** Waiting casts and 2a found ready only by the periodic recheck (see MultiPaxos). */
  backstopHits: number;
  /**
   * Checks of what a cast lacks, so far: about one per cast received while nothing lacks, and one
   * per cast each time a Req it waited for arrives. The simulator bounds it per committed op.
   */
  lackChecks: number;
  decidedBelow: number;
  truncatedBelow: number;
  /** The ids of the configuration in force at `decidedBelow`. */
  members: number[];
  inFlight: number;
  queued: number;
  pendingCasts: number;
  acceptedHeld: number;
  decidedHeld: number;
}
