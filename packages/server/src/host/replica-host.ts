import { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type { AcceptorRecord, PaxosMessage } from '../cab/messages.js';
import { MultiPaxos, type PaxosOptions, type PaxosOutput } from '../cab/multi-paxos.js';
import type { OpId } from '../core/op-id.js';
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
  | { readonly layer: 'cab'; readonly record: AcceptorRecord };

/**
 * What the host asks of its driver, in order. A driver must make each record durable before it
 * acts on any later send or response (the simulator defers them; the runtime writes synchronously).
 */
export interface HostEffects {
  persist(record: HostRecord): void;
  send(to: number, msg: PeerMessage): void;
  respond(response: Response): void;
}

export interface HostOptions {
  readonly id: number;
  /** Every replica's id, this one included. */
  readonly replicas: readonly number[];
  readonly replica: Omit<ReplicaOptions, 'id'>;
  readonly paxos?: Omit<PaxosOptions, 'self' | 'replicas' | 'isOrdered'>;
  readonly gossip?: Omit<GossipOptions, 'self' | 'peers'>;
  /** Must answer synchronously (the inline executor). */
  readonly executor: Executor;
  /** How long the head of the delivery stream may wait for missing Reqs before they are pulled. */
  readonly pullAfterMs?: number;
}

/**
 * One Creek replica process, without I/O: the core (Algorithm 1), gossip (reliable broadcast with
 * anti-entropy), Multi-Paxos (CAB) and the conditional delivery that feeds CAB's decisions to the
 * core when `checkDep` holds. It routes each part's outputs to the others and to the driver. The
 * simulator and the real runtime drive the same host.
 */
export class ReplicaHost {
  readonly id: number;
  readonly replica: Replica;
  readonly gossip: Gossip;
  readonly paxos: MultiPaxos;
  readonly delivery: ConditionalDelivery;
  private readonly executor: Executor;
  private readonly pullAfterMs: number;
  private blockedSince: number | null = null;
  private now = 0;

  /** A fresh replica, or one rebuilt from `recovered` (everything it had made durable). */
  constructor(
    options: HostOptions,
    private readonly effects: HostEffects,
    recovered?: { readonly records: readonly HostRecord[]; readonly nowMs: number },
  ) {
    this.id = options.id;
    this.executor = options.executor;
    this.pullAfterMs = options.pullAfterMs ?? 20;
    const replicaOptions: ReplicaOptions = { ...options.replica, id: options.id };
    const paxosOptions: PaxosOptions = {
      ...options.paxos,
      self: options.id,
      replicas: options.replicas,
      isOrdered: (id) => this.delivery.hasOrdered(id),
    };
    this.gossip = new Gossip({ ...options.gossip, self: options.id, peers: options.replicas });
    if (recovered === undefined) {
      this.replica = new Replica(replicaOptions);
      this.paxos = new MultiPaxos(paxosOptions);
      this.delivery = new ConditionalDelivery();
      return;
    }
    const core = recovered.records.flatMap((r) => (r.layer === 'core' ? [r.record] : []));
    const cab = recovered.records.flatMap((r) => (r.layer === 'cab' ? [r.record] : []));
    // The strong ids this replica delivered are the last id of each of its commit records.
    const delivered: OpId[] = core.flatMap((r) =>
      r.kind === 'commit' ? [r.ids[r.ids.length - 1]!] : [],
    );
    const truncatedBelow = cab.reduce(
      (m, r) => (r.kind === 'truncate' ? Math.max(m, r.below) : m),
      0,
    );
    this.now = recovered.nowMs;
    const { replica, outputs } = Replica.recover(replicaOptions, core, recovered.nowMs);
    this.replica = replica;
    this.paxos = new MultiPaxos(paxosOptions, { records: cab });
    this.delivery = new ConditionalDelivery(truncatedBelow, delivered);
    this.gossip.recover(core.flatMap((r) => (r.kind === 'req' ? [r.req] : [])));
    this.applyCore(outputs);
  }

  invoke(nowMs: number, request: InvokeRequest): void {
    this.now = Math.max(this.now, nowMs);
    this.applyCore(this.replica.invoke(nowMs, request));
  }

  receive(from: number, message: PeerMessage): void {
    if (message.kind === 'gossip') this.applyGossip(this.gossip.receive(from, message.msg));
    else this.applyPaxos(this.paxos.receive(from, message.msg));
  }

  tick(nowMs: number): void {
    this.now = Math.max(this.now, nowMs);
    this.applyCore(this.replica.tick(nowMs));
    this.applyGossip(this.gossip.tick(nowMs));
    // Reported with heartbeats, which the driver sends only after earlier writes are durable.
    this.paxos.setDeliveredBelow(this.delivery.deliveredBelow());
    this.applyPaxos(this.paxos.tick(nowMs));
    this.pullMissing();
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
        queue.push(...this.replica.deliverStrong(id));
        if (i === queue.length) continue;
      }
      const o = queue[i]!;
      switch (o.type) {
        case 'execute': {
          const result = this.executor.execute(o.job);
          if (result instanceof Promise)
            throw new Error('ReplicaHost needs an executor that answers synchronously');
          queue.push(...this.replica.executed(result as ExecutionResult));
          break;
        }
        case 'rbCast':
          this.applyGossip(this.gossip.cast(o.req));
          break;
        case 'cabCast':
          this.applyPaxos(this.paxos.cast({ id: o.id, prevStrong: o.prevStrong }));
          break;
        case 'persist':
          this.effects.persist({ layer: 'core', record: o.record });
          break;
        case 'respond':
          this.effects.respond(o);
          break;
      }
    }
  }

  private applyGossip(outputs: GossipOutput[]): void {
    for (const o of outputs) {
      if (o.type === 'send') this.effects.send(o.to, { kind: 'gossip', msg: o.msg });
      else this.deliverReq(o.req);
    }
  }

  private deliverReq(req: Req): void {
    this.applyCore(this.replica.deliverReq(req));
  }

  private applyPaxos(outputs: PaxosOutput[]): void {
    let changed = false;
    for (const o of outputs) {
      if (o.type === 'send') this.effects.send(o.to, { kind: 'paxos', msg: o.msg });
      else if (o.type === 'persist') this.effects.persist({ layer: 'cab', record: o.record });
      else if (o.type === 'skip') {
        this.delivery.skipTo(o.below);
        changed = true;
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

  /** The host is idle: nothing tentative, nothing to deliver, no own strong op waiting for CAB. */
  settled(): boolean {
    const s = this.replica.stats();
    return (
      s.tentative === 0 &&
      s.unvalidated === 0 &&
      this.paxos.status().pendingCasts === 0 &&
      this.delivery.backlog() === 0
    );
  }
}
