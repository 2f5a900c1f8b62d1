import { connect, type CreekClient } from '@creek/client';
import { argsFor, type WorkloadOps } from './workload-ops.js';

/**
 * What the workload panel asks for: ops per second in all, the share of them strong, keys, and
 * which ops.
 */
export interface WorkloadShape {
  readonly rate: number;
  readonly strong: number;
  readonly keys: number;
  readonly ops: WorkloadOps;
}

/** An answered op of the workload: when, how long it took, and whether it waited for consensus. */
export interface Answered {
  readonly at: number;
  readonly ms: number;
  /** Weak ops get a tentative answer; strong ones a stable one. */
  readonly level: 'tentative' | 'stable';
}

/**
 * One op's life as its client saw it: invoked, then its tentative view (strong ops get one from
 * the replica's speculative order first; weak ops' only answer is tentative), then its stable view
 * (strong ops), or a failure. Times in ms after the invocation; null until they come.
 */
export interface OpTimeline {
  /** How the list names it: the workload's sequence number, or the op's id in a simulated run. */
  readonly label: string;
  readonly replica: number;
  readonly op: string;
  readonly level: 'weak' | 'strong';
  tentativeMs: number | null;
  stableMs: number | null;
  failed: string | null;
}

/** How many recent ops the timeline keeps. */
const TIMELINES = 16;

/** Per replica: ops invoked there, answered, and strong ops still waiting for their stable view. */
export interface WorkloadCounts {
  invoked: number;
  answered: number;
  failed: number;
  waitingStrong: number;
}

/**
 * An open-loop load from the page, one client per replica, each held to its own replica (one URL:
 * it never moves), so that a replica cut off from the others keeps taking ops and shows what a
 * minority does: weak ops answered at once, strong ones waiting. Few keys mean contention, and
 * with it reorders and rollbacks.
 */
export class Workload {
  private readonly clients: CreekClient[];
  private timer: ReturnType<typeof setInterval> | null = null;
  private issued = 0;
  private startedAt = 0;
  readonly counts: WorkloadCounts[];
  /** Answers since the charts last took them (`takeAnswers`). */
  private answers: Answered[] = [];
  /** The most recent ops, newest last. */
  readonly recent: OpTimeline[] = [];

  /**
   * `auth`: where the clients get the user's token, when the replicas verify users' tokens (the
   * page's dev sign-in); null: anonymous.
   */
  constructor(
    urls: readonly string[],
    token: string | null,
    auth: (() => Promise<string>) | null = null,
  ) {
    this.clients = urls.map((u) =>
      connect({
        urls: [u],
        // Each client counts for its replica: it stays there, not moving to a nearer one.
        nearest: false,
        ...(token === null ? {} : { token }),
        ...(auth === null ? {} : { auth }),
      }),
    );
    this.counts = urls.map(() => ({ invoked: 0, answered: 0, failed: 0, waitingStrong: 0 }));
  }

  /** The ops the cluster's app offers, once a replica welcomed one of the clients. */
  operations(): readonly string[] | null {
    for (const c of this.clients) {
      const ops = c.operations();
      if (ops !== null) return ops;
    }
    return null;
  }

  get running(): boolean {
    return this.timer !== null;
  }

  start(shape: WorkloadShape): void {
    this.stop();
    this.issued = 0;
    this.startedAt = performance.now();
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - this.startedAt) / 1000) * shape.rate);
      for (; this.issued < due; this.issued++) this.one(shape);
    }, 20);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The answers since the last call, for the latency chart. */
  takeAnswers(): Answered[] {
    const out = this.answers;
    this.answers = [];
    return out;
  }

  close(): void {
    this.stop();
    for (const c of this.clients) c.close();
  }

  private one(shape: WorkloadShape): void {
    const i = this.issued % this.clients.length;
    const client = this.clients[i]!;
    const counts = this.counts[i]!;
    const k = Math.floor(Math.random() * shape.keys);
    const seq = this.issued;
    const ops = shape.ops;
    const name = (strong: boolean): string =>
      ops.kind === 'app' ? ops.op : strong ? 'kv.increment' : 'kv.put';
    const args = (strong: boolean): unknown =>
      ops.kind === 'app'
        ? argsFor(ops.template, `k${k}`, seq)
        : strong
          ? { key: `viz/${k}` }
          : { key: `viz/${k}`, value: seq };
    counts.invoked++;
    const sent = performance.now();
    const answered = (level: Answered['level']): void => {
      const at = performance.now();
      if (this.answers.length < 100_000) this.answers.push({ at, ms: at - sent, level });
    };
    const done = (): void => void counts.answered++;
    const failed = (): void => void counts.failed++;
    const strong = Math.random() < shape.strong;
    const line: OpTimeline = {
      label: `#${this.issued}`,
      replica: i,
      op: name(strong),
      level: strong ? 'strong' : 'weak',
      tentativeMs: null,
      stableMs: null,
      failed: null,
    };
    this.recent.push(line);
    if (this.recent.length > TIMELINES) this.recent.shift();
    const fail = (err: unknown): void => {
      line.failed = err instanceof Error ? err.message : String(err);
      failed();
    };
    if (strong) {
      counts.waitingStrong++;
      // Both views: the tentative one from the replica's speculative order, then the stable one.
      const c = client.invoke(name(true) as never, args(true) as never);
      c.setCallbacks({
        onUpdate: () => {
          line.tentativeMs ??= performance.now() - sent;
        },
      });
      c.then(
        () => {
          counts.waitingStrong--;
          line.stableMs = performance.now() - sent;
          answered('stable');
          done();
        },
        (err: unknown) => {
          counts.waitingStrong--;
          fail(err);
        },
      );
    } else
      client.invokeWeak(name(false) as never, args(false) as never).then(() => {
        line.tentativeMs = performance.now() - sent;
        answered('tentative');
        done();
      }, fail);
  }
}
