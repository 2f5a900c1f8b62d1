import { slotOf } from '../core/op-id.js';
import {
  CONFIG_DELAY,
  ConfigHistory,
  genesis,
  majorityOf,
  type ConfigEntry,
} from './configuration.js';
import { ballotLeader, isCast, type Batch, type PaxosMessage } from './messages.js';
import type { PaxosOptions, PaxosOutput } from './paxos-types.js';
import { Roles } from './roles.js';

/** PaxosOptions.heartbeatMs when unset. */
export const DEFAULT_HEARTBEAT_MS = 10;
/** PaxosOptions.electionTimeoutMs when unset. */
export const DEFAULT_ELECTION_TIMEOUT_MS = 60;

/** Counters for benchmarks and status pages (MultiPaxos.counters). */
export interface PaxosCounters {
  elections: number;
  /** Hand-overs this replica sent as leader to the preferred leader (leader-transfer.ts). */
  handOvers: number;
  instancesProposed: number;
  idsProposed: number;
  decided: number;
  truncated: number;
}

/**
 * What the parts of one MultiPaxos share (multi-paxos.ts): who this replica is, the time, the
 * configurations and the decided prefix that selects the one in force, and the outputs of the
 * input being handled, with `send`, which handles phase 2 addressed to this replica in place.
 */
export class PaxosContext {
  readonly self: number;
  /** The configuration of every instance from the one before the truncation point on. */
  history: ConfigHistory;
  /**
   * One past the last instance of the decided prefix: every instance below it is decided here (and
   * maybe truncated). The learner advances it; it selects the configuration in force.
   */
  decidedBelow = 0;
  now = 0;
  readonly genesisMajority: number;
  readonly unsafeGenesisQuorum: boolean;
  /** How often every replica announces itself (Ω) and its progress. */
  readonly heartbeatMs: number;
  /** Silence after which a replica is presumed down. */
  readonly electionTimeoutMs: number;
  /** When unanswered prepares, accepts, forwards and catch-ups are sent again. */
  readonly retransmitMs: number;
  readonly counters: PaxosCounters;
  /**
   * A replica that promised another's ballot, or was deposed by one, waits before it runs itself
   * (Election.holdOff): with a preferred leader only, whose hand-overs make elections routine.
   * Without one, elections stay as they were, and so does every simulator seed's run (seeds that
   * tests pin down depend on it). False also for the planted bug PaxosOptions.unsafeRunWhenDeposed.
   */
  readonly holdOffWhenDeposed: boolean;
  /** The parts, set once by MultiPaxos: each reaches the others through these. */
  readonly roles = new Roles();
  private out: PaxosOutput[] = [];
  private peersCache: {
    readonly below: number;
    readonly history: ConfigHistory;
    readonly version: number;
    readonly ids: readonly number[];
  } | null = null;

  constructor(options: PaxosOptions, counters: PaxosCounters) {
    this.self = options.self;
    const first = genesis(options.members ?? options.replicas.map((id) => ({ id, address: '' })));
    this.history = new ConfigHistory([first]);
    this.genesisMajority = majorityOf(first.members);
    this.unsafeGenesisQuorum = options.unsafeGenesisQuorum === true;
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.electionTimeoutMs = options.electionTimeoutMs ?? DEFAULT_ELECTION_TIMEOUT_MS;
    this.retransmitMs = options.retransmitMs ?? 30;
    this.counters = counters;
    this.holdOffWhenDeposed =
      options.preferredLeader !== undefined && options.unsafeRunWhenDeposed !== true;
  }

  /** The configuration in force at this replica's first undecided instance. */
  current(): ConfigEntry {
    return this.history.at(this.decidedBelow);
  }

  /** This replica knows `instance`'s configuration: it decided every instance CONFIG_DELAY before. */
  configKnown(instance: number): boolean {
    return instance < this.decidedBelow + CONFIG_DELAY;
  }

  /** `voters` include a majority of `instance`'s configuration (which must be known). */
  isQuorum(instance: number, voters: ReadonlySet<number> | Iterable<number>): boolean {
    if (this.unsafeGenesisQuorum) return [...voters].length >= this.genesisMajority;
    const members = this.history.at(instance).members;
    let n = 0;
    for (const v of voters) if (members.some((m) => m.id === v)) n++;
    return n >= majorityOf(members);
  }

  /**
   * Whom this replica talks to: every member of a configuration from its first undecided instance
   * on (a member about to be added, or about to leave, included), and itself.
   */
  peers(): readonly number[] {
    const c = this.peersCache;
    const h = this.history;
    if (c !== null && c.below === this.decidedBelow && c.history === h && c.version === h.version)
      return c.ids;
    const ids = h.membersFrom(this.decidedBelow);
    if (!ids.includes(this.self)) ids.push(this.self);
    this.peersCache = { below: this.decidedBelow, history: h, version: h.version, ids };
    return ids;
  }

  /** An output of the input being handled, after those before it. */
  emit(output: PaxosOutput): void {
    this.out.push(output);
  }

  broadcast(msg: PaxosMessage): void {
    const quorum =
      msg.type === 'accept'
        ? this.fastQuorum(msg.instance, msg.ballot, msg.value)
        : msg.type === 'accepted'
          ? this.fastQuorum(
              msg.instance,
              msg.ballot,
              this.roles.acceptor.acceptedAt(msg.instance)?.value ?? [],
            )
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
  send(to: number, msg: PaxosMessage, lazy = false): void {
    if (to === this.self && msg.type === 'accept') {
      this.roles.acceptor.onAccept(to, msg.ballot, msg.instance, msg.value);
      return;
    }
    if (to === this.self && msg.type === 'accepted') {
      this.roles.learner.onAccepted(to, msg.ballot, msg.instance);
      return;
    }
    this.out.push(lazy ? { type: 'send', to, msg, lazy } : { type: 'send', to, msg });
  }

  /** The outputs of the input just handled, in order; the next input starts afresh. */
  flush(): PaxosOutput[] {
    const out = this.out;
    this.out = [];
    return out;
  }
}
