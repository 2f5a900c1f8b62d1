import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { HostRecord } from '@creek/replica/host/records.js';
import { DB_FILE, SqliteStorage, StorageDamage, type StorageOptions } from './storage.js';

/** What a replica found wrong with its data directory when it started (ReplicaStatus.storage). */
export interface StorageRepair {
  /** When it found it (ISO 8601). */
  readonly at: string;
  /** What is damaged (StorageDamage's message). */
  readonly reason: string;
  /** Where the damaged database was moved to, for an operator to inspect or delete. */
  readonly keptAs: string;
}

/**
 * Opens replica `opts.replicaId`'s data directory and reads what recovery needs. A directory whose
 * rows fail their checksums (StorageDamage) is not used at all: the database is set aside in the
 * directory as `creek.db.damaged-<time>`, and the replica starts on an empty one, which it fills
 * from its peers as a replica whose data directory was lost does: it takes no client op and casts
 * no vote until it has heard every peer, and numbers its ops under a new identity. Going on from the
 * rows that passed would be unsafe: a damaged row may have held a promise or a vote its peers
 * relied on. Any other error (a directory of another replica, a row the codec cannot read though
 * its checksum holds) is thrown, and the replica does not start.
 */
export function openStorage(
  dir: string,
  opts: StorageOptions,
  log: Logger,
  now: () => Date = () => new Date(),
): { storage: SqliteStorage; records: HostRecord[]; repair: StorageRepair | null } {
  const storage = SqliteStorage.open(dir, opts);
  try {
    return { storage, records: storage.load(), repair: null };
  } catch (e) {
    storage.close();
    if (!(e instanceof StorageDamage)) throw e;
    const at = now().toISOString();
    const keptAs = path.join(dir, `${DB_FILE}.damaged-${at.replace(/[:.]/g, '-')}`);
    const file = path.join(dir, DB_FILE);
    fs.renameSync(file, keptAs);
    // Closed cleanly, SQLite folded its WAL into the file; whatever is left goes along with it.
    if (fs.existsSync(`${file}-wal`)) fs.renameSync(`${file}-wal`, `${keptAs}-wal`);
    const repair = { at, reason: e.what, keptAs };
    log.error(
      { dataDir: dir, damage: e.what, keptAs },
      'the data directory is damaged: this replica uses none of it (kept aside for inspection) and rebuilds itself from its peers',
    );
    return { storage: SqliteStorage.open(dir, opts), records: [], repair };
  }
}
