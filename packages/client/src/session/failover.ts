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
/** The most the stall deadline grows to, as a multiple of the one asked for. */
const MAX_STALL_GROWTH = 16;

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
  /** Doubled each time the session leaves a replica for a stall, until a quick stable answer. */
  private stallBackoff = 1;

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

  /**
   * How long a replica may be useless before it is left; 0: never (one URL, or turned off). The
   * deadline asked for, doubled for each replica left in a row for a stall until a strong op's
   * stable answer comes within the deadline asked for, up to MAX_STALL_GROWTH times it. Across
   * regions a strong op can take longer than a deadline chosen on one site: a session left every
   * replica before any answered, resubmitting its ops each time, for good.
   */
  get stallTimeoutMs(): number {
    if (!this.several || this.stallMs <= 0) return 0;
    return this.stallMs * this.stallBackoff;
  }

  /**
   * A strong op sent on this connection had its stable answer `latencyMs` after it was sent: in
   * less than the deadline asked for, the cluster is as quick as that deadline expects again.
   */
  stableAnswered(latencyMs: number): void {
    if (latencyMs < this.stallMs) this.stallBackoff = 1;
  }

  /** The session left its replica for a stall (stalled): the next one is given longer. */
  leftStalled(): void {
    this.stallBackoff = Math.min(this.stallBackoff * 2, MAX_STALL_GROWTH);
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
   * session's guarantees hold across the move as for a dropped connection), stallTimeoutMs being
   * the deadline as the session has adapted it:
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
    const ms = Math.round(this.stallTimeoutMs);
    if (now - Math.max(w.lastFrameAt, w.oldest) >= ms)
      return `sent nothing for ${ms} ms while ops waited`;
    if (now - Math.max(w.lastStableAt, w.oldestStrong) >= ms)
      return `gave no stable answer for ${ms} ms while strong ops waited (cut off from the leader?)`;
    return null;
  }
}
