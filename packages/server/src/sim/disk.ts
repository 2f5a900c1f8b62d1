/**
 * A replica's simulated disk. A write becomes durable some time after it is issued, and writes
 * complete in order; a crash loses every write not yet durable. The simulator holds back a
 * replica's messages and responses until the writes issued before them are durable, which is the
 * contract of a `persist` output.
 */
export class SimDisk<R> {
  private records: { record: R; durableAt: number }[] = [];
  private lastDurableAt = 0;

  /**
   * Issues a write at `now`; returns when it will be durable. Writes complete in order, but one
   * flush covers everything written while it was in progress (group commit), so a busy disk adds
   * latency, not an ever-growing queue.
   */
  write(now: number, latencyMs: number, record: R): number {
    this.lastDurableAt = Math.max(this.lastDurableAt, now + latencyMs);
    this.records.push({ record, durableAt: this.lastDurableAt });
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
    this.lastDurableAt = Math.min(this.lastDurableAt, now);
    return before - this.records.length;
  }

  /** Everything on the disk, in write order (read at restart). */
  read(): R[] {
    return this.records.map((r) => r.record);
  }

  /** Replaces the contents (compaction after truncation), keeping durability. */
  rewrite(records: R[]): void {
    this.records = records.map((record) => ({ record, durableAt: this.lastDurableAt }));
  }
}
