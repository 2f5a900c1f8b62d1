import CRC32 from 'crc-32';

/**
 * A replica's simulated disk. A write becomes durable some time after it is issued, and writes
 * complete in order; a crash loses every write not yet durable. The host holds back a replica's
 * messages and responses until the writes issued before them are durable (host/ready.ts), and the
 * simulator tells it when they are (SimCluster.consume). Durable here means synced: the host acts
 * on a write only once it would survive a power loss, as the runtime does with `--fsync`.
 *
 * A write may supersede everything written before it (a checkpoint). Like the runtime's SQLite
 * storage, which deletes the older rows in the checkpoint's transaction, the disk drops them once
 * the superseding write is durable, not before: a crash before that keeps the old records and
 * loses the checkpoint, a crash after it leaves only the checkpoint and what follows.
 *
 * With checksums (`encode` given: SimConfig.storageFaults), each record is stored with a CRC-32 of
 * its encoding chained to the one before it on the disk (`sum = crc32(encode(record), prev)`), as
 * the runtime's storage stores each row's: a record whose bytes changed fails its own sum, and an
 * older version of a record returned in its place (stale) fails the chain. Then the disk can be
 * damaged as real ones are: the write in flight torn by a power loss, a bit flipped at rest, a
 * stale record read back. `load` says what it finds damaged; what a replica does about it is its
 * driver's (SimCluster.restart: it treats the disk as lost and rebuilds from its peers).
 */
export class SimDisk<R> {
  private entries: Entry<R>[] = [];
  /** Indices of superseding writes not yet durable (or not yet applied), ascending. */
  private pendingCuts: number[] = [];
  private lastDurableAt = 0;
  /**
   * With checksums: the entries as they were before the last compaction, whose records are the
   * older versions of the positions the compaction refilled (`stale`).
   */
  private older: readonly Entry<R>[] = [];
  /** Records dropped because a durable write superseded them. */
  truncated = 0;

  /** `encode`: the bytes a record is stored as, for its checksum; none: no checksums kept. */
  constructor(private readonly encode: ((record: R) => string) | null = null) {}

  /**
   * Issues a write at `now`; returns when it will be durable. Writes complete in order, but one
   * flush covers everything written while it was in progress (group commit), so a busy disk adds
   * latency, not an ever-growing queue.
   */
  write(now: number, latencyMs: number, record: R, supersedes = false): number {
    this.lastDurableAt = Math.max(this.lastDurableAt, now + latencyMs);
    if (supersedes) this.pendingCuts.push(this.entries.length);
    const prev = this.entries.at(-1)?.sum ?? 0;
    const sum = this.encode === null ? 0 : checksum(this.encode(record), prev);
    this.entries.push({ record, durableAt: this.lastDurableAt, sum, prev });
    this.compact(now);
    return this.lastDurableAt;
  }

  /** When every write issued so far is durable. */
  durableAt(): number {
    return this.lastDurableAt;
  }

  /**
   * The replica crashed at `now`; returns how many writes it lost. A power loss (the default, and
   * every crash of a run without storage faults) loses what was not durable, and with `tear` the
   * first of those writes is on the disk in part: `tear` makes what it reads back as. A process
   * crash ('process') loses nothing that was issued: the operating system had the writes, and
   * syncs them.
   */
  crash(now: number, how: 'power' | 'process' = 'power', tear?: (record: R) => R): number {
    const before = this.entries.length;
    const firstLost = this.entries.findIndex((e) => e.durableAt > now);
    const kept = how === 'process' || firstLost < 0 ? before : firstLost;
    // A torn write is on the disk, but what it superseded is not dropped: it never completed.
    this.pendingCuts = this.pendingCuts.filter((i) => i < kept);
    if (kept < before) {
      const torn = this.entries[kept]!;
      this.entries = this.entries.slice(0, kept);
      if (tear !== undefined) this.entries.push({ ...torn, record: tear(torn.record), torn: true });
    }
    this.lastDurableAt = Math.min(this.lastDurableAt, now);
    for (const e of this.entries) e.durableAt = Math.min(e.durableAt, now);
    const lost = before - this.entries.length;
    this.compact(now);
    return lost;
  }

  /** Everything on the disk, in write order, as it reads back (damaged or not). */
  read(): R[] {
    return this.entries.map((e) => e.record);
  }

  /** The records on the disk less a torn write: what the replica had written whole. */
  readWhole(): R[] {
    return this.entries.flatMap((e) => (e.torn === true ? [] : [e.record]));
  }

  /**
   * What a restart reads: every record, and with `verify` the first one that fails its checksum
   * or does not follow the one before it (null: none, or no checksums kept).
   */
  load(verify: boolean): { readonly records: R[]; readonly damage: string | null } {
    const records = this.read();
    if (!verify || this.encode === null) return { records, damage: null };
    for (const [i, e] of this.entries.entries()) {
      if (checksum(this.encode(e.record), e.prev) !== e.sum)
        return { records, damage: `record ${i + 1} of ${records.length} fails its checksum` };
      if (i > 0 && e.prev !== this.entries[i - 1]!.sum)
        return {
          records,
          damage: `record ${i + 1} of ${records.length} does not follow the record before it (an older version of it, or a misplaced write)`,
        };
    }
    return { records, damage: null };
  }

  /** Damages the record at `index` in place, at rest (a flipped bit): its checksum stays. */
  corrupt(index: number, damage: (record: R) => R): void {
    const e = this.entries[index]!;
    this.entries[index] = { ...e, record: damage(e.record) };
  }

  /**
   * Positions whose older version (the record a compaction moved out of that position) would read
   * back as detectably stale: it differs from what is there, and a neighbour's chain exposes it. A
   * disk read back whole as it was earlier (a checkpoint and nothing after it, say) is consistent,
   * and no checksum can tell: the simulator does not make that fault.
   */
  stalePositions(): number[] {
    const out: number[] = [];
    for (const [i, e] of this.entries.entries()) {
      const old = this.older[i];
      if (old === undefined || old.sum === e.sum) continue;
      const before = this.entries[i - 1];
      const after = this.entries[i + 1];
      if (
        (before !== undefined && old.prev !== before.sum) ||
        (after !== undefined && after.prev !== old.sum)
      )
        out.push(i);
    }
    return out;
  }

  /** The record at `index` reads back as its older version (`stalePositions`). */
  stale(index: number): void {
    this.entries[index] = { ...this.older[index]!, durableAt: this.entries[index]!.durableAt };
  }

  /** How many records the disk holds. */
  get size(): number {
    return this.entries.length;
  }

  /** Drops what the last durable superseding write replaced. */
  private compact(now: number): void {
    let cut = -1;
    let k = 0;
    for (; k < this.pendingCuts.length; k++) {
      const i = this.pendingCuts[k]!;
      if (this.entries[i]!.durableAt > now) break;
      cut = i;
    }
    if (cut < 0) return;
    this.pendingCuts = this.pendingCuts.slice(k).map((i) => i - cut);
    this.truncated += cut;
    if (this.encode !== null) this.older = this.entries;
    this.entries = this.entries.slice(cut);
  }
}

/** A record on the disk with its checksum and the one it was chained to. */
interface Entry<R> {
  readonly record: R;
  durableAt: number;
  readonly sum: number;
  readonly prev: number;
  /** Written in part (`crash` with `tear`). */
  readonly torn?: true;
}

/**
 * CRC-32 (IEEE) of `text`'s UTF-8 bytes, continued from `prev`: the runtime's storage computes the
 * same with node:zlib's crc32, which a browser (the visualizer runs the simulator) does not have.
 */
export function checksum(text: string, prev: number): number {
  return CRC32.str(text, prev) >>> 0;
}
