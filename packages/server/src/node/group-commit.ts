import type { HostRecord } from '@creek/replica/host/records.js';
import { realTimers, type LingerTimers } from './peer-outbox.js';

/** Where a batch of writes commits: one transaction (SqliteStorage.append). */
export type CommitBatch = (records: readonly HostRecord[]) => void;

/** How long a turn's writes may wait for a turn that lets something leave (ms). */
export const HOLD_MS = 10;
/** Held writes past this many commit at once, whatever the turn. */
export const HOLD_MAX_RECORDS = 512;

/**
 * A replica's disk writes, committed once per turn of the event loop before anything of the turn
 * leaves (a client's answer, a peer message, a view, a viewer's event): what anyone hears of is on
 * disk first. A turn that lets nothing leave — on a replica that is not the op's origin, most turns
 * only store Reqs that peers pushed — need not commit yet: nothing outside depends on its writes, so
 * they wait for the next turn that lets something leave and commit in its transaction, ahead of its
 * own writes; or `HOLD_MS` later, or at once past `HOLD_MAX_RECORDS`. A crash loses what waited, as
 * it loses a write the disk had not finished, and nobody had been told of it. On a replica that
 * only stores others' Reqs this turns a transaction per frame into one per tick or per message it
 * sends (`npm run bench:tail` counts them).
 *
 * The simulator's disk stands for the wait with writes that take time to become durable, lost in a
 * crash until then, with nothing leaving before them (packages/server/test/sim/held-writes.test.ts
 * runs every checker with writes that take up to 15 ms).
 */
export class GroupCommit {
  private readonly writes: HostRecord[] = [];
  private timer: unknown = null;

  constructor(
    private readonly commitBatch: CommitBatch,
    private readonly timers: LingerTimers = realTimers,
  ) {}

  /** A write of this turn. */
  add(record: HostRecord): void {
    this.writes.push(record);
  }

  /** Writes not committed yet (this turn's and held ones). */
  get pending(): boolean {
    return this.writes.length > 0;
  }

  /**
   * The turn's inputs are done: commits every write so far if `leaving` (something of the turn
   * leaves after this) or too many wait; else holds them, with a deadline.
   */
  endTurn(leaving: boolean): void {
    if (this.writes.length === 0) return;
    if (leaving || this.writes.length >= HOLD_MAX_RECORDS) this.commit();
    else this.timer ??= this.timers.set(() => this.commit(), HOLD_MS);
  }

  /** Commits everything written so far in one transaction (the deadline, or the replica stops). */
  commit(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
    if (this.writes.length > 0) this.commitBatch(this.writes.splice(0));
  }
}
