import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/node/damaged-storage.js';
import { DB_FILE, SqliteStorage } from '../../src/node/storage.js';
import { writerRecord } from './storage-writer.js';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-damaged-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A logger whose lines (pino's JSON) are kept. */
function recording(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { log, lines };
}

describe('opening a data directory at start', () => {
  it('loads an undamaged one as it is', () => {
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    s.append([writerRecord(0), writerRecord(1)]);
    s.close();
    const { log, lines } = recording();
    const opened = openStorage(dir, { replicaId: 1 }, log);
    expect(opened.records).toEqual([writerRecord(0), writerRecord(1)]);
    expect(opened.repair).toBeNull();
    opened.storage.close();
    expect(lines).toEqual([]);
  });

  it('sets a damaged one aside, says so, and starts on an empty one', () => {
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    s.append([writerRecord(0)]);
    s.append([writerRecord(1)]);
    s.close();
    const db = new Database(path.join(dir, DB_FILE));
    const body = db.prepare('SELECT body FROM records WHERE seq = 2').pluck().get() as string;
    const at9 = body.search(/\d/);
    const changed = `${body.slice(0, at9)}${(Number(body[at9]) + 1) % 10}${body.slice(at9 + 1)}`;
    db.prepare('UPDATE records SET body = ? WHERE seq = 2').run(changed);
    db.close();
    const { log, lines } = recording();
    const at = new Date('2026-12-01T10:20:30.456Z');
    const opened = openStorage(dir, { replicaId: 1 }, log, () => at);
    const keptAs = path.join(dir, 'creek.db.damaged-2026-12-01T10-20-30-456Z');
    expect(opened.repair).toEqual({
      at: at.toISOString(),
      reason: expect.stringMatching(/^record 2 \(\w+\/\w+\) does not match its checksum: /),
      keptAs,
    });
    expect(opened.records).toEqual([]);
    // The new directory is the same replica's, empty, and takes records.
    opened.storage.append([writerRecord(5)]);
    opened.storage.close();
    expect(SqliteStorage.open(dir, { replicaId: 1 }).load()).toEqual([writerRecord(5)]);
    // The damaged database is whole beside it, for an operator to look into.
    const kept = new Database(keptAs, { readonly: true });
    expect(kept.prepare('SELECT COUNT(*) FROM records').pluck().get()).toBe(2);
    kept.close();
    expect(lines).toMatchObject([
      {
        level: 50,
        dataDir: dir,
        damage: opened.repair!.reason,
        keptAs,
        msg: 'the data directory is damaged: this replica uses none of it (kept aside for inspection) and rebuilds itself from its peers',
      },
    ]);
  });

  it('does not start on a directory it cannot use for another reason', () => {
    const dir = path.join(tmp, 'data');
    SqliteStorage.open(dir, { replicaId: 1 }).close();
    const { log } = recording();
    expect(() => openStorage(dir, { replicaId: 2 }, log)).toThrow(/belongs to replica 1/);
    expect(fs.readdirSync(dir)).toEqual([DB_FILE]);
  });
});
