/**
 * A small deterministic cluster of ReplicaHosts for tests of checkpoints, truncation and gossip
 * pruning, on the simulator's network, event queue and disk. Time moves in steps of `STEP_MS`. A
 * message to a peer arrives one, two or three steps after it is sent, each as likely (SimNetwork's
 * delay, drawn up to three steps, rounded up to a step), unless `isolated` or `dropIf` loses it; a
 * replica's message to itself, which SimNetwork hands over at once, arrives at the next step. Disk
 * writes are durable at once. Each replica's disk (a SimDisk) drops the records a checkpoint
 * supersedes, as the SQLite storage does; `log` keeps every record anyway, so a test can compare
 * recovery from a checkpoint with recovery from everything.
 */
import { defineApp } from '@creek/app';
import type { Response } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import type { HostOptions } from '@creek/replica/host/options.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { stepWithInstantDisk } from '@creek/replica/host/instant-disk.js';
import type { HostInput } from '@creek/replica/host/ready.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import { ReplicaHost } from '@creek/replica/host/replica-host.js';
import { SimDisk } from '../../src/sim/disk.js';
import { EventQueue } from '../../src/sim/event-queue.js';
import { SimNetwork, type Transmission } from '../../src/sim/network.js';
import { Prng } from '../../src/sim/prng.js';

export const app = defineApp({});
export const STEP_MS = 5;
const EPOCH_MS = 1_700_000_000_000;

class Node {
  host: ReplicaHost | null = null;
  /** Every record ever written, checkpoints included. */
  readonly log: HostRecord[] = [];
  private store = new SimDisk<HostRecord>();

  /** What a restart reads: the last checkpoint and the records after it. */
  get disk(): HostRecord[] {
    return this.store.read();
  }

  /** Replaces what is on the disk (a lost or restored data directory). */
  set disk(records: readonly HostRecord[]) {
    this.store = new SimDisk();
    for (const r of records) this.write(0, r);
  }

  /** Writes `r` at `now`, durable at once; a checkpoint supersedes what was written before it. */
  write(now: number, r: HostRecord): void {
    this.store.write(now, 0, r, r.layer === 'checkpoint');
  }
}

/** A message on its way: its own object, so an arrival names what it delivers. */
interface InFlight {
  readonly from: number;
  readonly to: number;
  readonly msg: PeerMessage;
}

export class HostCluster {
  readonly nodes: Node[] = [];
  readonly responses: Response[][] = [];
  now = 0;
  /** Message arrivals, each at the end of a step. */
  private readonly events = new EventQueue<() => void>();
  private readonly network: SimNetwork<InFlight>;
  /** Messages on their way, not lost in a crash. */
  private readonly pending = new Set<InFlight>();
  /** Replicas that stopped for good (Ready.halted), and why. */
  readonly halts: { replica: number; reason: string }[] = [];
  /** Messages for which this returns true are lost (on top of `isolated`). */
  dropIf: (from: number, to: number, msg: PeerMessage) => boolean = () => false;
  /** Replica ids cut off from every other replica. */
  readonly isolated = new Set<number>();
  /** The workload's choices (the network draws from a stream of its own). */
  private readonly prng: Prng;
  private tag = 1;

  constructor(
    readonly n: number,
    seed: number,
    private readonly options: Partial<HostOptions> = {},
  ) {
    this.prng = new Prng(seed);
    this.network = new SimNetwork<InFlight>(
      Prng.named(seed, 'network'),
      { minDelayMs: 0, maxDelayMs: 3 * STEP_MS, lossRate: 0, duplicateRate: 0, retransmitMs: 0 },
      // A message arrives at the end of the step its delay ends in, and never in the step it was
      // sent in: a delay drawn in [0, 3 steps) is one, two or three steps, each as likely.
      (at, run) =>
        this.events.push(Math.max(this.now + STEP_MS, Math.ceil(at / STEP_MS) * STEP_MS), run),
      (t) => this.arrive(t),
    );
    for (let i = 0; i < n; i++) {
      const node = new Node();
      this.nodes.push(node);
      this.responses.push([]);
      node.host = new ReplicaHost(this.hostOptions(i));
      this.apply(i, { kind: 'start' });
    }
  }

  hostOptions(id: number): HostOptions {
    return {
      id,
      replicas: Array.from({ length: this.n }, (_, i) => i),
      replica: { app, noopIntervalMs: 50 },
      executor: new InlineExecutor(app),
      ...this.options,
    };
  }

  host(i: number): ReplicaHost {
    const h = this.nodes[i]!.host;
    if (h === null) throw new Error(`replica ${i} is down`);
    return h;
  }

  physical(): number {
    return EPOCH_MS + this.now;
  }

  /**
   * One step of replica `i`'s host, and what its Ready asks for: its records are durable at once,
   * its messages go out and its responses are kept.
   */
  apply(i: number, input: HostInput): void {
    const node = this.nodes[i]!;
    const ready = stepWithInstantDisk(this.host(i), input);
    for (const r of ready.records) {
      node.log.push(r);
      node.write(this.now, r);
    }
    for (const o of ready.outputs)
      if (o.kind === 'send') {
        const m: InFlight = { from: i, to: o.to, msg: o.msg };
        this.pending.add(m);
        this.network.send(this.now, i, o.to, m, false);
      } else this.responses[i]!.push(o.response);
    if (ready.halted !== null) this.halts.push({ replica: i, reason: ready.halted });
  }

  /**
   * Invokes at replica `i` once it takes ops: a replica still learning from its peers (a new or
   * wiped one) answers clients `unavailable` and they try again, which the harness does by running
   * until it is done (at most 5 s).
   */
  invoke(i: number, op: string, args: unknown, strong = false): void {
    for (let t = 0; this.host(i).learningFromPeers; t += STEP_MS) {
      if (t > 5_000) throw new Error(`replica ${i} still learns from its peers after 5 s`);
      this.step();
    }
    this.apply(i, {
      kind: 'invoke',
      now: this.physical(),
      request: { op, args, strong, tag: this.tag++ },
    });
  }

  /** Advances time by one step: delivers what is due, then ticks every live replica. */
  step(): void {
    this.now += STEP_MS;
    // Arrivals due now, in the order they were sent (what arrives now sends for later steps).
    while ((this.events.peekTime() ?? Infinity) <= this.now) this.events.pop()!.event();
    for (const [i, node] of this.nodes.entries())
      if (node.host !== null) this.apply(i, { kind: 'tick', now: this.physical() });
  }

  /** A message arrives: lost if it was lost in a crash, either end is down, or it is cut off. */
  private arrive(t: Transmission<InFlight>): void {
    const m = t.msg;
    if (!this.pending.delete(m)) return;
    const to = this.nodes[m.to]!.host;
    if (to === null || this.nodes[m.from]!.host === null) return;
    if (m.from !== m.to && (this.isolated.has(m.from) || this.isolated.has(m.to))) return;
    if (this.dropIf(m.from, m.to, m.msg)) return;
    this.apply(m.to, { kind: 'receive', from: m.from, message: m.msg });
  }

  run(ms: number): void {
    for (let t = 0; t < ms; t += STEP_MS) this.step();
  }

  crash(i: number): void {
    this.nodes[i]!.host = null;
    for (const m of this.pending) if (m.from === i || m.to === i) this.pending.delete(m);
  }

  /** Crashes replica `i` and starts it again with an empty disk (its data directory lost). */
  wipe(i: number): void {
    this.crash(i);
    const node = this.nodes[i]!;
    node.disk = [];
    node.host = new ReplicaHost(this.hostOptions(i));
    this.apply(i, { kind: 'start' });
  }

  restart(i: number): void {
    const node = this.nodes[i]!;
    node.host = new ReplicaHost(this.hostOptions(i), {
      records: node.disk,
      nowMs: this.physical(),
    });
    this.apply(i, { kind: 'start' });
  }

  /** Runs until every replica is up, settled and agrees, or throws after `limitMs`. */
  settle(limitMs = 20_000): void {
    for (let t = 0; t < limitMs; t += STEP_MS) {
      this.step();
      if (this.converged()) return;
    }
    throw new Error(
      `not settled after ${limitMs} ms: ${JSON.stringify(
        this.nodes.map((x) => ({
          stats: x.host?.inspect().replica.stats(),
          settled: x.host?.settled(),
          gossip: x.host?.inspect().gossip.stats(),
        })),
      )}`,
    );
  }

  converged(): boolean {
    if (this.nodes.some((x) => x.host === null)) return false;
    const first = this.host(0);
    return this.nodes.every(
      (x) =>
        x.host!.settled() &&
        x.host!.inspect().replica.stats().committed === first.inspect().replica.stats().committed &&
        x.host!.inspect().replica.stateDigest() === first.inspect().replica.stateDigest(),
    );
  }

  /** `count` ops at random replicas not isolated (or at `at`): increments on `keys` keys, every `strongEvery`th strong. */
  workload(count: number, opts: { keys: number; strongEvery: number; at?: number[] }): void {
    const at = opts.at ?? Array.from({ length: this.n }, (_, i) => i);
    for (let k = 1; k <= count; k++) {
      const i = this.prng.pick(at.filter((r) => this.nodes[r]!.host !== null));
      const key = `k${this.prng.int(0, opts.keys - 1)}`;
      if (k % opts.strongEvery === 0) this.invoke(i, 'kv.put', { key, value: k }, true);
      else this.invoke(i, 'kv.increment', { key });
      if (k % 4 === 0) this.step();
    }
  }
}
