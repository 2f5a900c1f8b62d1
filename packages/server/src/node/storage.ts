/**
 * Durable storage for one replica: the append-only log of `HostRecord`s that the host asks its
 * driver to persist, kept in SQLite (better-sqlite3) in WAL mode.
 *
 * Data directory layout (one directory per replica, never shared):
 *
 *   <dir>/creek.db       the SQLite database (application_id 0x4352454B, "CREK")
 *   <dir>/creek.db-wal   SQLite's write-ahead log: committed transactions not yet checkpointed
 *                        into creek.db. Part of the data: never delete it by hand. It is folded
 *                        into creek.db and removed on a clean close.
 *   (no creek.db-shm: the database is opened with locking_mode=EXCLUSIVE, so the WAL index lives
 *   in process memory. The same lock makes a second open of the directory, from this process or
 *   another, fail at once instead of interleaving two writers' records.)
 *
 * Tables:
 *
 *   meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)
 *     The format, its version and the replica that owns the directory (storage-migrations.ts,
 *     which upgrades a directory an older version wrote when it is opened).
 *
 *   records(seq INTEGER PRIMARY KEY, layer TEXT, kind TEXT, body TEXT, sum INTEGER)
 *     The HostRecords written since the last checkpoint, `seq` increasing in write order (it
 *     starts again after a checkpoint deletes the rows; no AUTOINCREMENT, whose bookkeeping page
 *     made every commit write a second page, 25 us against 17 us per transaction): one row per
 *     record, except that consecutive Reqs of one append share a row (kind 'reqs'), as a peer
 *     receiving a gossip push writes dozens at once and a row costs more than its bytes; so do
 *     consecutive commits (kind 'commits'), as a replica writes one per strong op it delivers,
 *     often many in a turn. Each commit stays a record of its own: the host takes the last id of
 *     each for a strong op delivered (ReplicaHost.load). What layer, kind and body hold is the
 *     record codec's (record-codec.ts). `sum` is the row's checksum, chained to the row before it
 *     (record-checksums.ts).
 *
 *   checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER, body TEXT, sum INTEGER)
 *     At most one row: the last checkpoint (HostCheckpoint). It supersedes every record written
 *     before it; the transaction that writes it deletes those rows from `records`, so the disk
 *     holds one checkpoint plus the records after it, not every record ever written.
 *     seq    how many checkpoints this directory has had (1 for the first)
 *     body   the checkpoint's JSON (record-codec.ts)
 *     sum    its checksum, which the first row of `records` after it is chained to
 *
 * Checksums: `load` checks every row's, and throws StorageDamage at the first that does not match
 * (a bit flipped, a torn page, a row read back as an older version of itself), so that a replica
 * never goes on from a record that is not what it wrote: it rebuilds itself from its peers
 * instead (ReplicaServer.start). SQLite's own WAL checksums keep a transaction torn by a crash
 * from being read at all; these catch what happens to the rows after they were written.
 *
 * Durability: each `append` is one transaction. With the default synchronous=NORMAL a committed
 * append survives a crash or kill -9 of the process (the WAL is written before commit returns) but
 * not necessarily a power loss; `fsync: true` selects synchronous=FULL, which syncs the WAL on every
 * commit.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { HostRecord } from '@creek/replica/host/records.js';
import { checkpointSum, rowSum, StorageDamage } from './record-checksums.js';
import { decodeCheckpoint, decodeRow, encodeCheckpoint, encodeRow } from './record-codec.js';
import { FORMAT_VERSION, holdsClose, inspect, migrate } from './storage-migrations.js';

export { FORMAT_VERSION } from './storage-migrations.js';
export { StorageDamage } from './record-checksums.js';

export interface StorageOptions {
  /** The replica that owns the directory; opening it as another replica is an error. */
  readonly replicaId: number;
  /** Sync the WAL on every commit (synchronous=FULL): durable across power loss, slower. */
  readonly fsync?: boolean;
}

export interface StorageStats {
  /** Records in the log (those after the checkpoint). */
  readonly records: number;
  /** Bytes of the stored checkpoint's body; 0 when there is none. */
  readonly checkpointBytes: number;
  /** Bytes the database files (creek.db and its WAL) take on disk. */
  readonly bytes: number;
  /**
   * Transactions committed since the directory was opened: with `fsync`, each is a sync of the
   * WAL to the device (benchmarks divide it by the ops they ran: disk writes per op).
   */
  readonly commits: number;
}

/** The file name inside the data directory. */
export const DB_FILE = 'creek.db';

type Row = [seq: number, layer: string, kind: string, body: string, sum: number];
const CHECKPOINTS_SO_FAR = 'SELECT COALESCE((SELECT seq FROM checkpoint WHERE id = 1), 0) + 1';

export class SqliteStorage {
  private readonly insert: Database.Statement<[string, string, string, number]>;
  private readonly selectAll: Database.Statement<[], Row>;
  private readonly deleteRecords: Database.Statement<[]>;
  private readonly putCheckpoint: Database.Statement<[string, number]>;
  private readonly selectCheckpoint: Database.Statement<[], [body: string, sum: number]>;
  private readonly appendAll: (records: readonly HostRecord[]) => void;
  /** Null until `stats` first counts; then kept up to date by `append`. */
  private count: number | null = null;
  private commits = 0;
  private checkpointBytes: number | null = null;
  /** The directory is FORMAT_VERSION already: it holds a close (storage-migrations.ts). */
  private closes: boolean;
  /** The sum the next row is chained to (record-checksums.ts); null until first needed. */
  private lastSum: number | null = null;

  private constructor(
    private readonly db: Database.Database,
    /** The data directory. */
    readonly dir: string,
    readonly replicaId: number,
  ) {
    this.insert = db.prepare('INSERT INTO records (layer, kind, body, sum) VALUES (?, ?, ?, ?)');
    const version: unknown = db
      .prepare("SELECT value FROM meta WHERE key = 'version'")
      .pluck()
      .get();
    this.closes = version === String(FORMAT_VERSION);
    this.selectAll = db
      .prepare<[], Row>('SELECT seq, layer, kind, body, sum FROM records ORDER BY seq')
      .raw();
    this.deleteRecords = db.prepare('DELETE FROM records');
    this.putCheckpoint = db.prepare(
      `INSERT OR REPLACE INTO checkpoint (id, seq, body, sum) VALUES (1, (${CHECKPOINTS_SO_FAR}), ?, ?)`,
    );
    this.selectCheckpoint = db
      .prepare<[], [string, number]>('SELECT body, sum FROM checkpoint')
      .raw();
    // Records are encoded inside the transaction, so a record that cannot be encoded aborts the
    // whole batch after earlier ones were inserted: better-sqlite3 rolls the transaction back.
    // A checkpoint deletes every row before it in the same transaction; records of the batch that
    // come before the batch's last checkpoint are superseded already and not written at all.
    this.appendAll = db.transaction((records: readonly HostRecord[]) => {
      // The first close makes the directory one the release before closes must not open.
      if (!this.closes && records.some(holdsClose)) {
        db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(FORMAT_VERSION));
        this.closes = true;
      }
      let from = 0;
      for (let i = records.length - 1; i >= 0; i--) {
        if (records[i]!.layer === 'checkpoint') {
          from = i;
          break;
        }
      }
      for (let i = from; i < records.length; i++) {
        const r = records[i]!;
        if (r.layer === 'checkpoint') {
          const body = encodeCheckpoint(r.record);
          this.deleteRecords.run();
          this.lastSum = checkpointSum(body);
          this.putCheckpoint.run(body, this.lastSum);
          this.count = 0;
          this.checkpointBytes = Buffer.byteLength(body);
          continue;
        }
        // One row for the record, or for it and the records after it that share its row.
        const row = encodeRow(records, i);
        this.lastSum = rowSum(row.layer, row.kind, row.body, this.lastSum ?? this.chainEnd());
        this.insert.run(row.layer, row.kind, row.body, this.lastSum);
        if (this.count !== null) this.count += row.end - i;
        i = row.end - 1;
      }
    });
  }

  /**
   * Opens (creating if missing) the data directory `dir` of replica `opts.replicaId`. Throws if the
   * directory belongs to another replica, holds a file that is not a Creek database, was written by
   * an unknown format version, or is already open.
   */
  static open(dir: string, opts: StorageOptions): SqliteStorage {
    const { replicaId } = opts;
    if (!Number.isSafeInteger(replicaId) || replicaId < 0)
      throw new Error(`replicaId must be a non-negative integer, got ${String(replicaId)}`);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, DB_FILE);
    // timeout 0: the exclusive lock is held for the connection's lifetime, so waiting for it is
    // pointless; a locked database means another open storage.
    const db = new Database(file, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      const state = inspect(db, file, dir);
      // Before the first table (and WAL): pages a checkpoint frees can then be given back to the
      // file system (`compact`). A directory made by an older version keeps its file's size.
      if (state === 'fresh') db.pragma('auto_vacuum = INCREMENTAL');
      setDurability(db, opts.fsync === true);
      migrate(db, state, file, dir, replicaId);
      return new SqliteStorage(db, dir, replicaId);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /**
   * Writes `records` in one transaction and returns once it is committed (durable as `fsync`
   * says). Nothing of the batch is written if any record cannot be encoded.
   */
  append(records: readonly HostRecord[]): void {
    this.checkOpen();
    if (records.length === 0) return;
    const count = this.count;
    const checkpointBytes = this.checkpointBytes;
    const lastSum = this.lastSum;
    const closes = this.closes;
    try {
      this.appendAll(records);
      this.commits++;
      if (records.some((r) => r.layer === 'checkpoint')) this.compact();
    } catch (e) {
      // Rolled back: so are the counts.
      this.count = count;
      this.checkpointBytes = checkpointBytes;
      this.lastSum = lastSum;
      this.closes = closes;
      throw e;
    }
  }

  /**
   * What recovery needs, decoded to the shapes the host wrote: the last checkpoint (if any), then
   * every record after it, in write order. Throws StorageDamage at the first row whose checksum
   * does not match: nothing of the directory may be used then.
   */
  load(): HostRecord[] {
    this.checkOpen();
    const file = path.join(this.dir, DB_FILE);
    try {
      return this.readRows(file);
    } catch (e) {
      // A page SQLite itself finds damaged: no row of it can be trusted either.
      if ((e as { code?: unknown }).code === 'SQLITE_CORRUPT')
        throw new StorageDamage(file, `SQLite finds the database damaged: ${message(e)}`);
      throw e;
    }
  }

  private readRows(file: string): HostRecord[] {
    const out: HostRecord[] = [];
    const checkpoint = this.selectCheckpoint.get();
    let sum = 0;
    if (checkpoint !== undefined) {
      const [body, stored] = checkpoint;
      sum = checkpointSum(body);
      if (sum !== stored) throw StorageDamage.checksum(file, 'the checkpoint');
      try {
        out.push({ layer: 'checkpoint', record: decodeCheckpoint(body) });
      } catch (e) {
        throw new Error(`${file}: the checkpoint is corrupt: ${message(e)}`, { cause: e });
      }
    }
    for (const [seq, layer, kind, body, stored] of this.selectAll.iterate()) {
      sum = rowSum(layer, kind, body, sum);
      if (sum !== stored) throw StorageDamage.checksum(file, `record ${seq} (${layer}/${kind})`);
      try {
        out.push(...decodeRow(layer, kind, body));
      } catch (e) {
        throw new Error(`${file}: record ${seq} (${layer}/${kind}) is corrupt: ${message(e)}`, {
          cause: e,
        });
      }
    }
    this.lastSum = sum;
    return out;
  }

  stats(): StorageStats {
    this.checkOpen();
    this.count ??= this.db
      .prepare(
        "SELECT COALESCE(SUM(CASE kind WHEN 'reqs' THEN json_array_length(body, '$.reqs') WHEN 'commits' THEN json_array_length(body, '$.commits') ELSE 1 END), 0) FROM records",
      )
      .pluck()
      .get() as number;
    this.checkpointBytes ??= this.db
      .prepare('SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM checkpoint')
      .pluck()
      .get() as number;
    const file = path.join(this.dir, DB_FILE);
    let bytes = 0;
    for (const f of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        bytes += fs.statSync(f).size;
      } catch {
        // Absent (no WAL yet, or no shm in exclusive mode).
      }
    }
    return {
      records: this.count,
      checkpointBytes: this.checkpointBytes,
      bytes,
      commits: this.commits,
    };
  }

  /** The sum of the last row on disk, or the checkpoint's, or 0: what the next row chains to. */
  private chainEnd(): number {
    const last = this.db
      .prepare('SELECT sum FROM records ORDER BY seq DESC LIMIT 1')
      .pluck()
      .get() as number | undefined;
    if (last !== undefined) return last;
    return (this.db.prepare('SELECT sum FROM checkpoint').pluck().get() as number | undefined) ?? 0;
  }

  /**
   * After a checkpoint deleted the records before it: the pages they held go back to the file
   * system, and the WAL into the database file, so the directory shrinks to about the checkpoint
   * and the records after it (a replica that compacted little for a while, say while a dead peer
   * held back pruning, gives its disk back once it compacts again). Once per checkpoint, which a
   * replica takes every `--checkpoint-every` ops at most.
   */
  private compact(): void {
    if ((this.db.pragma('auto_vacuum', { simple: true }) as number) !== 2) return;
    this.db.pragma('incremental_vacuum');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Checkpoints the WAL into creek.db and releases the directory. Idempotent. */
  close(): void {
    if (this.db.open) this.db.close();
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  private checkOpen(): void {
    if (!this.db.open) throw new Error(`storage ${this.dir} is closed`);
  }
}

/**
 * How a replica's database commits (after `locking_mode = EXCLUSIVE`): WAL, synchronous NORMAL (a
 * commit survives kill -9 of the process) or FULL with `fsync` (it survives power loss too), and
 * a bounded WAL file. Exported so that bench:latency's floor server commits exactly as a replica.
 */
export function setDurability(db: Database.Database, fsync: boolean): void {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${fsync ? 'FULL' : 'NORMAL'}`);
  if (fsync) {
    // macOS: F_FULLFSYNC, without which fsync does not reach the platter. Ignored elsewhere.
    db.pragma('fullfsync = ON');
    db.pragma('checkpoint_fullfsync = ON');
  }
  // Bounds the WAL file: SQLite truncates it to this size after checkpointing it.
  db.pragma(`journal_size_limit = ${8 << 20}`);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
