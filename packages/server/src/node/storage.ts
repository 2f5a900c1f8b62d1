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
 *     'format'     'creek'
 *     'version'    the format version, currently '3' (a version-1 directory, which has no
 *                  checkpoint table, and a version-2 one, which has no 'host' records, are
 *                  upgraded in place when opened)
 *     'replica_id' the id of the replica that owns the directory, in decimal
 *
 *   records(seq INTEGER PRIMARY KEY, layer TEXT, kind TEXT, body TEXT)
 *     The HostRecords written since the last checkpoint, `seq` increasing in write order (it
 *     starts again after a checkpoint deletes the rows; no AUTOINCREMENT, whose bookkeeping page
 *     made every commit write a second page, 25 us against 17 us per transaction): one row per
 *     record, except that consecutive Reqs of one append share a row (kind 'reqs'), as a peer
 *     receiving a gossip push writes dozens at once and a row costs more than its bytes; so do
 *     consecutive commits (kind 'commits'), as a replica writes one per strong op it delivers,
 *     often many in a turn. Each commit stays a record of its own: the host takes the last id of
 *     each for a strong op delivered (ReplicaHost.load).
 *     layer  'core' | 'cab' | 'host'
 *     kind   'req' | 'reqs' | 'commit' | 'commits' (core), 'promise' | 'accept' | 'truncate' (cab),
 *            'identity', 'chunk' (host: the origin the replica numbers its ops under,
 *            core/op-id.ts; a state-transfer chunk)
 *     body   JSON of the record's other fields:
 *              req       {"req":{"ts","id":{"replica","eventNo"},"op","args","strong","causalCtx",
 *                               "session"?:{"id","seq","acked"}}}
 *                        where causalCtx is DottedVersionVector#toJSON() or null
 *              reqs      {"reqs":[req,...]}: two or more req records, each as "req" above
 *              commit    {"ids":[{"replica","eventNo"},...]}
 *              commits   {"commits":[[id,...],...]}: two or more commit records, each its ids
 *              promise   {"ballot"}
 *              accept    {"instance","ballot","value":[{"id":{"replica","eventNo"},"prevStrong"},...]}
 *              truncate  {"below"}
 *              identity  {"origin"}
 *              chunk     {"peer","session","index","total","part"}: a state-transfer chunk the
 *                        replica received (host/state-transfer.ts TransferPart, Reqs as above),
 *                        kept so that a transfer resumes after a crash
 *
 *   checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER, body TEXT)
 *     At most one row: the last checkpoint (HostCheckpoint). It supersedes every record written
 *     before it; the transaction that writes it deletes those rows from `records`, so the disk
 *     holds one checkpoint plus the records after it, not every record ever written.
 *     seq    how many checkpoints this directory has had (1 for the first)
 *     body   {"core":{"finalized","state":[[key,value],...],"reqs":[req,...],"committedLive",
 *                     "known","hlc","eventNo","lastStrongEventNo","finalizedOwnStrong"},
 *             "cab":[{"kind",...the cab record's body}, ...],
 *             "held":[req,...],
 *             "delivered":[{"replica","eventNo"},...],"origin"}
 *            where origin is the replica's (null while it has none: an installed state transfer)
 *            and each req is written as in a req record, and known as a causalCtx
 *
 * Durability: each `append` is one transaction. With the default synchronous=NORMAL a committed
 * append survives a crash or kill -9 of the process (the WAL is written before commit returns) but
 * not necessarily a power loss; `fsync: true` selects synchronous=FULL, which syncs the WAL on every
 * commit.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { ConfigEntry, Member, ReconfigRequest } from '../cab/configuration.js';
import { isCast, type AcceptorRecord, type BatchEntry } from '../cab/messages.js';
import { DottedVersionVector } from '../core/dvv.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import { toFrozenJson, type JsonValue } from '@creek/app';
import type { OpId } from '../core/op-id.js';
import type { DurableRecord, Req, SessionStamp } from '../core/types.js';
import type { HostCheckpoint, HostRecord, TransferChunkRecord } from '../host/replica-host.js';
import type { TransferPart } from '../host/state-transfer.js';

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
/** The on-disk format this code writes and reads (and the older one it upgrades). */
export const FORMAT_VERSION = 3;
/** SQLite header `application_id`: "CREK". */
const APPLICATION_ID = 0x4352454b;

type Row = [seq: number, layer: string, kind: string, body: string];
const CHECKPOINTS_SO_FAR = 'SELECT COALESCE((SELECT seq FROM checkpoint WHERE id = 1), 0) + 1';

export class SqliteStorage {
  private readonly insert: Database.Statement<[string, string, string]>;
  private readonly selectAll: Database.Statement<[], Row>;
  private readonly deleteRecords: Database.Statement<[]>;
  private readonly putCheckpoint: Database.Statement<[string]>;
  private readonly selectCheckpoint: Database.Statement<[], string>;
  private readonly appendAll: (records: readonly HostRecord[]) => void;
  /** Null until `stats` first counts; then kept up to date by `append`. */
  private count: number | null = null;
  private commits = 0;
  private checkpointBytes: number | null = null;

  private constructor(
    private readonly db: Database.Database,
    /** The data directory. */
    readonly dir: string,
    readonly replicaId: number,
  ) {
    this.insert = db.prepare('INSERT INTO records (layer, kind, body) VALUES (?, ?, ?)');
    this.selectAll = db
      .prepare<[], Row>('SELECT seq, layer, kind, body FROM records ORDER BY seq')
      .raw();
    this.deleteRecords = db.prepare('DELETE FROM records');
    this.putCheckpoint = db.prepare(
      `INSERT OR REPLACE INTO checkpoint (id, seq, body) VALUES (1, (${CHECKPOINTS_SO_FAR}), ?)`,
    );
    this.selectCheckpoint = db.prepare<[], string>('SELECT body FROM checkpoint').pluck();
    // Records are encoded inside the transaction, so a record that cannot be encoded aborts the
    // whole batch after earlier ones were inserted: better-sqlite3 rolls the transaction back.
    // A checkpoint deletes every row before it in the same transaction; records of the batch that
    // come before the batch's last checkpoint are superseded already and not written at all.
    this.appendAll = db.transaction((records: readonly HostRecord[]) => {
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
          const body = JSON.stringify(encodeCheckpoint(r.record));
          this.deleteRecords.run();
          this.putCheckpoint.run(body);
          this.count = 0;
          this.checkpointBytes = Buffer.byteLength(body);
          continue;
        }
        // Consecutive Reqs go in one row; so do consecutive commits, each kept apart in it.
        let end = i + 1;
        if (isReq(r)) while (end < records.length && isReq(records[end]!)) end++;
        else if (isCommit(r)) while (end < records.length && isCommit(records[end]!)) end++;
        if (end - i > 1 && isReq(r)) {
          const reqs = records.slice(i, end).map((q) => encodeReq((q as ReqRecord).record.req));
          this.insert.run('core', 'reqs', JSON.stringify({ reqs }));
        } else if (end - i > 1) {
          const commits = records
            .slice(i, end)
            .map((q) => (encodeCore((q as CommitRecord).record) as { ids: object[] }).ids);
          this.insert.run('core', 'commits', JSON.stringify({ commits }));
        } else {
          const [layer, kind, body] = encode(r);
          this.insert.run(layer, kind, body);
        }
        if (this.count !== null) this.count += end - i;
        i = end - 1;
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
      if (state === 'fresh') initialize(db, replicaId);
      else {
        const version = checkMeta(db, file, dir, replicaId);
        if (version === 1) upgradeFrom1(db);
        if (version < 3) upgradeFrom2(db, replicaId);
      }
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
    try {
      this.appendAll(records);
      this.commits++;
      if (records.some((r) => r.layer === 'checkpoint')) this.compact();
    } catch (e) {
      // Rolled back: so are the counts.
      this.count = count;
      this.checkpointBytes = checkpointBytes;
      throw e;
    }
  }

  /**
   * What recovery needs, decoded to the shapes the host wrote: the last checkpoint (if any), then
   * every record after it, in write order.
   */
  load(): HostRecord[] {
    this.checkOpen();
    const out: HostRecord[] = [];
    const checkpoint = this.selectCheckpoint.get();
    if (checkpoint !== undefined) {
      try {
        out.push({ layer: 'checkpoint', record: decodeCheckpoint(JSON.parse(checkpoint)) });
      } catch (e) {
        throw new Error(
          `${path.join(this.dir, DB_FILE)}: the checkpoint is corrupt: ${message(e)}`,
          { cause: e },
        );
      }
    }
    for (const [seq, layer, kind, body] of this.selectAll.iterate()) {
      try {
        if (layer === 'core' && kind === 'reqs') out.push(...decodeReqs(body));
        else if (layer === 'core' && kind === 'commits') out.push(...decodeCommits(body));
        else out.push(decode(layer, kind, body));
      } catch (e) {
        throw new Error(
          `${path.join(this.dir, DB_FILE)}: record ${seq} (${layer}/${kind}) is corrupt: ${message(e)}`,
          { cause: e },
        );
      }
    }
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

// ---- opening ----

/** Whether the database is new (empty) or already has content, which must then be Creek's. */
function inspect(db: Database.Database, file: string, dir: string): 'fresh' | 'existing' {
  let appId: number;
  let objects: number;
  try {
    appId = db.pragma('application_id', { simple: true }) as number;
    objects = db.prepare('SELECT count(*) FROM sqlite_master').pluck().get() as number;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
      throw new Error(
        `data directory ${dir} is in use: ${file} is locked by another open storage`,
        {
          cause: e,
        },
      );
    if (code === 'SQLITE_NOTADB')
      throw new Error(`${file} is not a Creek database (not an SQLite file): ${message(e)}`, {
        cause: e,
      });
    throw e;
  }
  if (appId === 0 && objects === 0) return 'fresh';
  if (appId !== APPLICATION_ID)
    throw new Error(
      `${file} is not a Creek database (SQLite application_id is 0x${appId.toString(16)}, expected 0x${APPLICATION_ID.toString(16)})`,
    );
  return 'existing';
}

function initialize(db: Database.Database, replicaId: number): void {
  db.transaction(() => {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      ${RECORDS_TABLE}
      ${CHECKPOINT_TABLE}
    `);
    const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    put.run('format', 'creek');
    put.run('version', String(FORMAT_VERSION));
    put.run('replica_id', String(replicaId));
    db.pragma(`application_id = ${APPLICATION_ID}`);
  })();
}

const RECORDS_TABLE = `
  CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    layer TEXT NOT NULL CHECK (layer IN ('core', 'cab', 'host')),
    kind TEXT NOT NULL,
    body TEXT NOT NULL
  );`;

/** The records table of version 2, which version 1 is upgraded to first. */
const RECORDS_V2_TABLE = `
  CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    layer TEXT NOT NULL CHECK (layer IN ('core', 'cab')),
    kind TEXT NOT NULL,
    body TEXT NOT NULL
  );`;

const CHECKPOINT_TABLE = `
  CREATE TABLE checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    body TEXT NOT NULL
  );`;

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

/**
 * Version 1 had no checkpoints and an AUTOINCREMENT records table: its records, copied in order
 * into a version-2 table, are a version-2 log with no checkpoint yet.
 */
function upgradeFrom1(db: Database.Database): void {
  db.transaction(() => {
    db.exec(`
      ALTER TABLE records RENAME TO records_v1;
      ${RECORDS_V2_TABLE}
      INSERT INTO records (seq, layer, kind, body) SELECT seq, layer, kind, body FROM records_v1;
      DROP TABLE records_v1;
      ${CHECKPOINT_TABLE}
    `);
  })();
}

/**
 * Version 2 had no 'host' records: a replica numbered its ops under its id, always. Its records
 * are kept (in a table that takes 'host' records), and a directory that holds any gets an
 * identity record saying so, as version 3 writes before a replica's first op: the replica goes on
 * under the origin its ops have (core/op-id.ts: its id is its first incarnation's).
 */
function upgradeFrom2(db: Database.Database, replicaId: number): void {
  db.transaction(() => {
    const used =
      (db.prepare('SELECT COUNT(*) FROM records').pluck().get() as number) > 0 ||
      (db.prepare('SELECT COUNT(*) FROM checkpoint').pluck().get() as number) > 0;
    db.exec(`
      ALTER TABLE records RENAME TO records_v2;
      ${RECORDS_TABLE}
      INSERT INTO records (seq, layer, kind, body) SELECT seq, layer, kind, body FROM records_v2;
      DROP TABLE records_v2;
    `);
    if (used)
      db.prepare(
        "INSERT INTO records (seq, layer, kind, body) VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM records), 'host', 'identity', ?)",
      ).run(JSON.stringify({ origin: replicaId }));
    db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(FORMAT_VERSION));
  })();
}

/** Checks the directory's meta; returns its format version (this one, or 1 or 2 to upgrade). */
function checkMeta(db: Database.Database, file: string, dir: string, replicaId: number): number {
  let rows: { key: string; value: string }[];
  try {
    rows = db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
  } catch (e) {
    throw new Error(`${file} is not a Creek database (no readable meta table): ${message(e)}`, {
      cause: e,
    });
  }
  const meta = new Map(rows.map((r) => [r.key, r.value]));
  if (meta.get('format') !== 'creek')
    throw new Error(`${file} is not a Creek database (meta has no format 'creek')`);
  const version = meta.get('version');
  if (version !== String(FORMAT_VERSION) && version !== '1' && version !== '2')
    throw new Error(
      `${file} has storage format version ${version ?? '(none)'}; this build reads versions 1 to ${FORMAT_VERSION}`,
    );
  const owner = meta.get('replica_id');
  if (owner !== String(replicaId))
    throw new Error(
      `data directory ${dir} belongs to replica ${owner ?? '(unknown)'}, not replica ${replicaId}`,
    );
  return Number(version);
}

// ---- encoding ----

function encode(r: HostRecord): [layer: string, kind: string, body: string] {
  if (r.layer === 'core') return ['core', r.record.kind, JSON.stringify(encodeCore(r.record))];
  if (r.layer === 'cab') return ['cab', r.record.kind, JSON.stringify(encodeCab(r.record))];
  if (r.layer === 'identity')
    return [
      'host',
      'identity',
      JSON.stringify({ origin: num(r.record.origin, 'identity.origin') }),
    ];
  if (r.layer === 'transfer') return ['host', 'chunk', JSON.stringify(encodeChunk(r.record))];
  throw new TypeError(`unknown record layer ${JSON.stringify((r as { layer: unknown }).layer)}`);
}

function encodeReq(q: Req): object {
  if (q.causalCtx !== null && !(q.causalCtx instanceof DottedVersionVector))
    throw new TypeError('req.causalCtx is neither a DottedVersionVector nor null');
  return {
    ...reqFields(q),
    causalCtx: q.causalCtx === null ? null : q.causalCtx.toJSON(),
    ...(q.session === undefined ? {} : { session: sessionFields(q.session) }),
  };
}

/**
 * A Req's plain fields, checked the same way when written (a live Req) and when read (JSON from
 * disk). Live args are already frozen JSON and come back as they are; anything else is checked.
 */
function reqFields(q: Partial<Record<'ts' | 'id' | 'op' | 'args' | 'strong', unknown>>) {
  return {
    ts: num(q.ts, 'req.ts'),
    id: opId(q.id, 'req.id'),
    op: str(q.op, 'req.op'),
    args: toFrozenJson(q.args, 'req.args'),
    strong: bool(q.strong, 'req.strong'),
  };
}

function sessionFields(s: Partial<Record<'id' | 'seq' | 'acked', unknown>>): SessionStamp {
  return {
    id: str(s.id, 'req.session.id'),
    seq: num(s.seq, 'req.session.seq'),
    acked: num(s.acked, 'req.session.acked'),
  };
}

function encodeCore(r: DurableRecord): object {
  switch (r.kind) {
    case 'req':
      return { req: encodeReq(r.req) };
    case 'commit':
      return { ids: r.ids.map((id, i) => opId(id, `commit.ids[${i}]`)) };
    default:
      throw new TypeError(
        `unknown core record kind ${JSON.stringify((r as { kind: unknown }).kind)}`,
      );
  }
}

function encodeCab(r: AcceptorRecord): object {
  switch (r.kind) {
    case 'promise':
      return { ballot: num(r.ballot, 'promise.ballot') };
    case 'accept':
      return {
        instance: num(r.instance, 'accept.instance'),
        ballot: num(r.ballot, 'accept.ballot'),
        value: r.value.map((c, i) =>
          isCast(c)
            ? {
                id: opId(c.id, `accept.value[${i}].id`),
                prevStrong: num(c.prevStrong, `accept.value[${i}].prevStrong`),
              }
            : { reconfig: encodeReconfig(c.reconfig, `accept.value[${i}].reconfig`) },
        ),
      };
    case 'truncate':
      return { below: num(r.below, 'truncate.below') };
    case 'config':
      return { entry: encodeConfigEntry(r.entry, 'config.entry') };
    default:
      throw new TypeError(
        `unknown cab record kind ${JSON.stringify((r as { kind: unknown }).kind)}`,
      );
  }
}

function encodeCheckpoint(c: HostCheckpoint): object {
  const k = c.core;
  if (!(k.known instanceof DottedVersionVector))
    throw new TypeError('checkpoint.core.known is not a DottedVersionVector');
  return {
    core: {
      finalized: num(k.finalized, 'checkpoint.core.finalized'),
      state: k.state.map(([key, value]) => [
        str(key, 'checkpoint.core.state key'),
        toFrozenJson(value, `checkpoint.core.state['${key}']`),
      ]),
      reqs: k.reqs.map(encodeReq),
      committedLive: num(k.committedLive, 'checkpoint.core.committedLive'),
      known: k.known.toJSON(),
      hlc: num(k.hlc, 'checkpoint.core.hlc'),
      eventNo: num(k.eventNo, 'checkpoint.core.eventNo'),
      lastStrongEventNo: num(k.lastStrongEventNo, 'checkpoint.core.lastStrongEventNo'),
      finalizedOwnStrong: num(k.finalizedOwnStrong, 'checkpoint.core.finalizedOwnStrong'),
    },
    cab: c.cab.map((r) => ({ kind: r.kind, ...encodeCab(r) })),
    held: c.held.map(encodeReq),
    delivered: c.delivered.map((id, i) => opId(id, `checkpoint.delivered[${i}]`)),
    origin: c.origin === undefined || c.origin === null ? null : num(c.origin, 'checkpoint.origin'),
  };
}

function encodeMember(m: Member, at: string): Member {
  return { id: num(m.id, `${at}.id`), address: str(m.address, `${at}.address`) };
}

function encodeReconfig(r: ReconfigRequest, at: string): ReconfigRequest {
  const c = r.change;
  return {
    nonce: str(r.nonce, `${at}.nonce`),
    change:
      c.op === 'add'
        ? { op: 'add', member: encodeMember(c.member, `${at}.change.member`) }
        : { op: 'remove', id: num(c.id, `${at}.change.id`) },
  };
}

function encodeConfigEntry(e: ConfigEntry, at: string): ConfigEntry {
  return {
    from: num(e.from, `${at}.from`),
    members: e.members.map((m, i) => encodeMember(m, `${at}.members[${i}]`)),
    retired: e.retired.map((id, i) => num(id, `${at}.retired[${i}]`)),
    ...(e.nonce === undefined ? {} : { nonce: str(e.nonce, `${at}.nonce`) }),
  };
}

function decodeMember(v: unknown, at: string): Member {
  const m = obj(v, at);
  return { id: num(m.id, `${at}.id`), address: str(m.address, `${at}.address`) };
}

function decodeReconfig(v: unknown, at: string): ReconfigRequest {
  const r = obj(v, at);
  const c = obj(r.change, `${at}.change`);
  const op = str(c.op, `${at}.change.op`);
  if (op !== 'add' && op !== 'remove') throw new TypeError(`${at}.change.op is not add or remove`);
  return {
    nonce: str(r.nonce, `${at}.nonce`),
    change:
      op === 'add'
        ? { op, member: decodeMember(c.member, `${at}.change.member`) }
        : { op, id: num(c.id, `${at}.change.id`) },
  };
}

function decodeConfigEntry(v: unknown, at: string): ConfigEntry {
  const e = obj(v, at);
  return {
    from: num(e.from, `${at}.from`),
    members: arr(e.members, `${at}.members`).map((m, i) => decodeMember(m, `${at}.members[${i}]`)),
    retired: arr(e.retired, `${at}.retired`).map((id, i) => num(id, `${at}.retired[${i}]`)),
    ...(e.nonce === undefined ? {} : { nonce: str(e.nonce, `${at}.nonce`) }),
  };
}

/** JSON.stringify would write NaN and Infinity as null: refuse them instead of corrupting. */
function num(v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new TypeError(`${at} is not a finite number`);
  return v;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string') throw new TypeError(`${at} is not a string`);
  return v;
}

function bool(v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') throw new TypeError(`${at} is not a boolean`);
  return v;
}

function opId(v: unknown, at: string): OpId {
  if (typeof v !== 'object' || v === null) throw new TypeError(`${at} is not an op id`);
  const id = v as OpId;
  return { replica: num(id.replica, `${at}.replica`), eventNo: num(id.eventNo, `${at}.eventNo`) };
}

// ---- decoding ----

type Obj = Record<string, unknown>;

type ReqRecord = { layer: 'core'; record: Extract<DurableRecord, { kind: 'req' }> };

function isReq(r: HostRecord): r is ReqRecord {
  return r.layer === 'core' && r.record.kind === 'req';
}

type CommitRecord = { layer: 'core'; record: Extract<DurableRecord, { kind: 'commit' }> };

function isCommit(r: HostRecord): r is CommitRecord {
  return r.layer === 'core' && r.record.kind === 'commit';
}

function decodeReqs(body: string): HostRecord[] {
  const b = obj(JSON.parse(body) as unknown, 'body');
  return arr(b.reqs, 'reqs').map((q, i) => ({
    layer: 'core' as const,
    record: { kind: 'req' as const, req: decodeReq(obj(q, `reqs[${i}]`)) },
  }));
}

function decodeCommits(body: string): HostRecord[] {
  const b = obj(JSON.parse(body) as unknown, 'body');
  return arr(b.commits, 'commits').map((ids, i) => ({
    layer: 'core' as const,
    record: {
      kind: 'commit' as const,
      ids: arr(ids, `commits[${i}]`).map((v, k) => opId(v, `commits[${i}][${k}]`)),
    },
  }));
}

function decode(layer: string, kind: string, body: string): HostRecord {
  return decodeBody(layer, kind, obj(JSON.parse(body) as unknown, 'body'));
}

function decodeBody(layer: string, kind: string, b: Obj): HostRecord {
  if (layer === 'core') {
    if (kind === 'req') return { layer, record: { kind, req: decodeReq(obj(b.req, 'req')) } };
    if (kind === 'commit')
      return {
        layer,
        record: { kind, ids: arr(b.ids, 'ids').map((v, i) => opId(v, `ids[${i}]`)) },
      };
  } else if (layer === 'cab') {
    if (kind === 'promise') return { layer, record: { kind, ballot: num(b.ballot, 'ballot') } };
    if (kind === 'accept')
      return {
        layer,
        record: {
          kind,
          instance: num(b.instance, 'instance'),
          ballot: num(b.ballot, 'ballot'),
          value: arr(b.value, 'value').map((v, i): BatchEntry => {
            const c = obj(v, `value[${i}]`);
            if (c.reconfig !== undefined)
              return { reconfig: decodeReconfig(c.reconfig, `value[${i}].reconfig`) };
            return {
              id: opId(c.id, `value[${i}].id`),
              prevStrong: num(c.prevStrong, `value[${i}].prevStrong`),
            };
          }),
        },
      };
    if (kind === 'truncate') return { layer, record: { kind, below: num(b.below, 'below') } };
    if (kind === 'config')
      return { layer, record: { kind, entry: decodeConfigEntry(b.entry, 'entry') } };
  } else if (layer === 'host' && kind === 'identity') {
    return { layer: 'identity', record: { kind, origin: num(b.origin, 'origin') } };
  } else if (layer === 'host' && kind === 'chunk') {
    return { layer: 'transfer', record: decodeChunk(b) };
  }
  throw new Error(`unknown record type ${layer}/${kind}`);
}

/** A state-transfer chunk the replica received (host/state-transfer.ts `TransferPart`). */
function encodeChunk(c: TransferChunkRecord): object {
  const p = c.part;
  const part =
    p.kind === 'header'
      ? p
      : p.kind === 'state'
        ? {
            kind: p.kind,
            entries: p.entries.map(([key, value]) => [
              str(key, 'chunk.state key'),
              toFrozenJson(value, `chunk.state['${key}']`),
            ]),
          }
        : { kind: p.kind, reqs: p.reqs.map(encodeReq) };
  return {
    peer: num(c.peer, 'chunk.peer'),
    session: num(c.session, 'chunk.session'),
    index: num(c.index, 'chunk.index'),
    total: num(c.total, 'chunk.total'),
    part,
  };
}

function decodeChunk(b: Obj): TransferChunkRecord {
  const p = obj(b.part, 'part');
  const kind = str(p.kind, 'part.kind');
  let part: TransferPart;
  if (kind === 'header') {
    const h = obj(p.header, 'part.header');
    const counts = obj(h.counts, 'part.header.counts');
    part = {
      kind,
      header: {
        finalized: num(h.finalized, 'header.finalized'),
        committedLive: num(h.committedLive, 'header.committedLive'),
        known: dvvJson(h.known, 'header.known'),
        hlc: num(h.hlc, 'header.hlc'),
        truncatedBelow: num(h.truncatedBelow, 'header.truncatedBelow'),
        delivered: arr(h.delivered, 'header.delivered').map((id, i) =>
          opId(id, `header.delivered[${i}]`),
        ),
        counts: {
          state: num(counts.state, 'counts.state'),
          reqs: num(counts.reqs, 'counts.reqs'),
          held: num(counts.held, 'counts.held'),
        },
        digest: str(h.digest, 'header.digest'),
      },
    };
  } else if (kind === 'state') {
    part = {
      kind,
      entries: arr(p.entries, 'part.entries').map((e, i): [string, JsonValue] => {
        const [key, value] = arr(e, `part.entries[${i}]`);
        return [str(key, `part.entries[${i}][0]`), toFrozenJson(value, `part.entries[${i}][1]`)];
      }),
    };
  } else if (kind === 'reqs' || kind === 'held') {
    part = {
      kind,
      reqs: arr(p.reqs, 'part.reqs').map((q, i) => decodeReq(obj(q, `part.reqs[${i}]`))),
    };
  } else throw new TypeError(`part.kind ${JSON.stringify(kind)} is not a chunk kind`);
  return {
    kind: 'chunk',
    peer: num(b.peer, 'peer'),
    session: num(b.session, 'session'),
    index: num(b.index, 'index'),
    total: num(b.total, 'total'),
    part,
  };
}

function decodeCheckpoint(v: unknown): HostCheckpoint {
  const b = obj(v, 'checkpoint');
  const k = obj(b.core, 'core');
  const core: ReplicaCheckpoint = {
    finalized: num(k.finalized, 'core.finalized'),
    state: arr(k.state, 'core.state').map((e, i): [string, JsonValue] => {
      const [key, value] = arr(e, `core.state[${i}]`);
      return [str(key, `core.state[${i}][0]`), toFrozenJson(value, `core.state[${i}][1]`)];
    }),
    reqs: arr(k.reqs, 'core.reqs').map((q, i) => decodeReq(obj(q, `core.reqs[${i}]`))),
    committedLive: num(k.committedLive, 'core.committedLive'),
    known: DottedVersionVector.fromJSON(dvvJson(k.known, 'core.known')),
    hlc: num(k.hlc, 'core.hlc'),
    eventNo: num(k.eventNo, 'core.eventNo'),
    lastStrongEventNo: num(k.lastStrongEventNo, 'core.lastStrongEventNo'),
    finalizedOwnStrong: num(k.finalizedOwnStrong, 'core.finalizedOwnStrong'),
  };
  const cab = arr(b.cab, 'cab').map((e, i): AcceptorRecord => {
    const { kind, ...rest } = obj(e, `cab[${i}]`);
    const r = decodeBody('cab', str(kind, `cab[${i}].kind`), rest);
    if (r.layer !== 'cab') throw new Error(`cab[${i}] is not an acceptor record`);
    return r.record;
  });
  return {
    kind: 'checkpoint',
    core,
    cab,
    held: arr(b.held, 'held').map((q, i) => decodeReq(obj(q, `held[${i}]`))),
    delivered: arr(b.delivered, 'delivered').map((id, i) => opId(id, `delivered[${i}]`)),
    origin: b.origin === undefined || b.origin === null ? null : num(b.origin, 'origin'),
  };
}

function decodeReq(q: Obj): Req {
  const ctx = q.causalCtx;
  return {
    ...reqFields(q),
    causalCtx: ctx === null ? null : DottedVersionVector.fromJSON(dvvJson(ctx)),
    ...(q.session === undefined ? {} : { session: sessionFields(obj(q.session, 'req.session')) }),
  };
}

/** `{ [replica]: [base, ...dots] }`, as DottedVersionVector#toJSON writes it. */
function dvvJson(v: unknown, name = 'req.causalCtx'): Record<string, number[]> {
  const o = obj(v, name);
  for (const [replica, e] of Object.entries(o)) {
    const at = `${name}[${replica}]`;
    arr(e, at).forEach((n, i) => num(n, `${at}[${i}]`));
  }
  return o as Record<string, number[]>;
}

function obj(v: unknown, at: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new TypeError(`${at} is not an object`);
  return v as Obj;
}

function arr(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${at} is not an array`);
  return v as unknown[];
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
