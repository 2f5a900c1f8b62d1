import type { PaxosOutput } from '../cab/multi-paxos.js';
import type { OpId } from '../core/op-id.js';
import type { Output } from '../core/types.js';
import type { Executor } from '../exec/executor.js';
import type { GossipOutput } from '../gossip/messages.js';
import type { DigestClaim } from './divergence-messages.js';
import type { HostParts } from './parts.js';
import type { ReadyBuilder } from './ready.js';

/** What routing asks of the host around it. */
export interface RouterHost {
  /** What every gossip summary that leaves carries: its finalized state's digest (divergence.ts). */
  claim(): DigestClaim;
  /** False while its state differs from its peers' without a majority's: stable answers stay in. */
  servesStable(): boolean;
  /** Paxos may have changed whom it talks to: gossip follows (end of each Paxos batch). */
  syncPeers(): void;
  /** A replica the cluster no longer needs stops (after each Paxos batch). */
  retireIfRemoved(): void;
  /** A strong op was delivered here; and the last strong op of `origin` delivered here. */
  delivered(id: OpId): void;
  lastDeliveredOf(origin: number): number;
  /** Gossip found that a peer holds ops of this replica that its durable state lacks. */
  lostOwnOp(from: number, id: OpId): void;
  /** Gossip found that a peer dropped a Req this replica needs. */
  lostDroppedReq(from: number, id: OpId): void;
  /** Paxos found that this replica lost state its peers truncated. */
  rebuildOrHalt(from: number, why: string): void;
}

/** A batch of the core's outputs being routed; conditional delivery adds to it. */
interface CoreFrame {
  readonly layer: 'core';
  readonly outputs: Output[];
  next: number;
}

/** A batch of gossip's outputs being routed, and the Reqs it delivered so far. */
interface GossipFrame {
  readonly layer: 'gossip';
  readonly outputs: readonly GossipOutput[];
  next: number;
  readonly delivered: OpId[];
}

/**
 * A batch of Paxos's outputs being routed: whether it changed what may be delivered, and whether
 * its end is being routed.
 */
interface PaxosFrame {
  readonly layer: 'paxos';
  readonly outputs: readonly PaxosOutput[];
  next: number;
  changed: boolean;
  finishing: boolean;
}

type Frame = CoreFrame | GossipFrame | PaxosFrame;

/**
 * Routes the outputs of a host's parts — the core (Algorithm 1), gossip, Multi-Paxos and the
 * conditional delivery between them — to each other and out, through a ReadyBuilder. One loop
 * over a stack of batches (`route`), depth first: each output goes to the part it is for or out
 * (records, messages, responses, events), and a part's answer is routed whole before the next
 * output of the batch that caused it. No part's handler calls into another's: what an input led
 * to reads top to bottom in this file.
 */
export class Router {
  /** Batches being routed: the last is routed first. */
  private readonly frames: Frame[] = [];
  /** Strong reads whose read index arrived, and the index (cab/read-index.ts). */
  private readsIndexed: { readonly tag: number; readonly index: number }[] = [];

  constructor(
    private readonly parts: HostParts,
    private readonly out: ReadyBuilder,
    private readonly executor: Executor,
    private readonly host: RouterHost,
  ) {}

  /** The parts were replaced (a state transfer): reads indexed by the old ones mean nothing now. */
  reset(): void {
    if (this.frames.length > 0)
      throw new Error('the parts were replaced while their outputs were being routed');
    this.readsIndexed = [];
  }

  /**
   * Routes a batch of the core's outputs, and everything it leads to. The array is the router's
   * from here (conditional delivery adds to it): the core hands out a new one with each call.
   */
  core(outputs: Output[]): void {
    this.route({ layer: 'core', outputs, next: 0 });
  }

  /** Routes a batch of gossip's outputs, and everything it leads to. */
  gossip(outputs: readonly GossipOutput[]): void {
    this.route({ layer: 'gossip', outputs, next: 0, delivered: [] });
  }

  /** Routes a batch of Paxos's outputs, and everything it leads to. */
  paxos(outputs: readonly PaxosOutput[]): void {
    this.route({ layer: 'paxos', outputs, next: 0, changed: false, finishing: false });
  }

  private route(frame: Frame): void {
    const frames = this.frames;
    frames.push(frame);
    // A batch queued while routing (what a handler's call into a part returned) is routed next,
    // by the loop already running.
    if (frames.length > 1) return;
    try {
      while (frames.length > 0) {
        const top = frames[frames.length - 1]!;
        if (top.layer === 'core') this.routeCore(top);
        else if (top.layer === 'gossip') this.routeGossip(top);
        else this.routePaxos(top);
      }
    } catch (err) {
      // A part threw (a bug, or an executor that failed): what was left of this input's routing
      // is dropped, so that the next input starts from an empty stack instead of queueing behind
      // it for good.
      frames.length = 0;
      throw err;
    }
  }

  /** Nothing is being routed: a state transfer may replace the parts. */
  get idle(): boolean {
    return this.frames.length === 0;
  }

  /**
   * The core's batch, output by output, until it is done or a handler queued a batch on top of it
   * (routed first; this one goes on after): executions run inline (or handed to a worker), casts,
   * records, answers. At its end, strong reads whose read index is delivered read the committed
   * state, and decided strong ops whose dependencies are all here are delivered (conditional
   * delivery); their outputs join the batch.
   */
  private routeCore(f: CoreFrame): void {
    const { replica, gossip, paxos, delivery } = this.parts;
    const queue = f.outputs;
    const depth = this.frames.length;
    while (this.frames.length === depth) {
      if (f.next === queue.length && this.readsIndexed.length > 0) {
        // Strong reads whose index is delivered here read the committed state.
        const below = delivery.deliveredBelow();
        const due = this.readsIndexed.filter((r) => r.index <= below);
        if (due.length > 0) {
          this.readsIndexed = this.readsIndexed.filter((r) => r.index > below);
          for (const r of due) queue.push(...replica.readIndexReached(r.tag));
        }
      }
      if (f.next === queue.length) {
        const id = delivery.next((x) => replica.checkDep(x) || replica.closedOff(x));
        if (id === null) {
          this.frames.pop();
          return;
        }
        delivery.markDelivered(id);
        paxos.delivered(id);
        this.host.delivered(id);
        // Above the cut of its closed origin: passed over, never applied (closing-origins.ts).
        if (!replica.closedOff(id)) queue.push(...replica.deliverStrong(id));
        continue;
      }
      const o = queue[f.next++]!;
      switch (o.type) {
        case 'execute': {
          const result = this.executor.execute(o.job);
          if (result !== undefined) queue.push(...replica.executed(result));
          break;
        }
        case 'rbCast':
          this.out.event({ kind: 'op', req: o.req, local: true });
          this.gossip(gossip.cast(o.req));
          break;
        case 'cabCast':
          this.paxos(paxos.cast({ id: o.id, prevStrong: o.prevStrong }));
          break;
        case 'readIndex':
          this.paxos(paxos.requestRead(o.tag));
          break;
        case 'cabAdopt':
          // A chained adoption names its predecessor (cast but not delivered yet); otherwise its
          // origin's earlier strong ops are all delivered here (they are in its context), so the
          // last one delivered is its predecessor.
          if (!delivery.hasOrdered(o.id))
            this.paxos(
              paxos.cast({
                id: o.id,
                prevStrong: o.prevStrong ?? this.host.lastDeliveredOf(o.id.replica),
              }),
            );
          break;
        case 'persist':
          this.out.persist({ layer: 'core', record: o.record });
          if (o.record.kind === 'commit')
            this.out.event({
              kind: 'commit',
              ids: o.record.ids,
              position: replica.committedOps - o.record.ids.length,
            });
          break;
        case 'invariantBroken':
          this.out.event({ kind: 'invariantBroken', violation: o.violation });
          break;
        case 'originClosed':
          // No Req arrived, yet what waited for the closed origin's dropped ops is ready: checked
          // again, all of it (a close is rare); missed, only the periodic recheck found it.
          this.paxos(paxos.reqsArrived());
          break;
        case 'respond':
          // A replica whose state may be the wrong one answers nothing stably (its clients go to
          // another replica: the drivers turn them away).
          if (o.level !== 'stable' || this.host.servesStable()) this.out.respond(o);
          break;
      }
    }
  }

  /**
   * Gossip's batch, output by output (as `routeCore`): a message, a Req delivered to the core, or
   * news of lost state. At its end, Paxos hears which Reqs arrived: ids it waited for may be
   * proposed or accepted now.
   */
  private routeGossip(f: GossipFrame): void {
    const { replica, paxos } = this.parts;
    const depth = this.frames.length;
    while (this.frames.length === depth) {
      if (f.next === f.outputs.length) {
        this.frames.pop();
        if (f.delivered.length > 0) this.paxos(paxos.reqsArrived(f.delivered));
        return;
      }
      const o = f.outputs[f.next++]!;
      if (o.type === 'send') {
        const told = o.msg.kind === 'gone' ? paxos.tellRemovedInsteadOfGone(o.to) : null;
        const msg = o.msg.kind === 'summary' ? { ...o.msg, digest: this.host.claim() } : o.msg;
        if (told === null) this.out.send(o.to, { kind: 'gossip', msg }, o.lazy === true);
        else this.paxos(told);
      } else if (o.type === 'deliver') {
        this.out.event({ kind: 'op', req: o.req, local: false });
        f.delivered.push(o.req.id);
        this.core(replica.deliverReq(o.req));
      } else if (o.type === 'unknownOwnOp') this.host.lostOwnOp(o.from, o.id);
      else this.host.lostDroppedReq(o.from, o.id);
    }
  }

  /**
   * Paxos's batch, output by output (as `routeCore`): a record, a message, a decision for the
   * delivery stream. At its end, gossip talks to whom Paxos talks to, what the decisions made
   * deliverable is delivered, and a replica that is no longer needed retires.
   */
  private routePaxos(f: PaxosFrame): void {
    const { gossip, delivery } = this.parts;
    const depth = this.frames.length;
    while (this.frames.length === depth) {
      if (f.finishing) {
        this.frames.pop();
        this.host.retireIfRemoved();
        return;
      }
      if (f.next === f.outputs.length) {
        this.host.syncPeers();
        f.finishing = true;
        if (f.changed) this.core([]);
        continue;
      }
      const o = f.outputs[f.next++]!;
      if (o.type === 'send') this.out.send(o.to, { kind: 'paxos', msg: o.msg }, o.lazy === true);
      else if (o.type === 'persist') this.out.persist({ layer: 'cab', record: o.record });
      else if (o.type === 'want') this.gossip(gossip.want(o.ids));
      else if (o.type === 'skip') {
        delivery.skipTo(o.below);
        f.changed = true;
      } else if (o.type === 'lostState') {
        // Paxos is inert from here (it reported lost state once): the rest of its batch is moot.
        this.frames.pop();
        this.host.rebuildOrHalt(o.from, o.reason);
        return;
      } else if (o.type === 'config') this.out.event({ kind: 'reconfigured', outcome: o.outcome });
      else if (o.type === 'readIndex') {
        this.readsIndexed.push({ tag: o.key, index: o.index });
        f.changed = true;
      } else {
        delivery.decide(o.instance, o.value);
        f.changed = true;
      }
    }
  }
}
