import { InlineExecutor, type App, type Response } from '@creek/replica';
import {
  ReplicaHost,
  stepWithInstantDisk,
  type HostInput,
  type PeerMessage,
} from '@creek/replica/host';

/** Who waits for an op's responses at an in-memory replica. */
export interface ResponseHandler {
  /** Each response of the replica: tentative, stable, failed. */
  response(r: Response): void;
  /** The cluster was closed before the op was done: no more responses will come. */
  closed(): void;
  /**
   * The op has its place in the committed order of the replica it was invoked at (a read that is
   * never ordered: at its answer). Called once, after its responses that precede it.
   */
  committed?(): void;
}

export interface MemoryClusterOptions<A> {
  /** The app every replica runs (`defineApp(...)`). */
  readonly app: A;
  readonly replicas?: number;
  /**
   * One-way delay of every message between replicas, in ms (0: next turn of the event loop), or a
   * function giving each message's delay (`@creek/client/testing` draws them from a seed).
   */
  readonly delayMs?: number | ((from: number, to: number) => number);
  /**
   * Per replica, how far its clock is ahead (ms; negative: behind): clocks that disagree make
   * replicas order concurrent ops otherwise than they were invoked, so tentative answers get
   * corrected. Default: none.
   */
  readonly clockSkewMs?: readonly number[];
}

/**
 * A whole Creek cluster inside one process — the same replica hosts (core, gossip, Multi-Paxos) as
 * real replicas, with messages passed through timers and no disk. For application tests and demos
 * without a server; `isolate` and `heal` show what a partition does to tentative and stable views.
 */
export class MemoryCluster {
  readonly hosts: ReplicaHost[];
  private readonly waiting = new Map<number, ResponseHandler>();
  /** Per replica, the ops answered tentatively whose commit a handler waits for, by op id. */
  private readonly awaitingCommit: Map<string, ResponseHandler>[];
  private readonly isolated = new Set<number>();
  private readonly ticker: ReturnType<typeof setInterval>;
  private readonly delayMs: (from: number, to: number) => number;
  private readonly skewMs: readonly number[];
  private nextTag = 1;
  private closed = false;

  constructor(options: MemoryClusterOptions<unknown>) {
    const n = options.replicas ?? 3;
    if (!Number.isInteger(n) || n < 1) throw new RangeError('replicas must be a positive integer');
    const delay = options.delayMs ?? 0;
    this.delayMs = typeof delay === 'function' ? delay : () => delay;
    const skew = options.clockSkewMs ?? [];
    if (skew.length > n || skew.some((ms) => !Number.isFinite(ms)))
      throw new RangeError('clockSkewMs: a finite number of ms per replica, at most one each');
    this.skewMs = skew;
    const app = options.app as App;
    const ids = Array.from({ length: n }, (_, i) => i);
    this.awaitingCommit = ids.map(() => new Map());
    const executor = new InlineExecutor(app);
    // Replicas of a cluster that exists only here are new: each numbers its ops under its id from
    // the start (no disk was ever lost).
    this.hosts = ids.map(
      (id) =>
        new ReplicaHost({
          id,
          replicas: ids,
          replica: { app, noopIntervalMs: 50 },
          executor,
          origin: id,
        }),
    );
    for (const id of ids) this.step(id, { kind: 'start' });
    this.ticker = setInterval(() => {
      for (const id of ids) this.step(id, { kind: 'tick', now: this.clock(id) });
    }, 5);
    this.keepAlive();
  }

  /**
   * Invokes at one replica; `handler` gets each of its responses, or hears that the cluster was
   * closed (at once, if it is). Returns a function to call once the op is done or abandoned.
   */
  invoke(
    replica: number,
    op: string,
    args: unknown,
    strong: boolean,
    handler: ResponseHandler,
  ): () => void {
    const host = this.hosts[replica];
    if (host === undefined)
      throw new RangeError(`no replica ${replica} in a cluster of ${this.hosts.length}`);
    if (this.closed) {
      handler.closed();
      return () => undefined;
    }
    const tag = this.nextTag++;
    this.waiting.set(tag, handler);
    this.keepAlive();
    this.step(replica, {
      kind: 'invoke',
      now: this.clock(replica),
      request: { op, args, strong, tag },
    });
    return () => {
      this.waiting.delete(tag);
      this.keepAlive();
    };
  }

  /**
   * One step of replica `id`, with no disk: its records count as durable at once; a commit record
   * tells the handlers waiting for those ops that they are committed.
   */
  private step(id: number, input: HostInput): void {
    const ready = stepWithInstantDisk(this.hosts[id]!, input);
    for (const record of ready.records) {
      if (record.layer !== 'core' || record.record.kind !== 'commit') continue;
      const awaiting = this.awaitingCommit[id]!;
      for (const op of record.record.ids) {
        const key = `${op.replica}#${op.eventNo}`;
        awaiting.get(key)?.committed?.();
        awaiting.delete(key);
      }
    }
    for (const o of ready.outputs)
      if (o.kind === 'send') this.send(id, o.to, o.msg);
      else this.respond(id, o.response);
    // Only a replica that lost durable state halts; these never restart.
    if (ready.halted !== null) throw new Error(ready.halted);
  }

  /**
   * Hands a response to whoever waits for it; an op answered tentatively with its id waits for
   * the replica's commit of it, a stable answer is the commit, and an op never ordered is done.
   */
  private respond(replica: number, r: Response): void {
    const handler = this.waiting.get(r.tag);
    if (handler === undefined) return;
    handler.response(r);
    if (r.level === 'failed') return;
    if (r.level === 'stable' || r.id === null) handler.committed?.();
    else this.awaitingCommit[replica]!.set(`${r.id.replica}#${r.id.eventNo}`, handler);
  }

  /** Replica `id`'s clock: this process's, moved by its skew. */
  private clock(id: number): number {
    return Date.now() + (this.skewMs[id] ?? 0);
  }

  /** Cuts a replica off from the others (both ways) until `heal`. */
  isolate(replica: number): void {
    this.isolated.add(replica);
  }

  heal(): void {
    this.isolated.clear();
  }

  /** Stops the replicas; ops still waiting hear of it (their Correctables end in an error). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ticker);
    const waiting = new Set([
      ...this.waiting.values(),
      ...this.awaitingCommit.flatMap((m) => [...m.values()]),
    ]);
    this.waiting.clear();
    for (const m of this.awaitingCommit) m.clear();
    for (const h of waiting) h.closed();
  }

  /**
   * The replicas' clock (Paxos rounds, no-ops) keeps the process alive while an op waits for a
   * response, as a socket would: a script that awaits one must not see Node exit under it with
   * "unsettled top-level await" (exit code 13). Idle, it lets the process end.
   */
  private keepAlive(): void {
    const t = this.ticker as { ref?: () => void; unref?: () => void };
    if (this.waiting.size > 0) t.ref?.();
    else t.unref?.();
  }

  private send(from: number, to: number, msg: PeerMessage): void {
    if (this.closed) return;
    if (from !== to && (this.isolated.has(from) || this.isolated.has(to))) return;
    setTimeout(
      () => {
        if (!this.closed) this.step(to, { kind: 'receive', from, message: msg });
      },
      from === to ? 0 : Math.max(0, this.delayMs(from, to)),
    );
  }
}
