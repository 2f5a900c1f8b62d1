import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toFrozenJson } from '@creek/app';
import type { ConfigEntry } from '@creek/replica/cab/configuration.js';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { Req } from '@creek/replica/core/types.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import { fromChunks, toChunks, type TransferredState } from '@creek/replica/host/state-transfer.js';
import { DB_FILE, SqliteStorage } from '../../src/node/storage.js';
import { checksumRows } from '../../src/node/storage-migrations.js';

/**
 * The storage's records against rows exactly as format version 3 stores them: such a directory
 * loads as these records, and these records are written as those rows, byte for byte, so that a
 * change to how records are encoded or decoded cannot change the format unnoticed. (Version 5
 * added each row's checksum beside them, record-checksums.ts: rows written here by hand get theirs
 * from `checksumRows`, as if the storage had written them.)
 */

let tmp: string;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'creek-record-codec-'));
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const ctx = new DottedVersionVector();
for (const [replica, eventNo] of [
  [0, 1],
  [0, 2],
  [1, 1],
  [2, 2],
  [2, 5],
] as const)
  ctx.add({ replica, eventNo });

const weak: Req = {
  ts: 1_700_000_000_123_456,
  id: { replica: 1, eventNo: 7 },
  op: 'put',
  args: toFrozenJson({ key: 'a', value: { n: 1.5, list: [true, null, 'x'] } }),
  strong: false,
  causalCtx: null,
  session: { id: 'session-abc_123', seq: 4, acked: 2 },
};

const strong: Req = {
  ts: 1_700_000_000_123_999,
  id: { replica: 2, eventNo: 3 },
  op: 'transfer',
  args: toFrozenJson(['from', 'to', 10]),
  strong: true,
  causalCtx: ctx,
};

const entry: ConfigEntry = {
  from: 40,
  members: [
    { id: 0, address: 'ws://10.0.0.1:7100' },
    { id: 3, address: 'ws://10.0.0.4:7100' },
  ],
  retired: [1],
  nonce: 'a1b2c3',
};

const header = {
  finalized: 10,
  committedLive: 1,
  known: { '0': [3], '2': [1, 4] },
  hlc: 1_700_000_000_200_000,
  truncatedBelow: 2,
  config: [entry],
  delivered: [{ replica: 0, eventNo: 3 }],
  counts: { state: 1, reqs: 1, held: 1 },
  digest: '0123456789abcdef0123456789abcdef',
};

const chunk = { kind: 'chunk', peer: 0, session: 1_700_000_000_123, total: 4 } as const;

/** Every row kind, each record appended alone (one row each). */
const single: HostRecord[] = [
  { layer: 'core', record: { kind: 'req', req: weak } },
  { layer: 'cab', record: { kind: 'promise', ballot: 513 } },
  { layer: 'core', record: { kind: 'req', req: weak } },
  { layer: 'core', record: { kind: 'req', req: strong } },
  { layer: 'core', record: { kind: 'commit', ids: [weak.id, strong.id] } },
  { layer: 'cab', record: { kind: 'truncate', below: 3 } },
  { layer: 'core', record: { kind: 'commit', ids: [{ replica: 1, eventNo: 8 }] } },
  { layer: 'core', record: { kind: 'commit', ids: [] } },
  {
    layer: 'cab',
    record: {
      kind: 'accept',
      instance: 4,
      ballot: 513,
      value: [
        { id: strong.id, prevStrong: 0 },
        { id: { replica: 0, eventNo: 9 }, prevStrong: 4 },
      ],
    },
  },
  {
    layer: 'cab',
    record: {
      kind: 'accept',
      instance: 5,
      ballot: 769,
      value: [
        {
          reconfig: {
            change: { op: 'add', member: { id: 3, address: 'ws://10.0.0.4:7100' } },
            nonce: 'a1b2c3',
          },
        },
      ],
    },
  },
  {
    layer: 'cab',
    record: {
      kind: 'accept',
      instance: 6,
      ballot: 769,
      value: [{ reconfig: { change: { op: 'remove', id: 1 }, nonce: 'd4e5f6' } }],
    },
  },
  { layer: 'cab', record: { kind: 'config', entry } },
  {
    layer: 'cab',
    record: {
      kind: 'config',
      entry: { from: 0, members: [{ id: 0, address: 'ws://10.0.0.1:7100' }], retired: [] },
    },
  },
  { layer: 'identity', record: { kind: 'identity', origin: 257 } },
  { layer: 'transfer', record: { ...chunk, index: 0, part: { kind: 'header', header } } },
  {
    layer: 'transfer',
    record: {
      ...chunk,
      index: 1,
      part: { kind: 'state', entries: [['a', toFrozenJson({ n: 1, list: [1, null] })]] },
    },
  },
  { layer: 'transfer', record: { ...chunk, index: 2, part: { kind: 'reqs', reqs: [strong] } } },
  { layer: 'transfer', record: { ...chunk, index: 3, part: { kind: 'held', reqs: [weak] } } },
];

/** Appended together: consecutive Reqs share a row, and so do consecutive commits. */
const shared: HostRecord[][] = [
  [single[2]!, single[3]!],
  [single[4]!, single[6]!, single[7]!],
];

const checkpoint: HostRecord = {
  layer: 'checkpoint',
  record: {
    kind: 'checkpoint',
    core: {
      finalized: 10,
      state: [
        ['a', toFrozenJson({ n: 10, list: [1, 'two', null] })],
        ['b', toFrozenJson('text')],
      ],
      reqs: [weak, strong],
      committedLive: 1,
      known: ctx,
      hlc: 1_700_000_000_200_000,
      eventNo: 2,
      lastStrongEventNo: 2,
      finalizedOwnStrong: 1,
    },
    cab: [
      { kind: 'promise', ballot: 769 },
      { kind: 'truncate', below: 4 },
      { kind: 'accept', instance: 5, ballot: 769, value: [{ id: strong.id, prevStrong: 0 }] },
      { kind: 'config', entry },
    ],
    held: [{ ...weak, id: { replica: 2, eventNo: 1 } }],
    delivered: [{ replica: 0, eventNo: 4 }],
    origin: null,
  },
};

/** The rows format version 3 stores for `single`, then for `shared`: (layer, kind, body). */
const ROWS: [string, string, string][] = [
  [
    'core',
    'req',
    '{"req":{"ts":1700000000123456,"id":{"replica":1,"eventNo":7},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}}}',
  ],
  ['cab', 'promise', '{"ballot":513}'],
  [
    'core',
    'req',
    '{"req":{"ts":1700000000123456,"id":{"replica":1,"eventNo":7},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}}}',
  ],
  [
    'core',
    'req',
    '{"req":{"ts":1700000000123999,"id":{"replica":2,"eventNo":3},"op":"transfer","args":["from","to",10],"strong":true,"causalCtx":{"0":[2],"1":[1],"2":[0,2,5]}}}',
  ],
  ['core', 'commit', '{"ids":[{"replica":1,"eventNo":7},{"replica":2,"eventNo":3}]}'],
  ['cab', 'truncate', '{"below":3}'],
  ['core', 'commit', '{"ids":[{"replica":1,"eventNo":8}]}'],
  ['core', 'commit', '{"ids":[]}'],
  [
    'cab',
    'accept',
    '{"instance":4,"ballot":513,"value":[{"id":{"replica":2,"eventNo":3},"prevStrong":0},{"id":{"replica":0,"eventNo":9},"prevStrong":4}]}',
  ],
  [
    'cab',
    'accept',
    '{"instance":5,"ballot":769,"value":[{"reconfig":{"nonce":"a1b2c3","change":{"op":"add","member":{"id":3,"address":"ws://10.0.0.4:7100"}}}}]}',
  ],
  [
    'cab',
    'accept',
    '{"instance":6,"ballot":769,"value":[{"reconfig":{"nonce":"d4e5f6","change":{"op":"remove","id":1}}}]}',
  ],
  [
    'cab',
    'config',
    '{"entry":{"from":40,"members":[{"id":0,"address":"ws://10.0.0.1:7100"},{"id":3,"address":"ws://10.0.0.4:7100"}],"retired":[1],"nonce":"a1b2c3"}}',
  ],
  [
    'cab',
    'config',
    '{"entry":{"from":0,"members":[{"id":0,"address":"ws://10.0.0.1:7100"}],"retired":[]}}',
  ],
  ['host', 'identity', '{"origin":257}'],
  [
    'host',
    'chunk',
    '{"peer":0,"session":1700000000123,"index":0,"total":4,"part":{"kind":"header","header":{"finalized":10,"committedLive":1,"known":{"0":[3],"2":[1,4]},"hlc":1700000000200000,"truncatedBelow":2,"config":[{"from":40,"members":[{"id":0,"address":"ws://10.0.0.1:7100"},{"id":3,"address":"ws://10.0.0.4:7100"}],"retired":[1],"nonce":"a1b2c3"}],"delivered":[{"replica":0,"eventNo":3}],"counts":{"state":1,"reqs":1,"held":1},"digest":"0123456789abcdef0123456789abcdef"}}}',
  ],
  [
    'host',
    'chunk',
    '{"peer":0,"session":1700000000123,"index":1,"total":4,"part":{"kind":"state","entries":[["a",{"n":1,"list":[1,null]}]]}}',
  ],
  [
    'host',
    'chunk',
    '{"peer":0,"session":1700000000123,"index":2,"total":4,"part":{"kind":"reqs","reqs":[{"ts":1700000000123999,"id":{"replica":2,"eventNo":3},"op":"transfer","args":["from","to",10],"strong":true,"causalCtx":{"0":[2],"1":[1],"2":[0,2,5]}}]}}',
  ],
  [
    'host',
    'chunk',
    '{"peer":0,"session":1700000000123,"index":3,"total":4,"part":{"kind":"held","reqs":[{"ts":1700000000123456,"id":{"replica":1,"eventNo":7},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}}]}}',
  ],
  [
    'core',
    'reqs',
    '{"reqs":[{"ts":1700000000123456,"id":{"replica":1,"eventNo":7},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}},{"ts":1700000000123999,"id":{"replica":2,"eventNo":3},"op":"transfer","args":["from","to",10],"strong":true,"causalCtx":{"0":[2],"1":[1],"2":[0,2,5]}}]}',
  ],
  [
    'core',
    'commits',
    '{"commits":[[{"replica":1,"eventNo":7},{"replica":2,"eventNo":3}],[{"replica":1,"eventNo":8}],[]]}',
  ],
];

/** The checkpoint table's body format version 3 stores for `checkpoint`. */
const CHECKPOINT =
  '{"core":{"finalized":10,"state":[["a",{"n":10,"list":[1,"two",null]}],["b","text"]],"reqs":[{"ts":1700000000123456,"id":{"replica":1,"eventNo":7},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}},{"ts":1700000000123999,"id":{"replica":2,"eventNo":3},"op":"transfer","args":["from","to",10],"strong":true,"causalCtx":{"0":[2],"1":[1],"2":[0,2,5]}}],"committedLive":1,"known":{"0":[2],"1":[1],"2":[0,2,5]},"hlc":1700000000200000,"eventNo":2,"lastStrongEventNo":2,"finalizedOwnStrong":1},"cab":[{"kind":"promise","ballot":769},{"kind":"truncate","below":4},{"kind":"accept","instance":5,"ballot":769,"value":[{"id":{"replica":2,"eventNo":3},"prevStrong":0}]},{"kind":"config","entry":{"from":40,"members":[{"id":0,"address":"ws://10.0.0.1:7100"},{"id":3,"address":"ws://10.0.0.4:7100"}],"retired":[1],"nonce":"a1b2c3"}}],"held":[{"ts":1700000000123456,"id":{"replica":2,"eventNo":1},"op":"put","args":{"key":"a","value":{"n":1.5,"list":[true,null,"x"]}},"strong":false,"causalCtx":null,"session":{"id":"session-abc_123","seq":4,"acked":2}}],"delivered":[{"replica":0,"eventNo":4}],"origin":null}';

/** The records as they load: as they were written. */
function loaded(): HostRecord[] {
  return [checkpoint, ...single, ...shared.flat()];
}

function dump(dir: string): { rows: unknown[]; checkpoint: unknown } {
  const db = new Database(path.join(dir, DB_FILE), { readonly: true });
  try {
    return {
      rows: db.prepare('SELECT layer, kind, body FROM records ORDER BY seq').raw().all(),
      checkpoint: db.prepare('SELECT body FROM checkpoint').pluck().get(),
    };
  } finally {
    db.close();
  }
}

describe('records, against rows as format version 3 stores them', () => {
  it('loads each row kind and the checkpoint as stored', () => {
    const dir = path.join(tmp, 'data');
    SqliteStorage.open(dir, { replicaId: 1 }).close();
    const db = new Database(path.join(dir, DB_FILE));
    const insert = db.prepare('INSERT INTO records (layer, kind, body, sum) VALUES (?, ?, ?, 0)');
    for (const row of ROWS) insert.run(...row);
    db.prepare('INSERT INTO checkpoint (id, seq, body, sum) VALUES (1, 1, ?, 0)').run(CHECKPOINT);
    checksumRows(db);
    db.close();

    const s = SqliteStorage.open(dir, { replicaId: 1 });
    const records = s.load();
    s.close();
    expect(records).toEqual(loaded());
    const first = records[0]!;
    if (first.layer !== 'checkpoint') throw new Error('no checkpoint first');
    expect(first.record.core.known).toBeInstanceOf(DottedVersionVector);
    expect(first.record.core.known.toJSON()).toEqual(ctx.toJSON());
    expect(Object.isFrozen(first.record.core.state[0]![1])).toBe(true);
    const req = records.find((r) => r.layer === 'core' && r.record.kind === 'req');
    expect(req).toEqual({ layer: 'core', record: { kind: 'req', req: weak } });
  });

  it('writes those rows, byte for byte', () => {
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    s.append([checkpoint]);
    for (const r of single) s.append([r]);
    for (const batch of shared) s.append(batch);
    s.close();
    expect(dump(dir)).toEqual({ rows: ROWS, checkpoint: CHECKPOINT });
  });

  it('names the row and the field a corrupt body fails at', () => {
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    s.append(shared[0]!);
    s.append([single[8]!]);
    s.close();
    const corrupt = (kind: string, body: string, expected: RegExp) => {
      const db = new Database(path.join(dir, DB_FILE));
      const before = db.prepare('SELECT body FROM records WHERE kind = ?').pluck().get(kind);
      db.prepare('UPDATE records SET body = ? WHERE kind = ?').run(body, kind);
      checksumRows(db);
      db.close();
      const again = SqliteStorage.open(dir, { replicaId: 1 });
      try {
        expect(() => again.load()).toThrow(expected);
      } finally {
        again.close();
        const fix = new Database(path.join(dir, DB_FILE));
        fix.prepare('UPDATE records SET body = ? WHERE kind = ?').run(before, kind);
        checksumRows(fix);
        fix.close();
      }
    };
    const reqs = JSON.parse(ROWS[18]![2]) as { reqs: { id: { eventNo: unknown } }[] };
    reqs.reqs[1]!.id.eventNo = '3';
    corrupt(
      'reqs',
      JSON.stringify(reqs),
      /record 1 \(core\/reqs\) is corrupt: reqs\[1\]\.id\.eventNo/,
    );
    corrupt(
      'accept',
      '{"instance":4,"ballot":513,"value":[{"id":{"replica":2,"eventNo":3},"prevStrong":null}]}',
      /record 2 \(cab\/accept\) is corrupt: value\[0\]\.prevStrong: .*received null/,
    );
    // A batch entry is an op id or a membership change: named by the one it came closest to.
    corrupt(
      'accept',
      '{"instance":4,"ballot":513,"value":[{"reconfig":{"nonce":"x","change":{"op":"move"}}}]}',
      /record 2 \(cab\/accept\) is corrupt: value\[0\]\.reconfig\.change\.op/,
    );
    corrupt('accept', '[]', /record 2 \(cab\/accept\) is corrupt: body:/);
    corrupt('accept', '{"ballot":', /record 2 \(cab\/accept\) is corrupt: .*JSON/);

    const db = new Database(path.join(dir, DB_FILE));
    db.prepare("UPDATE records SET kind = 'vote' WHERE kind = 'accept'").run();
    checksumRows(db);
    db.close();
    const again = SqliteStorage.open(dir, { replicaId: 1 });
    expect(() => again.load()).toThrow(
      /record 2 \(cab\/vote\) is corrupt: unknown record type cab\/vote/,
    );
    again.close();
  });

  it('keeps what a replica knew of a divergence, in a record and in a checkpoint', () => {
    const report = {
      position: 7,
      exact: true,
      op: 'tally',
      id: 'r1#3',
      detectedAt: 9,
      digests: { '0': 'a'.repeat(32), '1': 'b'.repeat(32), '2': null },
      side: 'minority' as const,
      servesStable: false,
      reason: "the replicas' states differ after committed position 7",
    };
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    const withReport: HostRecord = {
      layer: 'checkpoint',
      record: {
        ...(checkpoint.record as Extract<HostRecord, { layer: 'checkpoint' }>['record']),
        divergence: report,
      },
    };
    const records: HostRecord[] = [
      withReport,
      { layer: 'divergence', record: { kind: 'divergence', report } },
      { layer: 'divergence', record: { kind: 'divergence', report: null } },
    ];
    s.append(records);
    expect(s.load()).toEqual(records);
    s.close();
    expect(dump(dir).rows).toEqual([
      ['host', 'divergence', JSON.stringify({ report })],
      ['host', 'divergence', '{"report":null}'],
    ]);
    // A corrupt one is refused, naming its field.
    const db = new Database(path.join(dir, DB_FILE));
    db.prepare('UPDATE records SET body = ? WHERE body = \'{"report":null}\'').run(
      JSON.stringify({ report: { ...report, side: 'left' } }),
    );
    checksumRows(db);
    db.close();
    const again = SqliteStorage.open(dir, { replicaId: 1 });
    expect(() => again.load()).toThrow(/\(host\/divergence\) is corrupt: report\.side/);
    again.close();
  });

  it("keeps a Req's caller, in its record, a checkpoint and a transfer's chunks, read back frozen", () => {
    const user = toFrozenJson({ id: 'alice', claims: { sub: 'alice', roles: ['admin'] } });
    const signed: Req = { ...weak, user: user as unknown as NonNullable<Req['user']> };
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    // A checkpoint drops the records before it: it comes first.
    s.append([{ ...checkpoint, record: { ...checkpoint.record, held: [signed] } }]);
    s.append([{ layer: 'core', record: { kind: 'req', req: signed } }]);
    const state: TransferredState = {
      finalized: 0,
      committedLive: 0,
      known: ctx,
      hlc: 1,
      truncatedBelow: 0,
      config: [],
      delivered: [],
      state: [],
      reqs: [signed],
      held: [],
    };
    const parts = toChunks(state);
    s.append(
      parts.map((part, index): HostRecord => ({
        layer: 'transfer',
        record: { ...chunk, total: parts.length, index, part },
      })),
    );
    const loaded = s.load();
    s.close();
    const req = loaded.find((r) => r.layer === 'core' && r.record.kind === 'req');
    if (req?.layer !== 'core' || req.record.kind !== 'req') throw new Error('no req record');
    expect(req.record.req.user).toEqual(user);
    expect(Object.isFrozen(req.record.req.user!.claims)).toBe(true);
    const cp = loaded.find((r) => r.layer === 'checkpoint');
    if (cp?.layer !== 'checkpoint') throw new Error('no checkpoint');
    expect(cp.record.held[0]!.user).toEqual(user);
    const stored = loaded.flatMap((r) => (r.layer === 'transfer' ? [r.record.part] : []));
    const installed = fromChunks(stored);
    if (!installed.ok) throw new Error(installed.reason);
    expect(installed.state.reqs[0]!.user).toEqual(user);
    // The caller counts in the transfer's digest: a chunk that lost it is refused.
    const stripped = stored.map((p) =>
      p.kind === 'reqs' ? { ...p, reqs: p.reqs.map(({ user: _, ...q }) => q) } : p,
    );
    expect(fromChunks(stripped)).toMatchObject({ ok: false });
  });

  it("keeps a transfer header's configurations: stored chunks still add up to their digest", () => {
    // A replica that crashed mid-transfer resumes from the chunks it stored (ReplicaHost.load);
    // a header read back without its configurations hashed to another digest, and the transfer
    // was refused once its last chunk came in.
    const state: TransferredState = {
      finalized: 10,
      committedLive: 1,
      known: ctx,
      hlc: 1_700_000_000_200_000,
      truncatedBelow: 2,
      config: [entry],
      delivered: [{ replica: 0, eventNo: 3 }],
      state: [['a', toFrozenJson({ n: 1 })]],
      reqs: [strong],
      held: [weak],
    };
    const parts = toChunks(state);
    const dir = path.join(tmp, 'data');
    const s = SqliteStorage.open(dir, { replicaId: 1 });
    s.append(
      parts.map((part, index): HostRecord => ({
        layer: 'transfer',
        record: { ...chunk, total: parts.length, index, part },
      })),
    );
    const stored = s.load().flatMap((r) => (r.layer === 'transfer' ? [r.record.part] : []));
    s.close();
    expect(stored).toEqual(parts);
    const installed = fromChunks(stored);
    expect(installed).toMatchObject({ ok: true, state: { config: [entry] } });
  });
});
