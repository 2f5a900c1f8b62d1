/**
 * A small deterministic cluster of MultiPaxos nodes for CAB tests, on the simulator's network,
 * event queue and disk.
 *
 * - One global FIFO message queue: the simulator's network (SimNetwork) with no delay, no loss and
 *   no duplicates, so each message is queued when it is sent, and its event queue, which runs
 *   messages in the order they were sent. Tests run it a message at a time (`step`), take
 *   messages off it (`take`) and read it (`queue`). A message is dropped at delivery time if the
 *   `drop` predicate says so, or if either end is down. A replica's messages to itself go through
 *   the queue too.
 * - Time advances only through `tick()`/`advance()`; nothing here reads a clock.
 * - Outputs are applied in order: a `persist` is written to the node's disk (a SimDisk whose writes
 *   are durable at once) before any later `send` of the same output list is queued.
 * - Each node has a ConditionalDelivery stream (wired as the driver does: `isOrdered`, `decide`,
 *   `skipTo`, `delivered(id)`, and `setDeliveredBelow` before each tick), delivering whenever
 *   `predicate` allows.
 * - `crash(i)` drops the node's volatile state and every undelivered message to or from it;
 *   `restart(i)` rebuilds it from its records (`new MultiPaxos(opts, { records })`) and its
 *   delivered ids (the commit records a real replica keeps).
 */
import { ConditionalDelivery } from '@creek/replica/cab/conditional-delivery.js';
import {
  isCast,
  type AcceptorRecord,
  type Batch,
  type CastId,
  type PaxosMessage,
} from '@creek/replica/cab/messages.js';
import { MultiPaxos, type PaxosOptions, type PaxosOutput } from '@creek/replica/cab/multi-paxos.js';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { ReconfigOutcome } from '@creek/replica/cab/configuration.js';
import { SimDisk } from '../../src/sim/disk.js';
import { EventQueue } from '../../src/sim/event-queue.js';
import { SimNetwork, type Transmission } from '../../src/sim/network.js';
import { Prng } from '../../src/sim/prng.js';

export interface Envelope {
  readonly from: number;
  readonly to: number;
  readonly msg: PaxosMessage;
}

export type DropRule = (from: number, to: number, msg: PaxosMessage) => boolean;

export interface Decision {
  readonly instance: number;
  readonly value: Batch;
  /** The node's incarnation (0 before its first restart). */
  readonly incarnation: number;
}

export interface ClusterOptions {
  readonly n: number;
  readonly paxos?: Partial<Omit<PaxosOptions, 'self' | 'replicas' | 'isOrdered'>>;
  /** Options of node `i` alone, over `paxos` (nodes given different settings). */
  readonly paxosOf?: (i: number) => Partial<Omit<PaxosOptions, 'self' | 'replicas' | 'isOrdered'>>;
  /** Wire each node's delivery stream into `isOrdered` (default true, as the real driver does). */
  readonly isOrdered?: boolean;
  /**
   * Model which Reqs each node holds (`hasReq`): an origin holds its casts, others get them only
   * through `giveReq`. Default false: every node holds every Req.
   */
  readonly reqs?: boolean;
  /**
   * Nodes start as a replica without a promise or vote on its disk does
   * (PaxosOptions.noDurableVotes): a node built from no such record, at the start, by `restart`
   * after it persisted none or by `wipe`, learns before it takes part. Default false: nodes take
   * part from the start.
   */
  readonly noDurableVotes?: boolean;
}

/** A canonical string for a batch, to compare decided values. */
export function batchKey(value: Batch): string {
  return `[${value
    .map((c) => (isCast(c) ? `${opKey(c.id)}<${c.prevStrong}` : `cfg:${c.reconfig.nonce}`))
    .join(',')}]`;
}

export const opId = (replica: number, eventNo: number): OpId => ({ replica, eventNo });

export class Cluster {
  readonly n: number;
  /** Every node's id, those that joined later (`join`) included. */
  readonly ids: number[];
  /** The genesis configuration's ids. */
  private readonly genesisIds: readonly number[];
  /** Nodes that joined (`join`): they start from a checkpoint's configurations, never rejoin as new. */
  private readonly joined = new Set<number>();
  now = 0;
  /** Checked when a message is about to be delivered. */
  drop: DropRule | null = null;
  /** The delivery predicate (`checkDep`): true unless a test holds some ids back. */
  predicate: (node: number, id: OpId) => boolean = () => true;
  /** Arrivals of the messages sent, in the order they were sent (no delay: all due at once). */
  private readonly events = new EventQueue<() => void>();
  /**
   * Every message is its own envelope, so an arrival names what it delivers. Nothing is lost,
   * delayed or duplicated: the network's random stream decides nothing.
   */
  private readonly network = new SimNetwork<Envelope>(
    new Prng(0),
    { minDelayMs: 0, maxDelayMs: 0, lossRate: 0, duplicateRate: 0, retransmitMs: 0 },
    (at, run) => this.events.push(at, run),
    (t) => this.arrive(t),
  );
  /** Messages queued and not yet delivered or taken, in the order they were sent. */
  private readonly pending = new Set<Envelope>();
  /** Messages taken off the queue to be delivered (or dropped) so far. */
  private arrivals = 0;
  readonly nodes: MultiPaxos[] = [];
  readonly delivery: ConditionalDelivery[] = [];
  readonly up: boolean[] = [];
  readonly incarnation: number[] = [];
  /** Each node's disk of acceptor records; `records` reads them. */
  private readonly disks: SimDisk<AcceptorRecord>[] = [];
  /** Every `decide` output, per node, across incarnations. */
  readonly decisions: Decision[][] = [];
  /** Every `skip` output, per node. */
  /** With `reqs`: per node, how many times its Paxos asked what a cast lacks (its work). */
  readonly lackChecks: number[] = [];
  readonly skips: number[][] = [];
  /** Ids delivered by the stream, per node, across incarnations (durable, like commit records). */
  readonly deliveredIds: OpId[][] = [];
  /** Every message delivered, in order (a trace for assertions). */
  readonly trace: Envelope[] = [];
  /** Every id cast anywhere, by key. */
  readonly casts = new Map<string, CastId>();
  /** With `reqs`: per node, the op keys whose Reqs it holds. */
  readonly held: Set<string>[] = [];
  /** With `reqs`: per node, every id it asked for (`want`). */
  readonly wanted: OpId[][] = [];
  /** Per node, the reason of its `lostState` output, if it made one. */
  readonly lostState: (string | null)[] = [];
  /** Per node, every membership change it saw decided, in order. */
  readonly configs: ReconfigOutcome[][] = [];
  /** Per node, the read index each of its reads got (MultiPaxos.requestRead), by key. */
  readonly readIndexes: Map<number, number>[] = [];
  private readonly lastStrong: number[] = [];
  private readonly nextEvent: number[] = [];
  private readonly options: ClusterOptions;

  constructor(options: ClusterOptions) {
    this.options = options;
    this.n = options.n;
    this.ids = Array.from({ length: options.n }, (_, i) => i);
    this.genesisIds = [...this.ids];
    for (const i of this.ids) this.addSlot(i, this.build(i));
  }

  private addSlot(i: number, node: MultiPaxos | null, delivery = new ConditionalDelivery()): void {
    {
      this.up.push(true);
      this.incarnation.push(0);
      this.disks.push(new SimDisk());
      this.decisions.push([]);
      this.skips.push([]);
      this.deliveredIds.push([]);
      this.lastStrong.push(0);
      this.nextEvent.push(0);
      this.delivery.push(delivery);
      this.held.push(new Set());
      this.wanted.push([]);
      this.lackChecks.push(0);
      this.lostState.push(null);
      this.configs.push([]);
      this.readIndexes.push(new Map());
      if (node !== null) this.nodes.push(node);
    }
  }

  /**
   * A new node `ids.length` starts, as a replica added to the cluster does once it installed a
   * checkpoint of node `from`: the configurations `from` knows and its truncation point, no vote
   * (it rejoins first: noDurableVotes). Returns its id.
   */
  join(from: number): number {
    const id = this.ids.length;
    const src = this.nodes[from]!;
    const below = src.status().truncatedBelow;
    const records: AcceptorRecord[] = [
      ...src.membership().entries.map((entry) => ({ kind: 'config' as const, entry })),
      ...(below > 0 ? [{ kind: 'truncate' as const, below }] : []),
    ];
    this.ids.push(id);
    this.joined.add(id);
    this.addSlot(id, null, new ConditionalDelivery(below, []));
    for (const r of records) this.disks[id]!.write(this.now, 0, r);
    this.nodes.push(
      new MultiPaxos({ ...this.paxosOptions(id), noDurableVotes: true }, { records }),
    );
    return id;
  }

  paxosOptions(i: number): PaxosOptions {
    const d = (): ConditionalDelivery => this.delivery[i]!;
    return {
      self: i,
      replicas: this.genesisIds,
      ...this.options.paxos,
      ...this.options.paxosOf?.(i),
      ...(this.options.isOrdered === false ? {} : { isOrdered: (id: OpId) => d().hasOrdered(id) }),
      ...(this.options.reqs === true
        ? {
            missing: (id: OpId) => {
              this.lackChecks[i]!++;
              return this.held[i]!.has(opKey(id)) ? [] : [id];
            },
          }
        : {}),
    };
  }

  private build(i: number, records?: readonly AcceptorRecord[]): MultiPaxos {
    const opts = {
      ...this.paxosOptions(i),
      noDurableVotes:
        (this.options.noDurableVotes === true || this.joined.has(i)) &&
        !(records ?? []).some((r) => r.kind === 'promise' || r.kind === 'accept'),
    };
    return records === undefined ? new MultiPaxos(opts) : new MultiPaxos(opts, { records });
  }

  node(i: number): MultiPaxos {
    return this.nodes[i]!;
  }

  /** Durable acceptor records, per node, in the order they were persisted. */
  get records(): readonly AcceptorRecord[][] {
    return this.disks.map((d) => d.read());
  }

  /** Messages sent and not yet delivered, in the order they were sent (head first). */
  get queue(): readonly Envelope[] {
    return [...this.pending];
  }

  // ------------------------------------------------------------------ inputs

  /** A new strong op at `origin`, chained after the origin's previous one, CAB-cast there. */
  cast(origin: number): CastId {
    const eventNo = ++this.nextEvent[origin]!;
    const c: CastId = { id: opId(origin, eventNo), prevStrong: this.lastStrong[origin]! };
    this.lastStrong[origin] = eventNo;
    this.castRaw(origin, c);
    return c;
  }

  castRaw(at: number, c: CastId): void {
    this.casts.set(opKey(c.id), c);
    this.held[at]!.add(opKey(c.id));
    if (this.up[at]) this.apply(at, this.nodes[at]!.cast(c));
  }

  /** With `reqs`: node `i` now holds the Req of `id` (gossip delivered it). */
  giveReq(i: number, id: OpId): void {
    this.held[i]!.add(opKey(id));
    if (this.up[i]) this.apply(i, this.nodes[i]!.reqsArrived([id]));
  }

  /** With `reqs`: node `i` holds the Req of `id` now, and nobody tells its Paxos (a missed path). */
  holdQuietly(i: number, id: OpId): void {
    this.held[i]!.add(opKey(id));
  }

  /** Hands `msg` to node `to` as if `from` sent it, applying the outputs. */
  inject(from: number, to: number, msg: PaxosMessage): PaxosOutput[] {
    const out = this.nodes[to]!.receive(from, msg);
    this.apply(to, out);
    return out;
  }

  /**
   * Ticks the given nodes (every node that is up by default) at the current time. As the driver
   * does, each first reports how far its stream delivered (its commit records are durable at once
   * here), so the heartbeat of this tick carries it.
   */
  tick(which: readonly number[] = this.ids): void {
    for (const i of which) {
      if (!this.up[i]) continue;
      this.nodes[i]!.setDeliveredBelow(this.delivery[i]!.deliveredBelow());
      this.apply(i, this.nodes[i]!.tick(this.now));
    }
  }

  /** Moves time on by `ms` in steps of `stepMs`: each step ticks every node, then runs the queue. */
  advance(ms: number, stepMs = 1): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now = Math.min(end, this.now + stepMs);
      this.tick();
      this.flush();
    }
  }

  /** Like `advance`, but stops early once `done()` holds; returns whether it did. */
  advanceUntil(done: () => boolean, limitMs: number, stepMs = 1): boolean {
    const end = this.now + limitMs;
    while (!done()) {
      if (this.now >= end) return false;
      this.now = Math.min(end, this.now + stepMs);
      this.tick();
      this.flush();
    }
    return true;
  }

  // ------------------------------------------------------------------ network

  /** Delivers the message at the head of the queue (or drops it); false if the queue is empty. */
  step(): boolean {
    while (this.pending.size > 0) {
      const arrivals = this.arrivals;
      // The network's arrival of the oldest message sent: `arrive`, unless it was taken.
      this.events.pop()!.event();
      if (this.arrivals > arrivals) return true;
    }
    return false;
  }

  private arrive(t: Transmission<Envelope>): void {
    const e = t.msg;
    if (!this.pending.delete(e)) return; // taken off the queue (`take`, `crash`)
    this.arrivals++;
    if (!this.up[e.to] || !this.up[e.from]) return;
    if (this.drop !== null && this.drop(e.from, e.to, e.msg)) return;
    this.trace.push(e);
    this.apply(e.to, this.nodes[e.to]!.receive(e.from, e.msg));
  }

  /** Runs the queue until it is empty; returns how many messages were taken off it. */
  flush(limit = 1_000_000): number {
    let k = 0;
    while (k < limit && this.step()) k++;
    if (k >= limit) throw new Error('flush: message storm');
    return k;
  }

  /** Removes queued messages matching `pred` without delivering them; returns them. */
  take(pred: (e: Envelope) => boolean): Envelope[] {
    const taken = [...this.pending].filter(pred);
    for (const e of taken) this.pending.delete(e);
    return taken;
  }

  // ------------------------------------------------------------------ faults

  /** Loses the node's volatile state and every undelivered message to or from it. */
  crash(i: number): void {
    this.up[i] = false;
    this.take((e) => e.from === i || e.to === i);
  }

  /** Rebuilds the node from its durable records and delivered ids. */
  restart(i: number): void {
    const records = this.disks[i]!.read();
    const truncatedBelow = records.reduce(
      (m, r) => (r.kind === 'truncate' ? Math.max(m, r.below) : m),
      0,
    );
    this.incarnation[i]!++;
    this.delivery[i] = new ConditionalDelivery(truncatedBelow, this.deliveredIds[i]!);
    this.nodes[i] = this.build(i, records);
    this.up[i] = true;
  }

  /**
   * The node's disk is lost: it restarts with no records, no delivered ids and no Reqs, as a
   * replica that started empty (`noDurableVotes` must be set for the cluster).
   */
  wipe(i: number): void {
    if (this.options.noDurableVotes !== true) throw new Error('wipe: set noDurableVotes');
    this.up[i] = false;
    this.take((e) => e.from === i || e.to === i);
    this.disks[i] = new SimDisk();
    this.deliveredIds[i] = [];
    this.held[i]!.clear();
    this.restart(i);
  }

  // ------------------------------------------------------------------ outputs

  apply(i: number, outputs: readonly PaxosOutput[]): void {
    let decided = false;
    for (const o of outputs) {
      switch (o.type) {
        case 'send': {
          const e: Envelope = { from: i, to: o.to, msg: o.msg };
          this.pending.add(e);
          this.network.send(this.now, i, o.to, e, false);
          break;
        }
        case 'persist':
          this.disks[i]!.write(this.now, 0, o.record);
          break;
        case 'decide':
          this.decisions[i]!.push({
            instance: o.instance,
            value: o.value,
            incarnation: this.incarnation[i]!,
          });
          this.delivery[i]!.decide(o.instance, o.value);
          decided = true;
          break;
        case 'skip':
          this.skips[i]!.push(o.below);
          this.delivery[i]!.skipTo(o.below);
          decided = true;
          break;
        case 'want':
          this.wanted[i]!.push(...o.ids);
          break;
        case 'lostState':
          this.lostState[i] = o.reason;
          break;
        case 'config':
          this.configs[i]!.push(o.outcome);
          break;
        case 'readIndex':
          this.readIndexes[i]!.set(o.key, o.index);
          break;
      }
    }
    if (decided) this.drain(i);
  }

  /** Delivers what the node's stream lets through. */
  drain(i: number): void {
    const d = this.delivery[i]!;
    for (;;) {
      const id = d.next((x) => this.predicate(i, x));
      if (id === null) return;
      d.markDelivered(id);
      this.deliveredIds[i]!.push(id);
      this.nodes[i]!.delivered(id);
    }
  }

  // ------------------------------------------------------------------ inspection

  leaders(): number[] {
    return this.ids.filter((i) => this.up[i] && this.nodes[i]!.status().role === 'leader');
  }

  /** The value node `i` decided for `instance` (any incarnation), or undefined. */
  decidedAt(i: number, instance: number): Batch | undefined {
    return this.decisions[i]!.find((d) => d.instance === instance)?.value;
  }

  /** instance -> the distinct values decided for it anywhere; agreement means one each. */
  decidedValues(): Map<number, Set<string>> {
    const m = new Map<number, Set<string>>();
    for (const log of this.decisions) {
      for (const d of log) {
        let s = m.get(d.instance);
        if (s === undefined) m.set(d.instance, (s = new Set()));
        s.add(batchKey(d.value));
      }
    }
    return m;
  }

  /** Instances decided with two different values anywhere (must be empty). */
  conflicts(): { instance: number; values: string[] }[] {
    const out: { instance: number; values: string[] }[] = [];
    for (const [instance, s] of this.decidedValues())
      if (s.size > 1) out.push({ instance, values: [...s] });
    return out;
  }

  /** Instances a node decided twice within one incarnation (must be empty). */
  duplicateDecides(): { node: number; instance: number }[] {
    const out: { node: number; instance: number }[] = [];
    for (const i of this.ids) {
      const seen = new Set<string>();
      for (const d of this.decisions[i]!) {
        const k = `${d.incarnation}:${d.instance}`;
        if (seen.has(k)) out.push({ node: i, instance: d.instance });
        seen.add(k);
      }
    }
    return out;
  }

  /** The keys of the ids node `i` delivered, in order. */
  deliveredKeys(i: number): string[] {
    return this.deliveredIds[i]!.map(opKey);
  }
}
