/**
 * A replica's simulated disk. A write becomes durable some time after it is issued, and writes
 * complete in order; a crash loses every write not yet durable. The host holds back a replica's
 * messages and responses until the writes issued before them are durable (host/ready.ts), and the
 * simulator tells it when they are (SimCluster.consume).
 *
 * A write may supersede everything written before it (a checkpoint). Like the runtime's SQLite
 * storage, which deletes the older rows in the checkpoint's transaction, the disk drops them once
 * the superseding write is durable, not before: a crash before that keeps the old records and
 * loses the checkpoint, a crash after it leaves only the checkpoint and what follows.
 */
export class SimDisk<R> {
  private records: { record: R; durableAt: number }[] = [];
  /** Indices of superseding writes not yet durable (or not yet applied), ascending. */
  private pendingCuts: number[] = [];
  private lastDurableAt = 0;
  /** Records dropped because a durable write superseded them. */
  truncated = 0;

  /**
   * Issues a write at `now`; returns when it will be durable. Writes complete in order, but one
   * flush covers everything written while it was in progress (group commit), so a busy disk adds
   * latency, not an ever-growing queue.
   */
  write(now: number, latencyMs: number, record: R, supersedes = false): number {
    this.lastDurableAt = Math.max(this.lastDurableAt, now + latencyMs);
    if (supersedes) this.pendingCuts.push(this.records.length);
    this.records.push({ record, durableAt: this.lastDurableAt });
    this.compact(now);
    return this.lastDurableAt;
  }

  /** When every write issued so far is durable. */
  durableAt(): number {
    return this.lastDurableAt;
  }

  /** The replica crashed at `now`: what was not durable is gone. */
  crash(now: number): number {
    const before = this.records.length;
    this.records = this.records.filter((r) => r.durableAt <= now);
    this.pendingCuts = this.pendingCuts.filter((i) => i < this.records.length);
    this.lastDurableAt = Math.min(this.lastDurableAt, now);
    const lost = before - this.records.length;
    this.compact(now);
    return lost;
  }

  /** Everything on the disk, in write order (read at restart). */
  read(): R[] {
    return this.records.map((r) => r.record);
  }

  /** How many records the disk holds. */
  get size(): number {
    return this.records.length;
  }

  /** Drops what the last durable superseding write replaced. */
  private compact(now: number): void {
    let cut = -1;
    let k = 0;
    for (; k < this.pendingCuts.length; k++) {
      const i = this.pendingCuts[k]!;
      if (this.records[i]!.durableAt > now) break;
      cut = i;
    }
    if (cut < 0) return;
    this.pendingCuts = this.pendingCuts.slice(k).map((i) => i - cut);
    this.truncated += cut;
    this.records = this.records.slice(cut);
  }
}
