/**
 * A small deterministic network for gossip tests, on the simulator's pieces: a seeded PRNG, its
 * event queue of ticks and message arrivals, and its network (SimNetwork), whose links delay (and
 * so reorder), lose and duplicate messages and are cut by partitions that heal; nodes crash and
 * restart from a subset of their Reqs. Every message is sent once, never retransmitted: recovering
 * from loss is the gossip layer's job (Creek §3.2).
 */
import type { OpId } from '@creek/replica/core/op-id.js';
import { opKey } from '@creek/replica/core/op-id.js';
import type { Req } from '@creek/replica/core/types.js';
import { Gossip, type GossipOptions } from '@creek/replica/gossip/gossip.js';
import { seenDots, type GossipMessage, type GossipOutput } from '@creek/replica/gossip/messages.js';
import { EventQueue } from '../../src/sim/event-queue.js';
import { SimNetwork, type Transmission } from '../../src/sim/network.js';
import { Prng } from '../../src/sim/prng.js';

export function mkReq(replica: number, eventNo: number, ts = eventNo): Req {
  return {
    ts,
    id: { replica, eventNo },
    op: 'kv.put',
    args: { key: 'k', value: 1 },
    strong: false,
    causalCtx: null,
  };
}

export interface NetConfig {
  readonly n: number;
  readonly seed: number;
  readonly lossRate?: number;
  readonly duplicateRate?: number;
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /** How often each node's `tick` runs. */
  readonly tickMs?: number;
  readonly gossip?: Partial<Omit<GossipOptions, 'self' | 'peers'>>;
}

interface NodeState {
  gossip: Gossip;
  up: boolean;
  incarnation: number;
  /** Reqs this incarnation has without a deliver: own casts and recovered ones. */
  readonly local: Map<string, Req>;
  /** Deliveries this incarnation: id -> count. */
  readonly delivered: Map<string, number>;
  /** Deliveries this incarnation, in order. */
  readonly log: string[];
  /** Deliver outputs of the node's own casts in this incarnation (must stay 0). */
  ownDelivered: number;
  /** Every Req this node ever cast, across incarnations. */
  readonly cast: Req[];
}

export class Net {
  readonly n: number;
  now = 0;
  /** The run's one random stream: the network's draws and the tests' own. */
  readonly prng: Prng;
  /** Ticks and message arrivals, earliest first. */
  private readonly queue = new EventQueue<() => void>();
  private readonly network: SimNetwork<GossipMessage>;
  private readonly nodes: NodeState[] = [];
  private readonly tickMs: number;
  private readonly gossipOptions: Partial<Omit<GossipOptions, 'self' | 'peers'>>;
  /** Every Req cast anywhere, by key. */
  readonly allCast = new Map<string, Req>();
  /** Messages that reached their node, first copies and duplicates, to nodes up or down. */
  private arrivals = 0;
  private summaries = 0;
  private maxSummaryDots = 0;
  /** Largest `push` message (number of Reqs) seen on the wire. */
  maxPushSize = 0;

  constructor(config: NetConfig) {
    this.n = config.n;
    this.prng = new Prng(config.seed);
    this.network = new SimNetwork<GossipMessage>(
      this.prng,
      {
        minDelayMs: config.minDelayMs ?? 1,
        maxDelayMs: config.maxDelayMs ?? 10,
        lossRate: config.lossRate ?? 0,
        duplicateRate: config.duplicateRate ?? 0,
        retransmitMs: 0, // never used: every message is sent unreliably (once)
      },
      (at, run) => this.queue.push(at, run),
      (t) => this.arrive(t),
    );
    this.tickMs = config.tickMs ?? 10;
    this.gossipOptions = config.gossip ?? {};
    for (let i = 0; i < this.n; i++) {
      this.nodes.push({
        gossip: this.newGossip(i),
        up: true,
        incarnation: 0,
        local: new Map(),
        delivered: new Map(),
        log: [],
        ownDelivered: 0,
        cast: [],
      });
      // Stagger the first ticks so nodes do not run their rounds in lockstep.
      this.scheduleTick(this.prng.float(0, this.tickMs), i, 0);
    }
  }

  /**
   * What went over the wire: messages sent, lost (on a cut link or drawn lost) and duplicated
   * (second copies that arrived), and the summaries among them.
   */
  get counters(): {
    sent: number;
    lost: number;
    duplicated: number;
    summaries: number;
    maxSummaryDots: number;
  } {
    return {
      sent: this.network.sent,
      lost: this.network.lost,
      // The network counts first copies only as delivered; every other arrival is a duplicate.
      duplicated: this.arrivals - this.network.delivered,
      summaries: this.summaries,
      maxSummaryDots: this.maxSummaryDots,
    };
  }

  gossip(node: number): Gossip {
    return this.nodes[node]!.gossip;
  }

  private newGossip(self: number): Gossip {
    const peers = Array.from({ length: this.n }, (_, i) => i);
    return new Gossip({ ...this.gossipOptions, self, peers });
  }

  /** Node `node` creates a Req (the next event number of its origin) and RB-casts it. */
  cast(node: number, req?: Req): Req {
    const st = this.nodes[node]!;
    if (!st.up) throw new Error(`node ${node} is down`);
    const r = req ?? mkReq(node, st.cast.length + 1, this.now);
    st.cast.push(r);
    st.local.set(opKey(r.id), r);
    this.allCast.set(opKey(r.id), r);
    this.handle(node, st.gossip.cast(r));
    return r;
  }

  want(node: number, ids: OpId[]): void {
    this.handle(node, this.nodes[node]!.gossip.want(ids));
  }

  /** Cuts every link between nodes of different groups, both ways, until `heal`. */
  partition(groups: readonly (readonly number[])[]): void {
    this.network.partition(groups);
  }

  heal(): void {
    this.network.heal();
  }

  /** The node stops: its in-memory state is gone, messages to it are lost, it does not tick. */
  crash(node: number): void {
    const st = this.nodes[node]!;
    st.up = false;
    st.incarnation++;
  }

  /** A new Gossip for `node`, rebuilt with `recover(keep)`; keep must be Reqs the node had. */
  restart(node: number, keep: readonly Req[]): void {
    const st = this.nodes[node]!;
    if (st.up) this.crash(node);
    st.gossip = this.newGossip(node);
    st.gossip.recover(keep);
    st.local.clear();
    st.delivered.clear();
    st.log.length = 0;
    st.ownDelivered = 0;
    for (const r of keep) st.local.set(opKey(r.id), r);
    st.up = true;
    this.scheduleTick(this.now + this.prng.float(0, this.tickMs), node, st.incarnation);
  }

  /** The Reqs node `node` has now (own casts and recovered, plus delivered). */
  reqsAt(node: number): Req[] {
    const st = this.nodes[node]!;
    const out = [...st.local.values()];
    for (const key of st.delivered.keys()) out.push(this.allCast.get(key)!);
    return out;
  }

  deliveries(node: number): ReadonlyMap<string, number> {
    return this.nodes[node]!.delivered;
  }

  /** The ids delivered at `node` this incarnation, in delivery order. */
  deliveryLog(node: number): readonly string[] {
    return this.nodes[node]!.log;
  }

  /** True when every up node has every Req cast anywhere. */
  converged(): boolean {
    for (const st of this.nodes) {
      if (!st.up) continue;
      for (const key of this.allCast.keys())
        if (!st.local.has(key) && !st.delivered.has(key)) return false;
    }
    return true;
  }

  /**
   * Agreement and integrity: every up node has every cast Req exactly once (delivered once, or
   * local), never has a delivery of a Req it already had locally, and nothing that was never cast.
   * Returns the problems found (empty when fine).
   */
  problems(): string[] {
    const out: string[] = [];
    this.nodes.forEach((st, i) => {
      if (!st.up) return;
      if (st.ownDelivered > 0) out.push(`node ${i} delivered ${st.ownDelivered} of its own casts`);
      for (const [key, count] of st.delivered) {
        if (count !== 1) out.push(`node ${i} delivered ${key} ${count} times`);
        if (st.local.has(key)) out.push(`node ${i} delivered ${key} it already had`);
        if (!this.allCast.has(key)) out.push(`node ${i} delivered ${key}, never cast`);
      }
      for (const key of this.allCast.keys())
        if (!st.local.has(key) && !st.delivered.has(key)) out.push(`node ${i} lacks ${key}`);
    });
    return out;
  }

  /** Runs events up to time `t`. */
  runUntil(t: number): void {
    for (;;) {
      const at = this.queue.peekTime();
      if (at === undefined || at > t) break;
      const { event } = this.queue.pop()!;
      this.now = at;
      event();
    }
    this.now = t;
  }

  runFor(ms: number): void {
    this.runUntil(this.now + ms);
  }

  /** Runs until every up node has every Req, or `limitMs` passes; returns whether it converged. */
  runUntilConverged(limitMs: number): boolean {
    const deadline = this.now + limitMs;
    while (this.now < deadline) {
      if (this.converged()) return true;
      this.runUntil(Math.min(deadline, this.now + this.tickMs));
    }
    return this.converged();
  }

  /** Node `node` ticks at `at`, and every `tickMs` after, while its incarnation lasts. */
  private scheduleTick(at: number, node: number, incarnation: number): void {
    this.queue.push(at, () => {
      const st = this.nodes[node]!;
      if (!st.up || st.incarnation !== incarnation) return;
      this.handle(node, st.gossip.tick(this.now));
      this.scheduleTick(this.now + this.tickMs, node, incarnation);
    });
  }

  /** A message reached its node: a node that is down loses it. */
  private arrive(t: Transmission<GossipMessage>): void {
    this.arrivals++;
    const st = this.nodes[t.to]!;
    if (!st.up) return;
    this.handle(t.to, st.gossip.receive(t.from, t.msg));
  }

  private handle(node: number, outputs: readonly GossipOutput[]): void {
    const st = this.nodes[node]!;
    for (const o of outputs) {
      if (o.type === 'deliver') {
        const key = opKey(o.req.id);
        if (st.local.has(key)) st.ownDelivered += o.req.id.replica === node ? 1 : 0;
        st.delivered.set(key, (st.delivered.get(key) ?? 0) + 1);
        st.log.push(key);
      } else if (o.type === 'send') {
        this.transmit(node, o.to, o.msg);
      } else {
        throw new Error(`replica ${node}: peer ${o.from} has its unknown op ${opKey(o.id)}`);
      }
    }
  }

  private transmit(from: number, to: number, msg: GossipMessage): void {
    if (msg.kind === 'summary') {
      this.summaries++;
      this.maxSummaryDots = Math.max(this.maxSummaryDots, seenDots(msg.seen));
    } else if (msg.kind === 'push') {
      this.maxPushSize = Math.max(this.maxPushSize, msg.reqs.length);
    }
    this.network.send(this.now, from, to, msg, false);
  }
}
