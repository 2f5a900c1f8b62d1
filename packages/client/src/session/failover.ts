import { Unavailable } from '../errors.js';
import type { ReplicaUrls } from '@creek/protocol';
import { KnownReplicas } from './known-replicas.js';

/** How long the client keeps trying to reach a replica by default (`connectTimeoutMs`). */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** How long a replica may be useless before the client leaves it, by default (`stallTimeoutMs`). */
const DEFAULT_STALL_TIMEOUT_MS = 3_000;
/** The first wait before trying the next replica, doubled on each failure up to the last. */
const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 1_000;
/** How often a session measures its replicas again (one that came back may be the nearest). */
export const PROBE_EVERY_MS = 30_000;

/**
 * Which replica the session talks to, and when it gives up on one: the replicas it knows
 * (KnownReplicas: the URLs it was given and those the cluster lists) are tried in order of
 * distance, with a wait between attempts that doubles up to a second; each URL's last problem is
 * kept for the error that ends the attempts; a replica that stops being useful is left (the stall
 * deadlines). Pure: time comes in as `now`.
 */
export class Failover {
  /** The URL of the current connection (or the next one). */
  private current: string;
  readonly known: KnownReplicas;
  /** Per URL, why the last attempt to use it failed: the Unavailable error after a timeout says. */
  private readonly problems = new Map<string, string>();
  private failingSince: number | null = null;
  private backoffMs = FIRST_BACKOFF_MS;
  /** When the members were last measured. */
  private probedAt = Number.NEGATIVE_INFINITY;
  /** How long to keep trying to reach a replica before ops fail with Unavailable. */
  readonly connectTimeoutMs: number;
  /** The stall deadline asked for (or the default); 0: turned off. */
  private readonly stallMs: number;

  constructor(
    urls: readonly string[],
    connectTimeoutMs: number | undefined,
    stallTimeoutMs: number | undefined,
    /** Learn the cluster's replicas from the one reached (`discover`). */
    private readonly discover: boolean,
    /** Measure the replicas known and use the nearest (`nearest`). */
    private readonly nearest: boolean,
  ) {
    this.known = new KnownReplicas(urls);
    this.current = urls[0]!;
    this.connectTimeoutMs = connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.stallMs = stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  }

  /** How long a replica may be useless before it is left; 0: never (one URL, or turned off). */
  get stallTimeoutMs(): number {
    return this.several ? this.stallMs : 0;
  }

  /** The URL to connect to now. */
  get url(): string {
    return this.current;
  }

  /** There is another replica to try (given, or learnt from the cluster). */
  get several(): boolean {
    return this.known.ranked().length > 1;
  }

  /**
   * How often to check for a stalled replica, or null when the deadlines are off. With one URL
   * the checks find nothing until the cluster lists more replicas; they are cheap.
   */
  get stallCheckEveryMs(): number | null {
    return this.stallMs > 0 ? Math.max(50, Math.min(1_000, this.stallMs / 4)) : null;
  }

  /**
   * A replica listed the cluster's members (its welcome, or a change): with `discover`, they are
   * known from now on, tried in order of distance. Returns the URLs to measure now (all of them,
   * when the list is new).
   */
  learn(members: ReplicaUrls, now: number): readonly string[] {
    if (!this.discover || !this.known.learn(members)) return [];
    this.probedAt = Number.NEGATIVE_INFINITY;
    return this.probesDue(now);
  }

  /**
   * The replicas to measure now: every one known (given or learnt), at the first welcome and every
   * PROBE_EVERY_MS after; none while only one is known, or with `nearest` off.
   */
  probesDue(now: number): readonly string[] {
    if (!this.nearest || now - this.probedAt < PROBE_EVERY_MS || !this.several) return [];
    this.probedAt = now;
    return this.known.ranked();
  }

  /** The next connection goes to `url` (a nearer replica, or a member replacing this one). */
  moveTo(url: string): void {
    this.current = url;
  }

  /** Notes why `url` failed: it is unreachable until a probe measures it again. */
  problem(url: string, problem: string): void {
    this.problems.set(url, problem);
    this.known.unreachable(url);
  }

  /** `url` welcomed the client: it has no problem, and the next failure waits little again. */
  welcomed(url: string): void {
    this.problems.delete(url);
    this.backoffMs = FIRST_BACKOFF_MS;
  }

  /** A replica serves the client: the connect timeout starts afresh at the next failure. */
  served(): void {
    this.failingSince = null;
  }

  /**
   * A connection failed at `now`: whether no replica has served the client for longer than the
   * connect timeout.
   */
  failing(now: number): boolean {
    this.failingSince ??= now;
    return now - this.failingSince > this.connectTimeoutMs;
  }

  /** The ops waiting were failed at `now`: the next ones get a full connect timeout. */
  restartFailing(now: number): void {
    this.failingSince = now;
  }

  /**
   * The attempts timed out: the error each op waiting gets, naming every URL with its last
   * problem, and saying whether the op may still take effect.
   */
  gaveUp(): (mayHaveTakenEffect: boolean) => Unavailable {
    const tried = this.known
      .ranked()
      .map((u) => `${u} (${this.problems.get(u) ?? 'no answer'})`)
      .join('; ');
    const timeoutMs = this.connectTimeoutMs;
    return (mayHaveTakenEffect) =>
      new Unavailable(
        `no replica answered for ${timeoutMs} ms; tried ${tried}${
          mayHaveTakenEffect
            ? '; the client resubmits this op once a replica answers, and it is applied once'
            : ''
        }`,
        { mayHaveTakenEffect },
      );
  }

  /** Moves on to the next URL in order of distance; returns how long to wait before connecting. */
  next(): number {
    const ranked = this.known.ranked();
    this.current = ranked[(ranked.indexOf(this.current) + 1) % ranked.length]!;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    return wait;
  }

  /**
   * Why to leave the replica, or null to stay (Correctables' bindings may pick any replica; the
   * session's guarantees hold across the move as for a dropped connection):
   * - ops wait on this connection, the oldest sent at least stallTimeoutMs ago, and it sent
   *   nothing since (frozen, overloaded, half-open);
   * - strong ops wait for their stable view, the oldest sent at least that long ago, and it
   *   delivered no stable answer since (cut off from the leader, or from a majority: it still
   *   answers tentatively, so the first rule does not see it). A cluster with no majority at all
   *   has the client move from replica to replica at this pace, its ops resubmitted each time and
   *   applied once.
   *
   * `oldest` and `oldestStrong`: when the oldest op (strong op) waiting on this connection was
   * sent, Infinity if none waits; `lastFrameAt`, `lastStableAt`: when the connection last brought
   * a frame, and a stable answer or a commit (or its welcome).
   */
  stalled(
    now: number,
    w: { oldest: number; oldestStrong: number; lastFrameAt: number; lastStableAt: number },
  ): string | null {
    if (now - Math.max(w.lastFrameAt, w.oldest) >= this.stallTimeoutMs)
      return `sent nothing for ${this.stallTimeoutMs} ms while ops waited`;
    if (now - Math.max(w.lastStableAt, w.oldestStrong) >= this.stallTimeoutMs)
      return `gave no stable answer for ${this.stallTimeoutMs} ms while strong ops waited (cut off from the leader?)`;
    return null;
  }
}
