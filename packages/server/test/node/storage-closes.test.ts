import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLOSE_OP, toFrozenJson } from '@creek/app';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { Req } from '@creek/replica/core/types.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import { DB_FILE, SqliteStorage } from '../../src/node/storage.js';
import {
  FORMAT_VERSION,
  holdsClose,
  PLAIN_FORMAT_VERSION,
} from '../../src/node/storage-migrations.js';

/**
 * A data directory becomes storage format 6 when it first holds a close of a dead origin, and stays
 * 5 until then: the release before closes opens a version-5 directory (an upgrade can be rolled
 * back), and refuses a version-6 one, which it would replay wrongly (it would run the close as an
 * unknown op and keep the ops the close drops).
 */
let tmp: string;
const opened: SqliteStorage[] = [];
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-closes-'));
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const dir = (): string => path.join(tmp, 'data');
function open(): SqliteStorage {
  const s = SqliteStorage.open(dir(), { replicaId: 1 });
  opened.push(s);
  return s;
}
/** The directory's format version, read once every storage opened on it is closed. */
function closedVersion(): string {
  for (const s of opened.splice(0)) s.close();
  const db = new Database(path.join(dir(), DB_FILE), { readonly: true });
  try {
    return db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as string;
  } finally {
    db.close();
  }
}

const req = (op: string, eventNo: number, args: unknown = { key: 'k', value: 1 }): Req => ({
  ts: 1_700_000_000_000_000 + eventNo,
  id: { replica: 1, eventNo },
  op,
  args: toFrozenJson(args),
  strong: op === CLOSE_OP,
  causalCtx: op === CLOSE_OP ? new DottedVersionVector() : null,
});
const close = req(CLOSE_OP, 2, { origin: 258, cut: 4 });
const record = (r: Req): HostRecord => ({ layer: 'core', record: { kind: 'req', req: r } });

describe('the storage format of a directory that holds a close', () => {
  it('is 5 until the first close is written, then 6, and stays 6 across a reopen', () => {
    expect([PLAIN_FORMAT_VERSION, FORMAT_VERSION]).toEqual([5, 6]);
    open().append([record(req('kv.put', 1))]);
    expect(closedVersion()).toBe('5');
    open().append([record(req('kv.put', 3)), record(close)]);
    expect(closedVersion()).toBe('6');
    const third = open();
    expect(third.load().filter((r) => r.layer === 'core')).toHaveLength(3);
    third.append([record(req('kv.put', 4))]);
    expect(closedVersion()).toBe('6');
  });

  it('stays 5 when the batch holding the close is not written', () => {
    const s = open();
    // A record the codec cannot encode: the whole batch, the version with it, rolls back.
    const bad = { layer: 'core', record: { kind: 'nonsense' } } as unknown as HostRecord;
    expect(() => s.append([record(close), bad])).toThrow();
    s.append([record(req('kv.put', 1))]);
    expect(closedVersion()).toBe('5');
    // And the close, written later by the same storage, still makes it 6.
    const t = open();
    expect(() => t.append([record(close), bad])).toThrow();
    t.append([record(close)]);
    expect(closedVersion()).toBe('6');
  });

  it('tells which records hold a close: its Req, and closed origins or a close in a checkpoint or a transfer', () => {
    expect(holdsClose(record(close))).toBe(true);
    expect(holdsClose(record(req('kv.put', 1)))).toBe(false);
    expect(holdsClose({ layer: 'core', record: { kind: 'commit', ids: [close.id] } })).toBe(false);
    const core = {
      finalized: 1,
      state: [],
      reqs: [] as Req[],
      committedLive: 0,
      known: new DottedVersionVector(),
      hlc: 1,
      eventNo: 1,
      lastStrongEventNo: 0,
      finalizedOwnStrong: 0,
    };
    const checkpoint = (c: object): HostRecord =>
      ({
        layer: 'checkpoint',
        record: { kind: 'checkpoint', core: { ...core, ...c }, cab: [], held: [], delivered: [] },
      }) as unknown as HostRecord;
    expect(holdsClose(checkpoint({}))).toBe(false);
    expect(holdsClose(checkpoint({ closed: [[258, 4]] }))).toBe(true);
    expect(holdsClose(checkpoint({ reqs: [close] }))).toBe(true);
    const chunk = (part: object): HostRecord =>
      ({
        layer: 'transfer',
        record: { kind: 'chunk', peer: 0, session: 1, index: 0, total: 2, part },
      }) as unknown as HostRecord;
    expect(holdsClose(chunk({ kind: 'reqs', reqs: [close] }))).toBe(true);
    expect(holdsClose(chunk({ kind: 'held', reqs: [req('kv.put', 1)] }))).toBe(false);
    expect(holdsClose(chunk({ kind: 'state', entries: [] }))).toBe(false);
    expect(holdsClose(chunk({ kind: 'header', header: { closed: [[258, 4]] } }))).toBe(true);
    expect(holdsClose(chunk({ kind: 'header', header: {} }))).toBe(false);
  });
});
