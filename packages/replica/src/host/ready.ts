import type { Member, ReconfigOutcome, ReconfigRequest } from '../cab/configuration.js';
import type { OpId } from '../core/op-id.js';
import type { InvariantViolation } from '../core/invariant-check.js';
import type { InvokeRequest } from '../core/replica.js';
import type { ExecutionResult, Req, Response } from '../core/types.js';
import type { DivergenceReport } from './divergence-messages.js';
import type { PeerMessage } from './peer-message.js';
import type { HostRecord } from './records.js';

/**
 * One input to the host (`ReplicaHost.step`), in the shape of etcd raft's `Step`/`Tick`: each
 * carries what the host may not look up itself (the time, a peer's message, an executor's result,
 * the driver's word that records are on disk).
 */
export type HostInput =
  /** Right after construction: what recovering from disk (or joining) wants done first. */
  | { readonly kind: 'start' }
  /** A client's op, at the driver's clock. */
  | { readonly kind: 'invoke'; readonly now: number; readonly request: InvokeRequest }
  /** A peer's message. */
  | { readonly kind: 'receive'; readonly from: number; readonly message: PeerMessage }
  /** The clock moved: timers (heartbeats, retransmissions, no-ops, prunes, checkpoints). */
  | { readonly kind: 'tick'; readonly now: number }
  /**
   * With ReplicaOptions.deferExecution: run the executions the inputs since the last one made
   * necessary (the runtime: once per turn of the event loop, after every message of the turn).
   */
  | { readonly kind: 'run' }
  /** A job the executor deferred (returned undefined for) finished. */
  | { readonly kind: 'executed'; readonly result: ExecutionResult }
  /**
   * Records up to sequence number `upTo` (Ready.firstSeq onwards, in order) are durable: the
   * messages and responses that waited for them may leave.
   */
  | { readonly kind: 'durable'; readonly upTo: number }
  /** A membership change an operator asked this replica for (cab/configuration.ts). */
  | { readonly kind: 'reconfigure'; readonly now: number; readonly request: ReconfigRequest }
  /** Write a checkpoint now (the host also takes them by itself, on ticks). */
  | { readonly kind: 'checkpoint' };

/** A message for a peer. */
export interface PeerSend {
  readonly kind: 'send';
  readonly to: number;
  readonly msg: PeerMessage;
  /** Nothing waits for it: it may wait to travel with later messages (GossipOutput, PaxosOutput). */
  readonly lazy: boolean;
}

/** An answer for the client that invoked an op (or a live query's read). */
export interface ClientResponse {
  readonly kind: 'respond';
  readonly response: Response;
}

/** What leaves the replica once its records are durable: a message, or an answer. */
export type HostOutput = PeerSend | ClientResponse;

/** What the host tells its driver it did, for drivers that show it (viewers, logs, the simulator). */
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
  /**
   * Its finalized state differs from a peer's (host/divergence.ts): what it found, and whether it
   * still serves stable answers; null once every member agrees with it again.
   */
  | { readonly kind: 'divergence'; readonly report: DivergenceReport | null }
  /**
   * An app invariant its finalized state broke, right after the op at a committed position
   * (ReplicaOptions.checkInvariants).
   */
  | { readonly kind: 'invariantBroken'; readonly violation: InvariantViolation }
  /** The replica installed a peer's checkpoint (state transfer). */
  | {
      readonly kind: 'transferred';
      readonly finalized: number;
      /** Its committed position now: the finalized ops and the committed ones not final. */
      readonly committed: number;
      readonly keys: number;
    };

/**
 * What one step of the host asks of its driver, as etcd raft's `Ready` does: records to make
 * durable, then the messages and responses whose records are durable, and what happened.
 *
 * The rule every driver relies on — nothing anyone hears of can be lost in a crash — is kept here,
 * not by the drivers: a message or response leaves in a Ready only once every record the host
 * wrote before it is durable (the driver said so with a `durable` input). Until then the host holds
 * it. So a promise or accept is never answered, and no client hears of an op, before the record
 * that a crash would otherwise lose.
 */
export interface Ready {
  /**
   * To write, in this order, after every record of earlier Readies: numbered `firstSeq`,
   * `firstSeq + 1`, …; a driver reports them durable with `{ kind: 'durable', upTo }`. A
   * `checkpoint` record supersedes every record before it.
   */
  readonly records: readonly HostRecord[];
  readonly firstSeq: number;
  /**
   * Messages for peers and answers for clients whose records are durable, in the order the host
   * made them: send and deliver them.
   */
  readonly outputs: readonly HostOutput[];
  /** What happened, in order; not held (nothing depends on a viewer's copy). */
  readonly events: readonly HostEvent[];
  /**
   * The records that messages or responses of this step wait for (their sequence numbers,
   * ascending, each once; a record of an earlier Ready among them): a driver whose writes become
   * durable one by one (the simulator's disk) need only report these. One that commits in batches
   * reports its last record after each commit and can ignore this.
   */
  readonly waits: readonly number[];
  /**
   * Set in the step at which the replica stopped for good, and why: it ignores every input from
   * then on, and its driver should take it down and report the reason. Raised when a peer holds
   * ops of this replica that its durable state lacks (a wiped or replaced data directory, unsynced
   * commits lost in a power failure, or two processes with one id), or when a replica that lost
   * its disk finds that its peers compacted what it had.
   */
  readonly halted: string | null;
}

/** What a Ready holds where a step produced nothing of a kind: one frozen array, not a new one. */
const NONE: readonly never[] = Object.freeze([]);

/** An output waiting for the records written before it. */
interface Held {
  readonly after: number;
  readonly output: HostOutput;
}

/**
 * Collects what the host produces between two steps, and holds each message and response until
 * the records written before it are durable (see Ready). Sequence numbers count this host's
 * records from 1: a restarted replica is a new host, and what its predecessor held died with it,
 * as a crash loses what was not durable.
 */
export class ReadyBuilder {
  private records: HostRecord[] = [];
  private firstSeq = 1;
  /** The last record written, and the last one the driver reported durable. */
  private written = 0;
  private durable = 0;
  private outputs: HostOutput[] = [];
  private events: HostEvent[] = [];
  private waits: number[] = [];
  private halted: string | null = null;
  /** Outputs waiting for records, in the order they were made (`after` never decreases). */
  private held: Held[] = [];
  private heldFrom = 0;

  /**
   * Ops whose Req records are written and not yet durable, in the order written: a crash now
   * would lose them here (and, for this replica's own ops, everywhere: nobody else has them yet).
   */
  private notDurable: {
    readonly seq: number;
    readonly replica: number;
    readonly eventNo: number;
  }[] = [];

  persist(record: HostRecord): void {
    this.records.push(record);
    this.written++;
    if (record.layer === 'core' && record.record.kind === 'req') {
      const { replica, eventNo } = record.record.req.id;
      this.notDurable.push({ seq: this.written, replica, eventNo });
    }
  }

  /**
   * The first of `origin`'s ops (in the order written) whose Req record is not durable yet, or
   * null. A replica issues its own ops in order, so for its own origin this is the lowest one: a
   * client may be told of its ops below it only (ClientView.seenVector).
   */
  firstNotDurable(origin: number): number | null {
    for (const r of this.notDurable) if (r.replica === origin) return r.eventNo;
    return null;
  }

  send(to: number, msg: PeerMessage, lazy: boolean): void {
    this.output({ kind: 'send', to, msg, lazy });
  }

  respond(response: Response): void {
    this.output({ kind: 'respond', response });
  }

  /**
   * Releases an output at once when every record written before it is durable, else holds it for
   * them. Everything held waits for a record not yet durable, and `after` never decreases, so the
   * queue releases in order.
   */
  private output(output: HostOutput): void {
    if (this.written <= this.durable) {
      this.outputs.push(output);
      return;
    }
    this.held.push({ after: this.written, output });
    if (this.waits[this.waits.length - 1] !== this.written) this.waits.push(this.written);
  }

  event(e: HostEvent): void {
    this.events.push(e);
  }

  halt(reason: string): void {
    this.halted = reason;
  }

  /** Records up to `upTo` are durable: what waited for them is released, in order. */
  durableUpTo(upTo: number): void {
    if (upTo > this.written)
      throw new Error(`records up to ${upTo} reported durable, but only ${this.written} written`);
    if (upTo <= this.durable) return;
    this.durable = upTo;
    let done = 0;
    while (done < this.notDurable.length && this.notDurable[done]!.seq <= upTo) done++;
    if (done > 0) this.notDurable.splice(0, done);
    let i = this.heldFrom;
    for (; i < this.held.length; i++) {
      const h = this.held[i]!;
      if (h.after > upTo) break;
      this.outputs.push(h.output);
    }
    this.heldFrom = i;
    if (i === this.held.length) {
      this.held = [];
      this.heldFrom = 0;
    }
  }

  /** Outputs held for records not yet durable. */
  get holding(): number {
    return this.held.length - this.heldFrom;
  }

  /** Whether a message held for records not yet durable satisfies `pred`. */
  holdsMessage(pred: (send: PeerSend) => boolean): boolean {
    for (let i = this.heldFrom; i < this.held.length; i++) {
      const o = this.held[i]!.output;
      if (o.kind === 'send' && pred(o)) return true;
    }
    return false;
  }

  /** Everything since the last call. A driver may keep what it is given: nothing is reused. */
  take(): Ready {
    const ready: Ready = {
      records: this.records.length === 0 ? NONE : this.records,
      firstSeq: this.firstSeq,
      outputs: this.outputs.length === 0 ? NONE : this.outputs,
      events: this.events.length === 0 ? NONE : this.events,
      waits: this.waits.length === 0 ? NONE : this.waits,
      halted: this.halted,
    };
    this.firstSeq += this.records.length;
    // Most steps make no records, or leave nothing: only a handed-out array is replaced.
    if (this.records.length > 0) this.records = [];
    if (this.outputs.length > 0) this.outputs = [];
    if (this.events.length > 0) this.events = [];
    if (this.waits.length > 0) this.waits = [];
    this.halted = null;
    return ready;
  }
}
