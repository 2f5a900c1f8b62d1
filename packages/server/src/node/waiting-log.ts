import type { Waiting } from '@creek/protocol';

/** How long a wait lasts before the log mentions it: an election's moments without a leader do not. */
export const WAITING_LOG_GRACE_MS = 2_000;
/** How often the log repeats a wait that goes on. */
export const WAITING_LOG_EVERY_MS = 30_000;

/** A log line about what the replica waits for (its pino logger's warn and info). */
export interface WaitingLogSink {
  warn(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
}

/**
 * Says in the log what the replica waits for (HostStatus.waiting) when it cannot make progress by
 * itself: once it has lasted WAITING_LOG_GRACE_MS, again whenever it waits for something else or
 * from other peers, and every `everyMs` while it goes on; and once when it no longer waits. Not
 * every tick: a replica stuck for hours must not fill its disk with the same line.
 */
export class WaitingLog {
  /** What the last line said (for and peers), or null when none is in force. */
  private logged: string | null = null;
  private loggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sink: WaitingLogSink,
    private readonly graceMs = WAITING_LOG_GRACE_MS,
    private readonly everyMs = WAITING_LOG_EVERY_MS,
  ) {}

  /** What the replica waits for now (ms: the clock `since` is on). */
  observe(waiting: Waiting | null, now: number): void {
    if (waiting === null) {
      if (this.logged !== null) this.sink.info({}, 'no longer waiting: making progress again');
      this.logged = null;
      return;
    }
    if (now - waiting.since < this.graceMs) return;
    const key = `${waiting.for}:${waiting.peers.join(',')}`;
    if (key === this.logged && now - this.loggedAt < this.everyMs) return;
    this.logged = key;
    this.loggedAt = now;
    this.sink.warn(
      {
        waitingFor: waiting.for,
        peers: waiting.peers,
        forMs: Math.round(now - waiting.since),
        reason: waiting.reason,
      },
      `cannot make progress: waiting for ${waiting.for}`,
    );
  }
}
