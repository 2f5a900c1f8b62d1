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
 *     'version'    the format version, currently '1'
 *     'replica_id' the id of the replica that owns the directory, in decimal
 *
 *   records(seq INTEGER PRIMARY KEY AUTOINCREMENT, layer TEXT, kind TEXT, body TEXT)
 *     One row per HostRecord, `seq` increasing in write order (AUTOINCREMENT: never reused, even
 *     if a future compaction deletes rows).
 *     layer  'core' | 'cab'
 *     kind   'req' | 'commit' (core), 'promise' | 'accept' | 'truncate' (cab)
 *     body   JSON of the record's other fields:
 *              req       {"req":{"ts","id":{"replica","eventNo"},"op","args","strong","causalCtx",
 *                               "session"?:{"id","seq","acked"}}}
 *                        where causalCtx is DottedVersionVector#toJSON() or null
 *              commit    {"ids":[{"replica","eventNo"},...]}
 *              promise   {"ballot"}
 *              accept    {"instance","ballot","value":[{"id":{"replica","eventNo"},"prevStrong"},...]}
 *              truncate  {"below"}
 *
 * Durability: each `append` is one transaction. With the default synchronous=NORMAL a committed
 * append survives a crash or kill -9 of the process (the WAL is written before commit returns) but
 * not necessarily a power loss; `fsync: true` selects synchronous=FULL, which syncs the WAL on every
 * commit.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { AcceptorRecord, CastId } from '../cab/messages.js';
import { DottedVersionVector } from '../core/dvv.js';
import { toFrozenJson } from '../core/json.js';
import type { OpId } from '../core/op-id.js';
import type { DurableRecord, Req, SessionStamp } from '../core/types.js';
import type { HostRecord } from '../host/replica-host.js';

export interface StorageOptions {
  /** The replica that owns the directory; opening it as another replica is an error. */
  readonly replicaId: number;
  /** Sync the WAL on every commit (synchronous=FULL): durable across power loss, slower. */
  readonly fsync?: boolean;
}

export interface StorageStats {
  /** Records in the log. */
  readonly records: number;
  /** Bytes the database files (creek.db and its WAL) take on disk. */
  readonly bytes: number;
}

/** The file name inside the data directory. */
export const DB_FILE = 'creek.db';
/** The on-disk format this code writes and reads. */
export const FORMAT_VERSION = 1;
/** SQLite header `application_id`: "CREK". */
const APPLICATION_ID = 0x4352454b;

type Row = [seq: number, layer: string, kind: string, body: string];

export class SqliteStorage {
  private readonly insert: Database.Statement<[string, string, string]>;
  private readonly selectAll: Database.Statement<[], Row>;
  private readonly appendAll: (records: readonly HostRecord[]) => void;
  /** Null until `stats` first counts; then kept up to date by `append`. */
  private count: number | null = null;

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
    // Records are encoded inside the transaction, so a record that cannot be encoded aborts the
    // whole batch after earlier ones were inserted: better-sqlite3 rolls the transaction back.
    this.appendAll = db.transaction((records: readonly HostRecord[]) => {
      for (const r of records) {
        const [layer, kind, body] = encode(r);
        this.insert.run(layer, kind, body);
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
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${opts.fsync === true ? 'FULL' : 'NORMAL'}`);
      if (opts.fsync === true) {
        // macOS: F_FULLFSYNC, without which fsync does not reach the platter. Ignored elsewhere.
        db.pragma('fullfsync = ON');
        db.pragma('checkpoint_fullfsync = ON');
      }
      if (state === 'fresh') initialize(db, replicaId);
      else checkMeta(db, file, dir, replicaId);
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
    this.appendAll(records);
    if (this.count !== null) this.count += records.length;
  }

  /** Every record, in write order, decoded to the shapes the host wrote. */
  load(): HostRecord[] {
    this.checkOpen();
    const out: HostRecord[] = [];
    for (const [seq, layer, kind, body] of this.selectAll.iterate()) {
      try {
        out.push(decode(layer, kind, body));
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
    this.count ??= this.db.prepare('SELECT count(*) FROM records').pluck().get() as number;
    const file = path.join(this.dir, DB_FILE);
    let bytes = 0;
    for (const f of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        bytes += fs.statSync(f).size;
      } catch {
        // Absent (no WAL yet, or no shm in exclusive mode).
      }
    }
    return { records: this.count, bytes };
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
      CREATE TABLE records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        layer TEXT NOT NULL CHECK (layer IN ('core', 'cab')),
        kind TEXT NOT NULL,
        body TEXT NOT NULL
      );
    `);
    const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    put.run('format', 'creek');
    put.run('version', String(FORMAT_VERSION));
    put.run('replica_id', String(replicaId));
    db.pragma(`application_id = ${APPLICATION_ID}`);
  })();
}

function checkMeta(db: Database.Database, file: string, dir: string, replicaId: number): void {
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
  if (version !== String(FORMAT_VERSION))
    throw new Error(
      `${file} has storage format version ${version ?? '(none)'}; this build reads version ${FORMAT_VERSION}`,
    );
  const owner = meta.get('replica_id');
  if (owner !== String(replicaId))
    throw new Error(
      `data directory ${dir} belongs to replica ${owner ?? '(unknown)'}, not replica ${replicaId}`,
    );
}

// ---- encoding ----

function encode(r: HostRecord): [layer: string, kind: string, body: string] {
  if (r.layer === 'core') return ['core', r.record.kind, JSON.stringify(encodeCore(r.record))];
  if (r.layer === 'cab') return ['cab', r.record.kind, JSON.stringify(encodeCab(r.record))];
  throw new TypeError(`unknown record layer ${JSON.stringify((r as { layer: unknown }).layer)}`);
}

function encodeCore(r: DurableRecord): object {
  switch (r.kind) {
    case 'req': {
      const q = r.req;
      if (q.causalCtx !== null && !(q.causalCtx instanceof DottedVersionVector))
        throw new TypeError('req.causalCtx is neither a DottedVersionVector nor null');
      return {
        req: {
          ts: num(q.ts, 'req.ts'),
          id: opId(q.id, 'req.id'),
          op: str(q.op, 'req.op'),
          // Live args are already frozen JSON (returned as they are); anything else is checked.
          args: toFrozenJson(q.args, 'req.args'),
          strong: bool(q.strong, 'req.strong'),
          causalCtx: q.causalCtx === null ? null : q.causalCtx.toJSON(),
          ...(q.session === undefined
            ? {}
            : {
                session: {
                  id: str(q.session.id, 'req.session.id'),
                  seq: num(q.session.seq, 'req.session.seq'),
                  acked: num(q.session.acked, 'req.session.acked'),
                },
              }),
        },
      };
    }
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
        value: r.value.map((c, i) => ({
          id: opId(c.id, `accept.value[${i}].id`),
          prevStrong: num(c.prevStrong, `accept.value[${i}].prevStrong`),
        })),
      };
    case 'truncate':
      return { below: num(r.below, 'truncate.below') };
    default:
      throw new TypeError(
        `unknown cab record kind ${JSON.stringify((r as { kind: unknown }).kind)}`,
      );
  }
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

function decode(layer: string, kind: string, body: string): HostRecord {
  const b = obj(JSON.parse(body) as unknown, 'body');
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
          value: arr(b.value, 'value').map((v, i): CastId => {
            const c = obj(v, `value[${i}]`);
            return {
              id: opId(c.id, `value[${i}].id`),
              prevStrong: num(c.prevStrong, `value[${i}].prevStrong`),
            };
          }),
        },
      };
    if (kind === 'truncate') return { layer, record: { kind, below: num(b.below, 'below') } };
  }
  throw new Error(`unknown record type ${layer}/${kind}`);
}

function decodeReq(q: Obj): Req {
  const ctx = q.causalCtx;
  return {
    ts: num(q.ts, 'req.ts'),
    id: opId(q.id, 'req.id'),
    op: str(q.op, 'req.op'),
    args: toFrozenJson(q.args, 'req.args'),
    strong: bool(q.strong, 'req.strong'),
    causalCtx: ctx === null ? null : DottedVersionVector.fromJSON(dvvJson(ctx)),
    ...(q.session === undefined ? {} : { session: decodeSession(obj(q.session, 'req.session')) }),
  };
}

function decodeSession(s: Obj): SessionStamp {
  return {
    id: str(s.id, 'req.session.id'),
    seq: num(s.seq, 'req.session.seq'),
    acked: num(s.acked, 'req.session.acked'),
  };
}

/** `{ [replica]: [base, ...dots] }`, as DottedVersionVector#toJSON writes it. */
function dvvJson(v: unknown): Record<string, number[]> {
  const o = obj(v, 'req.causalCtx');
  for (const [replica, e] of Object.entries(o)) {
    const at = `req.causalCtx[${replica}]`;
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
