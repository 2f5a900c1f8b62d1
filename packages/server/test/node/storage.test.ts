import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { toFrozenJson, type JsonValue } from '@creek/app';
import type { TransferPart } from '@creek/replica/host/state-transfer.js';
import type { Req } from '@creek/replica/core/types.js';
import type { HostCheckpoint, HostRecord } from '@creek/replica/host/records.js';
import { crc32 } from 'node:zlib';
import { DB_FILE, SqliteStorage, StorageDamage } from '../../src/node/storage.js';
import { checksumRows } from '../../src/node/storage-migrations.js';
import { writerRecord } from './storage-writer.js';

let tmp: string;
const opened: SqliteStorage[] = [];

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-storage-'));
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function open(dir = path.join(tmp, 'data'), replicaId = 1, fsync?: boolean): SqliteStorage {
  const s = SqliteStorage.open(dir, fsync === undefined ? { replicaId } : { replicaId, fsync });
  opened.push(s);
  return s;
}

function dvv(ids: ReadonlyArray<readonly [number, number]>): DottedVersionVector {
  const v = new DottedVersionVector();
  for (const [replica, eventNo] of ids) v.add({ replica, eventNo });
  return v;
}

const weakReq: Req = {
  ts: 1_700_000_000_123_456,
  id: { replica: 1, eventNo: 7 },
  op: 'put',
  args: toFrozenJson({
    key: 'a',
    value: { n: 1.5, list: [true, null, 'x'], nested: { deep: [] } },
  }),
  strong: false,
  causalCtx: null,
};

const strongReq: Req = {
  ts: 1_700_000_000_123_999,
  id: { replica: 2, eventNo: 3 },
  op: 'transfer',
  args: toFrozenJson(['from', 'to', 10]),
  strong: true,
  // Prefixes for replicas 0 and 1, gaps (dots) for replica 2.
  causalCtx: dvv([
    [0, 1],
    [0, 2],
    [1, 1],
    [2, 2],
    [2, 5],
  ]),
};

const everyKind: HostRecord[] = [
  { layer: 'core', record: { kind: 'req', req: weakReq } },
  { layer: 'core', record: { kind: 'req', req: strongReq } },
  {
    layer: 'core',
    record: {
      kind: 'commit',
      ids: [
        { replica: 1, eventNo: 7 },
        { replica: 2, eventNo: 3 },
      ],
    },
  },
  { layer: 'cab', record: { kind: 'promise', ballot: 513 } },
  {
    layer: 'cab',
    record: {
      kind: 'accept',
      instance: 4,
      ballot: 513,
      value: [
        { id: { replica: 2, eventNo: 3 }, prevStrong: 0 },
        { id: { replica: 0, eventNo: 9 }, prevStrong: 4 },
      ],
    },
  },
  // A gap filled by a new leader: an empty batch.
  { layer: 'cab', record: { kind: 'accept', instance: 5, ballot: 769, value: [] } },
  { layer: 'cab', record: { kind: 'truncate', below: 3 } },
  { layer: 'core', record: { kind: 'req', req: { ...weakReq, args: null } } },
];

function checkpointRecord(finalized: number): HostRecord {
  const record: HostCheckpoint = {
    kind: 'checkpoint',
    core: {
      finalized,
      state: [
        ['a', toFrozenJson({ n: finalized, list: [1, 'two', null] })],
        ['b', toFrozenJson('text')],
      ],
      reqs: [weakReq, strongReq],
      committedLive: 1,
      known: dvv([
        [0, 1],
        [1, 1],
        [1, 2],
        [1, 7],
        [2, 9],
      ]),
      hlc: 1_700_000_000_200_000,
      eventNo: 2,
      lastStrongEventNo: 2,
      finalizedOwnStrong: 1,
    },
    cab: [
      { kind: 'promise', ballot: 769 },
      { kind: 'truncate', below: 4 },
      { kind: 'accept', instance: 5, ballot: 769, value: [{ id: strongReq.id, prevStrong: 0 }] },
      { kind: 'accept', instance: 6, ballot: 769, value: [] },
    ],
    held: [{ ...weakReq, id: { replica: 2, eventNo: 1 } }],
    delivered: [
      { replica: 0, eventNo: 4 },
      { replica: 2, eventNo: 3 },
    ],
    // The replica's second incarnation (core/op-id.ts).
    origin: 257,
  };
  return { layer: 'checkpoint', record };
}

function rowCount(dir: string): number {
  const db = new Database(path.join(dir, DB_FILE), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM records').pluck().get() as number;
  } finally {
    db.close();
  }
}

function reqs(records: HostRecord[]): Req[] {
  return records.flatMap((r) =>
    r.layer === 'core' && r.record.kind === 'req' ? [r.record.req] : [],
  );
}

/** The kinds of the rows of the records table in `dir`, in order (read past the storage). */
function rowKinds(dir: string): unknown[] {
  const db = new Database(path.join(dir, DB_FILE), { readonly: true });
  const kinds = db.prepare('SELECT kind FROM records ORDER BY seq').pluck().all();
  db.close();
  return kinds;
}

function isDeepFrozen(v: JsonValue): boolean {
  if (typeof v !== 'object' || v === null) return true;
  return Object.isFrozen(v) && Object.values(v).every(isDeepFrozen);
}

describe('SqliteStorage', () => {
  it('round-trips every record kind', () => {
    const s = open();
    s.append(everyKind);
    const loaded = s.load();
    expect(loaded).toEqual(everyKind);
    const identity: HostRecord = { layer: 'identity', record: { kind: 'identity', origin: 513 } };
    const chunk = (index: number, part: TransferPart): HostRecord => ({
      layer: 'transfer',
      record: { kind: 'chunk', peer: 0, session: 1_700_000_000_123, index, total: 4, part },
    });
    const chunks = [
      chunk(0, {
        kind: 'header',
        header: {
          finalized: 10,
          committedLive: 1,
          known: { '0': [3], '2': [1, 4] },
          hlc: 1_700_000_000_200_000,
          truncatedBelow: 2,
          delivered: [{ replica: 0, eventNo: 3 }],
          counts: { state: 1, reqs: 1, held: 1 },
          digest: '0123456789abcdef0123456789abcdef',
        },
      }),
      chunk(1, { kind: 'state', entries: [['a', toFrozenJson({ n: 1, list: [1, null] })]] }),
      chunk(2, { kind: 'reqs', reqs: [strongReq] }),
      chunk(3, { kind: 'held', reqs: [weakReq] }),
    ];
    s.append([identity, ...chunks]);
    expect(s.load()).toEqual([...everyKind, identity, ...chunks]);

    const [weak, strong] = reqs(loaded);
    expect(weak!.causalCtx).toBeNull();
    expect(strong!.causalCtx).toBeInstanceOf(DottedVersionVector);
    expect(strong!.causalCtx!.toJSON()).toEqual(strongReq.causalCtx!.toJSON());
    expect(strong!.causalCtx!.has({ replica: 2, eventNo: 5 })).toBe(true);
    expect(strong!.causalCtx!.has({ replica: 2, eventNo: 3 })).toBe(false);
    expect(strong!.causalCtx!.includes(strongReq.causalCtx!)).toBe(true);
  });

  it('loads args as frozen JSON, like live Reqs', () => {
    const s = open();
    s.append(everyKind);
    for (const req of reqs(s.load())) {
      expect(isDeepFrozen(req.args)).toBe(true);
      // Already-frozen JSON is returned as it is: the loaded value is branded like a live one.
      expect(toFrozenJson(req.args)).toBe(req.args);
    }
  });

  it('keeps write order across appends', () => {
    const s = open();
    const all: HostRecord[] = [];
    for (let b = 0; b < 10; b++) {
      const batch = Array.from({ length: b + 1 }, (_, i) => writerRecord(all.length + i));
      s.append(batch);
      all.push(...batch);
    }
    s.append([]);
    expect(s.load()).toEqual(all);
    expect(s.stats().records).toBe(all.length);
  });

  it('keeps everything across close and reopen', () => {
    const dir = path.join(tmp, 'data');
    const first = open(dir);
    first.append(everyKind.slice(0, 3));
    first.close();
    first.close(); // idempotent
    expect(() => first.append(everyKind)).toThrow(/closed/);

    const second = open(dir);
    expect(second.load()).toEqual(everyKind.slice(0, 3));
    second.append(everyKind.slice(3));
    second.close();

    expect(open(dir).load()).toEqual(everyKind);
  });

  it('creates the directory and documents itself in meta', () => {
    const dir = path.join(tmp, 'nested', 'replica-4');
    const s = open(dir, 4);
    s.append(everyKind);
    expect(fs.existsSync(path.join(dir, DB_FILE))).toBe(true);
    s.close();

    const db = new Database(path.join(dir, DB_FILE), { readonly: true });
    try {
      const meta = Object.fromEntries(
        db
          .prepare('SELECT key, value FROM meta')
          .raw()
          .all()
          .map((r) => r as [string, string]),
      );
      expect(meta).toEqual({ format: 'creek', version: '5', replica_id: '4' });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const rows = db.prepare('SELECT layer, kind FROM records ORDER BY seq').all();
      // The two Reqs at the front share a row.
      expect(rows).toEqual([
        { layer: 'core', kind: 'reqs' },
        ...everyKind.slice(2).map((r) => ({ layer: r.layer, kind: r.record.kind })),
      ]);
    } finally {
      db.close();
    }
  });

  it('refuses a directory written by another replica, naming both ids and the directory', () => {
    const dir = path.join(tmp, 'data');
    open(dir, 3).close();
    let error: unknown;
    try {
      open(dir, 5);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    const msg = (error as Error).message;
    expect(msg).toContain(dir);
    expect(msg).toMatch(/replica 3\b/);
    expect(msg).toMatch(/replica 5\b/);
    // The refused open released the database: the owner can still open it.
    expect(open(dir, 3).load()).toEqual([]);
  });

  it('refuses a file that is not a Creek database', () => {
    const junkDir = path.join(tmp, 'junk');
    fs.mkdirSync(junkDir);
    fs.writeFileSync(path.join(junkDir, DB_FILE), 'this is not a database '.repeat(100));
    expect(() => open(junkDir)).toThrow(/not a Creek database/);

    const otherDir = path.join(tmp, 'other');
    fs.mkdirSync(otherDir);
    const db = new Database(path.join(otherDir, DB_FILE));
    db.exec('CREATE TABLE users (name TEXT)');
    db.close();
    expect(() => open(otherDir)).toThrow(/not a Creek database/);
  });

  it('refuses a second open of a directory that is in use', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append(everyKind.slice(0, 1));
    expect(() => open(dir)).toThrow(/in use/);
    // The first is unaffected.
    s.append(everyKind.slice(1));
    expect(s.load()).toEqual(everyKind);
  });

  it('opens with fsync', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir, 1, true);
    s.append(everyKind);
    expect(s.load()).toEqual(everyKind);
    s.close();
    expect(open(dir, 1, true).load()).toEqual(everyKind);
  });

  it('appends a batch as one transaction: a bad record mid-batch leaves nothing of it', () => {
    const s = open();
    s.append(everyKind.slice(0, 2));
    const batch = Array.from({ length: 5000 }, (_, n) => writerRecord(n));
    const bad: HostRecord = {
      layer: 'core',
      record: {
        kind: 'req',
        req: { ...weakReq, args: { n: 1n } as unknown as JsonValue },
      },
    };
    batch[2500] = bad;
    expect(() => s.append(batch)).toThrow(/req\.args\.n/);
    expect(s.load()).toEqual(everyKind.slice(0, 2));
    expect(s.stats().records).toBe(2);

    // Other unencodable values are refused too, rather than silently written as null.
    const nan: HostRecord = { layer: 'cab', record: { kind: 'promise', ballot: NaN } };
    expect(() => s.append([...everyKind, nan])).toThrow(/ballot/);
    expect(s.load()).toEqual(everyKind.slice(0, 2));

    // The storage is still usable, and a large batch goes in whole.
    batch[2500] = writerRecord(2500);
    s.append(batch);
    expect(s.load()).toEqual([...everyKind.slice(0, 2), ...batch]);
  });

  it('reports record count and size on disk', () => {
    const s = open();
    const empty = s.stats();
    expect(empty.records).toBe(0);
    expect(empty.bytes).toBeGreaterThan(0);
    s.append(Array.from({ length: 1000 }, (_, n) => writerRecord(n)));
    const full = s.stats();
    expect(full.records).toBe(1000);
    expect(full.bytes).toBeGreaterThan(empty.bytes);
    s.append(everyKind);
    expect(s.stats().records).toBe(1000 + everyKind.length);
  });

  it('reports a record it cannot read with its position, when its checksum holds', () => {
    // What the storage itself wrote wrong (its checksum is what was written): the codec refuses
    // it, naming it, and the replica does not start (ReplicaServer).
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append(everyKind);
    s.close();
    const db = new Database(path.join(dir, DB_FILE));
    db.prepare('UPDATE records SET body = \'{"ballot":"x"}\' WHERE kind = \'promise\'').run();
    checksumRows(db);
    db.close();
    const error = catching(() => open(dir).load());
    expect(error).not.toBeInstanceOf(StorageDamage);
    expect(error.message).toMatch(/record 3 \(cab\/promise\) is corrupt/);
  });

  it('checksums every row, chained from the checkpoint: zlib CRC-32s of what it wrote', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append([checkpointRecord(3), ...everyKind]);
    s.close();
    const db = new Database(path.join(dir, DB_FILE), { readonly: true });
    const [body, checkpointSum] = db.prepare('SELECT body, sum FROM checkpoint').raw().get() as [
      string,
      number,
    ];
    const rows = db.prepare('SELECT layer, kind, body, sum FROM records ORDER BY seq').raw().all();
    db.close();
    expect(checkpointSum).toBe(crc32(`checkpoint\n${body}`));
    let prev = checkpointSum;
    for (const [layer, kind, text, sum] of rows as [string, string, string, number][]) {
      expect(sum).toBe(crc32(`${layer}\n${kind}\n${text}`, prev));
      prev = sum;
    }
    expect(rows.length).toBeGreaterThan(3);
  });

  it('refuses a row whose bytes changed on disk, naming it, as StorageDamage', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append(everyKind);
    s.close();
    // One bit of the promise's body: 769 (0x301) read back as 768.
    const db = new Database(path.join(dir, DB_FILE));
    const body = db
      .prepare("SELECT body FROM records WHERE kind = 'promise'")
      .pluck()
      .get() as string;
    const flipped = body.replace(/\d(?=\D*$)/, (d) => String(Number(d) ^ 1));
    expect(flipped).not.toBe(body);
    db.prepare("UPDATE records SET body = ? WHERE kind = 'promise'").run(flipped);
    db.close();
    const error = catching(() => open(dir).load());
    expect(error).toBeInstanceOf(StorageDamage);
    expect(error.message).toBe(
      `${path.join(dir, DB_FILE)}: record 3 (cab/promise) does not match its checksum: it, or the row before it, is not what this replica wrote (a flipped bit, a torn page, an older version read back)`,
    );
  });

  it('refuses a checkpoint read back as an older version of itself: the rows after it say so', () => {
    const dir = path.join(tmp, 'data');
    open(dir).append([checkpointRecord(3), writerRecord(1)]);
    opened.pop()!.close();
    const reader = new Database(path.join(dir, DB_FILE), { readonly: true });
    const older = reader.prepare('SELECT seq, body, sum FROM checkpoint').raw().get() as unknown[];
    reader.close();
    open(dir).append([checkpointRecord(6), writerRecord(2), writerRecord(3)]);
    opened.pop()!.close();
    // Its own checksum holds: it is a checkpoint this replica wrote, once.
    const db = new Database(path.join(dir, DB_FILE));
    db.prepare('UPDATE checkpoint SET seq = ?, body = ?, sum = ?').run(...older);
    db.close();
    const error = catching(() => open(dir).load());
    expect(error).toBeInstanceOf(StorageDamage);
    expect(error.message).toMatch(/: record 1 \(\w+\/\w+\) does not match its checksum: /);
  });

  it('chains what it appends after a reopen to what is on disk, loaded or not', () => {
    const dir = path.join(tmp, 'data');
    open(dir).append([checkpointRecord(3), writerRecord(1)]);
    opened.pop()!.close();
    // Appended without a load first: the chain is read from the last row.
    open(dir).append([writerRecord(2)]);
    opened.pop()!.close();
    const s = open(dir);
    expect(s.load()).toEqual([checkpointRecord(3), writerRecord(1), writerRecord(2)]);
    s.append([writerRecord(3)]);
    s.close();
    expect(open(dir).load()).toEqual([checkpointRecord(3), ...[1, 2, 3].map(writerRecord)]);
  });

  it('writes the consecutive Reqs of one append in one row and loads them back in order', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    const reqs = Array.from({ length: 30 }, (_, i): HostRecord => ({
      layer: 'core',
      record: { kind: 'req', req: { ...weakReq, id: { replica: 1, eventNo: i + 1 } } },
    }));
    const batch = [...reqs.slice(0, 20), everyKind[3]!, ...reqs.slice(20, 21)];
    s.append(batch);
    s.append(reqs.slice(21));
    expect(s.stats().records).toBe(30 + 1);
    expect(s.load()).toEqual([...batch, ...reqs.slice(21)]);
    s.close();
    const rows = rowKinds(dir);
    // 20 Reqs, the promise, a lone Req, then the 9 Reqs of the second append.
    expect(rows).toEqual(['reqs', 'promise', 'req', 'reqs']);
    // Counted from the rows when the directory is opened again.
    const again = open(dir);
    expect(again.stats().records).toBe(31);
    expect(again.load()).toEqual([...batch, ...reqs.slice(21)]);
    again.close();
  });

  it('writes the consecutive commits of one append in one row and loads them back, each apart', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    const commit = (...eventNos: number[]): HostRecord => ({
      layer: 'core',
      record: { kind: 'commit', ids: eventNos.map((eventNo) => ({ replica: 1, eventNo })) },
    });
    const req: HostRecord = { layer: 'core', record: { kind: 'req', req: weakReq } };
    const first = [commit(1), commit(2, 3), commit(4), req, commit(5), commit(6)];
    s.append(first);
    s.append([commit(7)]);
    // Each commit comes back as it was written: the host takes the last id of each for a strong
    // op delivered, so joining them would lose deliveries.
    const expected = [...first, commit(7)];
    expect(s.load()).toEqual(expected);
    expect(s.stats().records).toBe(7);
    s.close();
    const rows = rowKinds(dir);
    // A Req between them keeps its place: commits on either side of it share no row.
    expect(rows).toEqual(['commits', 'req', 'commits', 'commit']);
    const again = open(dir);
    expect(again.stats().records).toBe(7);
    expect(again.load()).toEqual(expected);
    again.close();
  });

  it('loads what was appended, as written, however records fall into rows (property)', () => {
    const commit = (n: number): HostRecord => ({
      layer: 'core',
      record: {
        kind: 'commit',
        ids: Array.from({ length: 1 + (n % 3) }, (_, k) => ({ replica: k, eventNo: n + k })),
      },
    });
    // Every kind, with commits and Reqs often next to each other, and now and then a checkpoint.
    const record = fc.oneof(
      { weight: 4, arbitrary: fc.nat(50).map(commit) },
      { weight: 3, arbitrary: fc.constantFrom(...everyKind) },
      { weight: 1, arbitrary: fc.nat(9).map((n) => checkpointRecord(n)) },
    );
    let run = 0;
    fc.assert(
      fc.property(fc.array(fc.array(record, { maxLength: 12 }), { maxLength: 6 }), (batches) => {
        const dir = path.join(tmp, `prop-${run++}`);
        const s = open(dir);
        for (const b of batches) s.append(b);
        const all = batches.flat();
        let last = -1;
        all.forEach((r, i) => {
          if (r.layer === 'checkpoint') last = i;
        });
        const expected = last < 0 ? all : all.slice(last);
        const count = expected.filter((r) => r.layer !== 'checkpoint').length;
        expect(s.load()).toEqual(expected);
        expect(s.stats().records).toBe(count);
        s.close();
        const again = open(dir);
        expect(again.load()).toEqual(expected);
        expect(again.stats().records).toBe(count);
        again.close();
      }),
      { numRuns: 150 },
    );
  });

  it('a checkpoint deletes every record before it, in its transaction; load returns it first', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append(everyKind);
    const first = checkpointRecord(10);
    const after = [writerRecord(0), writerRecord(1)];
    s.append([writerRecord(7), first, ...after]);
    expect(s.load()).toEqual([first, ...after]);
    expect(s.stats().records).toBe(2);
    expect(s.stats().checkpointBytes).toBeGreaterThan(100);

    // The last checkpoint of a batch wins; what a batch writes before it is not even written.
    const second = checkpointRecord(20);
    s.append([writerRecord(2), second, writerRecord(3), checkpointRecord(30), writerRecord(4)]);
    expect(s.load()).toEqual([checkpointRecord(30), writerRecord(4)]);
    s.close();
    expect(rowCount(dir)).toBe(1);

    // Across a reopen, with every field of the checkpoint as it was written.
    const again = open(dir);
    const [loaded] = again.load();
    expect(loaded).toEqual(checkpointRecord(30));
    const core = (loaded as Extract<HostRecord, { layer: 'checkpoint' }>).record.core;
    expect(core.known).toBeInstanceOf(DottedVersionVector);
    expect(core.known.has({ replica: 1, eventNo: 7 })).toBe(true);
    expect(core.known.has({ replica: 1, eventNo: 3 })).toBe(false);
    expect(core.reqs[1]!.causalCtx).toBeInstanceOf(DottedVersionVector);
    expect(isDeepFrozen(core.state[0]![1])).toBe(true);
    expect(again.stats().records).toBe(1);
  });

  it('counts the transactions it committed since it was opened: not empty batches, not failed ones', () => {
    const dir = path.join(tmp, 'commits');
    const s = open(dir);
    expect(s.stats().commits).toBe(0);
    s.append(everyKind);
    s.append([]);
    s.append([writerRecord(5), writerRecord(6)]);
    const bad: HostRecord = { layer: 'cab', record: { kind: 'promise', ballot: NaN } };
    expect(() => s.append([writerRecord(7), bad])).toThrow(/ballot/);
    expect(s.stats().commits).toBe(2);
    s.close();
    expect(open(dir).stats().commits).toBe(0);
  });

  it('a batch that fails after its checkpoint deletes nothing', () => {
    const s = open();
    s.append(everyKind);
    const bad: HostRecord = { layer: 'cab', record: { kind: 'promise', ballot: NaN } };
    expect(() => s.append([checkpointRecord(1), writerRecord(0), bad])).toThrow(/ballot/);
    expect(s.load()).toEqual(everyKind);
    expect(s.stats().records).toBe(everyKind.length);
    expect(s.stats().checkpointBytes).toBe(0);
    // A checkpoint that cannot be encoded is refused too.
    const broken = checkpointRecord(2) as Extract<HostRecord, { layer: 'checkpoint' }>;
    const nanState: HostRecord = {
      layer: 'checkpoint',
      record: { ...broken.record, core: { ...broken.record.core, hlc: Infinity } },
    };
    expect(() => s.append([nanState])).toThrow(/hlc/);
    expect(s.load()).toEqual(everyKind);
  });

  it('keeps the disk bounded when checkpoints come regularly', () => {
    const dir = path.join(tmp, 'data');
    const withCheckpoints = open(dir);
    let n = 0;
    for (let round = 0; round < 40; round++) {
      withCheckpoints.append(Array.from({ length: 1000 }, () => writerRecord(n++)));
      withCheckpoints.append([checkpointRecord(n)]);
    }
    const bounded = fs.statSync(path.join(dir, DB_FILE)).size;
    expect(withCheckpoints.stats().records).toBe(0);
    // 40,000 records of about 150 bytes were written; the database keeps one checkpoint (the WAL,
    // which SQLite recycles, is bounded by its own limit).
    expect(bounded).toBeLessThan(512 * 1024);
    expect(withCheckpoints.stats().bytes).toBeLessThan(9 * 1024 * 1024);

    const other = path.join(tmp, 'without');
    const without = open(other);
    for (let k = 0; k < 40_000; k += 1000)
      without.append(Array.from({ length: 1000 }, (_, i) => writerRecord(k + i)));
    expect(fs.statSync(path.join(other, DB_FILE)).size).toBeGreaterThan(4 * bounded);
  });

  it('upgrades a version-1 directory in place, keeping its records', () => {
    const dir = path.join(tmp, 'data');
    open(dir).append(everyKind);
    opened.pop()!.close();
    // Make it what version 1 wrote: no checkpoint table, an AUTOINCREMENT records table.
    const db = new Database(path.join(dir, DB_FILE));
    db.exec(`
      DROP TABLE checkpoint;
      ALTER TABLE records RENAME TO r;
      CREATE TABLE records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        layer TEXT NOT NULL CHECK (layer IN ('core', 'cab')),
        kind TEXT NOT NULL,
        body TEXT NOT NULL
      );
      INSERT INTO records SELECT seq, layer, kind, body FROM r;
      DROP TABLE r;
      UPDATE meta SET value = '1' WHERE key = 'version';
    `);
    db.close();

    const s = open(dir);
    // Its ops were numbered under its id: the upgrade says so (version 3's identity record).
    expect(s.load()).toEqual([
      ...everyKind,
      { layer: 'identity', record: { kind: 'identity', origin: 1 } },
    ]);
    s.append([checkpointRecord(5), writerRecord(0)]);
    expect(s.load()).toEqual([checkpointRecord(5), writerRecord(0)]);
    s.close();
    const check = new Database(path.join(dir, DB_FILE), { readonly: true });
    try {
      expect(check.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get()).toBe('5');
      const table = check
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'records'")
        .pluck()
        .get() as string;
      expect(table).not.toMatch(/AUTOINCREMENT/);
    } finally {
      check.close();
    }
  });

  it('refuses a format version it does not know', () => {
    const dir = path.join(tmp, 'data');
    open(dir).close();
    const db = new Database(path.join(dir, DB_FILE));
    db.exec("UPDATE meta SET value = '7' WHERE key = 'version'");
    db.close();
    expect(() => open(dir)).toThrow(
      /format version 7, written by a newer release of creek; this build reads versions 1 to 6\. A data directory never goes back to an older release/,
    );
  });

  it('refuses a format version that is not one', () => {
    const dir = path.join(tmp, 'data');
    open(dir).close();
    const db = new Database(path.join(dir, DB_FILE));
    db.exec("UPDATE meta SET value = 'x' WHERE key = 'version'");
    db.close();
    expect(() => open(dir)).toThrow(/format version x; this build reads versions 1 to 6/);
  });

  it.each(['3', '4'])(
    'upgrades a version-%s directory in place: its rows get their checksums, and it is version 5',
    (version) => {
      const dir = path.join(tmp, 'data');
      const old = open(dir);
      old.append([checkpointRecord(5), writerRecord(0), writerRecord(1)]);
      old.close();
      // Make it what versions 3 and 4 wrote: rows and a checkpoint without checksums.
      const db = new Database(path.join(dir, DB_FILE));
      db.exec(`
        ALTER TABLE records DROP COLUMN sum;
        ALTER TABLE checkpoint DROP COLUMN sum;
        UPDATE meta SET value = '${version}' WHERE key = 'version';
      `);
      db.close();
      const s = open(dir);
      expect(s.load()).toEqual([checkpointRecord(5), writerRecord(0), writerRecord(1)]);
      s.append([writerRecord(2)]);
      s.close();
      const check = new Database(path.join(dir, DB_FILE));
      try {
        expect(check.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get()).toBe(
          '5',
        );
        // From now on its rows are checked: a changed one is refused.
        check.prepare('UPDATE records SET body = replace(body, \'"op"\', \'"oq"\')').run();
      } finally {
        check.close();
      }
      const again = open(dir);
      expect(() => again.load()).toThrow(StorageDamage);
    },
  );

  it('reports a checkpoint it cannot read, when its checksum holds, and refuses a changed one', () => {
    const dir = path.join(tmp, 'data');
    const s = open(dir);
    s.append([checkpointRecord(1)]);
    s.close();
    const db = new Database(path.join(dir, DB_FILE));
    db.prepare(`UPDATE checkpoint SET body = '{"core":{"finalized":"x"}}'`).run();
    db.close();
    const changed = catching(() => open(dir).load());
    expect(changed).toBeInstanceOf(StorageDamage);
    expect(changed.message).toMatch(/: the checkpoint does not match its checksum: /);
    opened.pop()!.close();
    const fix = new Database(path.join(dir, DB_FILE));
    checksumRows(fix);
    fix.close();
    expect(() => open(dir).load()).toThrow(/the checkpoint is corrupt: core.finalized/);
  });
});

/** The error `fn` throws. */
function catching(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('it threw nothing');
}
