/**
 * The storage's format versions (storage.ts): how a data directory is recognized as Creek's and as
 * its replica's, made when new, and upgraded in place when an older version wrote it.
 *
 *   meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)
 *     'format'     'creek'
 *     'version'    the format version, '5' or '6' (a version-1 directory, which has no
 *                  checkpoint table, a version-2 one, which has no 'host' records, a version-3
 *                  one, which has no divergence records, and a version-4 one, whose rows have no
 *                  checksums, are upgraded to 5 in place when opened; a directory becomes 6 when
 *                  it first holds a close of a dead origin, `holdsClose`)
 *     'replica_id' the id of the replica that owns the directory, in decimal
 *
 * The SQLite header's `application_id` is 0x4352454B, "CREK". What the rows hold is the record
 * codec's (record-codec.ts); its format is part of the version.
 */
import type Database from 'better-sqlite3';
import { CLOSE_OP } from '@creek/app';
import type { Req } from '@creek/replica/core/types.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import { checkpointSum, rowSum } from './record-checksums.js';

/** The newest on-disk format this code reads and writes (and older ones it upgrades). */
export const FORMAT_VERSION = 6;
/**
 * The format of a directory that holds no close of a dead origin (`creek.close`): the same rows as
 * FORMAT_VERSION, so that the release before closes still opens it (an upgrade can be rolled back
 * until the cluster first closed an origin, which it does only once every member runs a release
 * that applies closes). A directory holding one is FORMAT_VERSION: the release before would run
 * the close as an unknown op, keep the ops it drops and part from its peers' state.
 */
export const PLAIN_FORMAT_VERSION = 5;

/** Whether `r` holds a close (its Req, or closed origins in a checkpoint or a transfer's header). */
export function holdsClose(r: HostRecord): boolean {
  const isClose = (req: Req): boolean => req.op === CLOSE_OP;
  if (r.layer === 'core') return r.record.kind === 'req' && isClose(r.record.req);
  if (r.layer === 'checkpoint')
    return (r.record.core.closed?.length ?? 0) > 0 || r.record.core.reqs.some(isClose);
  if (r.layer !== 'transfer') return false;
  const part = r.record.part;
  if (part.kind === 'header') return (part.header.closed?.length ?? 0) > 0;
  return part.kind !== 'state' && part.reqs.some(isClose);
}
/** SQLite header `application_id`: "CREK". */
const APPLICATION_ID = 0x4352454b;

/**
 * Makes the database Creek's format version FORMAT_VERSION, for replica `replicaId`: a fresh one
 * gets the tables and meta, one an older version wrote is upgraded in place.
 */
export function migrate(
  db: Database.Database,
  state: 'fresh' | 'existing',
  file: string,
  dir: string,
  replicaId: number,
): void {
  if (state === 'fresh') initialize(db, replicaId);
  else {
    const version = checkMeta(db, file, dir, replicaId);
    if (version === 1) upgradeFrom1(db);
    if (version < 3) upgradeFrom2(db, replicaId);
    // Version 4 added records (host/divergence, a checkpoint's divergence) that version 3 never
    // wrote: a version-3 directory is a version-4 one as it is.
    // Version 5 added the rows' checksums (record-checksums.ts): computed here over the rows as
    // they are, which is all a directory written without them can promise.
    if (version < 5) upgradeFrom4(db);
  }
}

/** Whether the database is new (empty) or already has content, which must then be Creek's. */
export function inspect(db: Database.Database, file: string, dir: string): 'fresh' | 'existing' {
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
    put.run('version', String(PLAIN_FORMAT_VERSION));
    put.run('replica_id', String(replicaId));
    db.pragma(`application_id = ${APPLICATION_ID}`);
  })();
}

const RECORDS_TABLE = `
  CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    layer TEXT NOT NULL CHECK (layer IN ('core', 'cab', 'host')),
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    sum INTEGER NOT NULL
  );`;

/** The records table of versions 3 and 4, which version 2 is upgraded to first. */
const RECORDS_V4_TABLE = `
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
    body TEXT NOT NULL,
    sum INTEGER NOT NULL
  );`;

/** The checkpoint table of versions 2 to 4, which version 1 is upgraded to first. */
const CHECKPOINT_V4_TABLE = `
  CREATE TABLE checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    body TEXT NOT NULL
  );`;

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
      ${CHECKPOINT_V4_TABLE}
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
      ${RECORDS_V4_TABLE}
      INSERT INTO records (seq, layer, kind, body) SELECT seq, layer, kind, body FROM records_v2;
      DROP TABLE records_v2;
    `);
    if (used)
      db.prepare(
        "INSERT INTO records (seq, layer, kind, body) VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM records), 'host', 'identity', ?)",
      ).run(JSON.stringify({ origin: replicaId }));
    // Version 3 (the same as 4); the checksums' upgrade that follows makes it this version.
    db.prepare("UPDATE meta SET value = '3' WHERE key = 'version'").run();
  })();
}

/**
 * Version 4's rows had no checksums: each gets its own, chained from the checkpoint's as version 5
 * writes them (record-checksums.ts), in one transaction with the version.
 */
function upgradeFrom4(db: Database.Database): void {
  db.transaction(() => {
    db.exec(`
      ALTER TABLE records ADD COLUMN sum INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE checkpoint ADD COLUMN sum INTEGER NOT NULL DEFAULT 0;
    `);
    checksumRows(db);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(PLAIN_FORMAT_VERSION));
  })();
}

/**
 * Sets every row's checksum (and the checkpoint's) to what its content and the row before it make
 * (record-checksums.ts): whatever the rows hold is taken as written. The version-4 upgrade's, and
 * tests' that write rows by hand.
 */
export function checksumRows(db: Database.Database): void {
  const checkpoint = db.prepare('SELECT body FROM checkpoint WHERE id = 1').pluck().get() as
    string | undefined;
  let prev = 0;
  if (checkpoint !== undefined) {
    prev = checkpointSum(checkpoint);
    db.prepare('UPDATE checkpoint SET sum = ? WHERE id = 1').run(prev);
  }
  const rows = db
    .prepare('SELECT seq, layer, kind, body FROM records ORDER BY seq')
    .raw()
    .all() as [number, string, string, string][];
  const update = db.prepare('UPDATE records SET sum = ? WHERE seq = ?');
  for (const [seq, layer, kind, body] of rows) {
    prev = rowSum(layer, kind, body, prev);
    update.run(prev, seq);
  }
}

/** Checks the directory's meta; returns its format version (this one, or 1 to 4 to upgrade). */
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
  if (version !== undefined && /^\d+$/.test(version) && Number(version) > FORMAT_VERSION)
    throw new Error(
      `${file} has storage format version ${version}, written by a newer release of creek; this build reads versions 1 to ${FORMAT_VERSION}. A data directory never goes back to an older release: run the release that wrote it (or a newer one) on it, or give this replica an empty directory and let it take its state from its peers`,
    );
  if (version === undefined || !['1', '2', '3', '4', '5', '6'].includes(version))
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

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
