/**
 * The record codec: how the `HostRecord`s a replica persists are written as rows of the storage's
 * `records` table (storage.ts) and its checkpoint as the `checkpoint` table's body, and how they
 * are read back.
 *
 * A row is (layer, kind, body): one record, except that consecutive Reqs of one append share a row
 * (kind 'reqs'), and so do consecutive commits (kind 'commits'; each stays a record of its own).
 *   layer  'core' | 'cab' | 'host'
 *   kind   'req' | 'reqs' | 'commit' | 'commits' (core), 'promise' | 'accept' | 'truncate' |
 *          'config' (cab), 'identity', 'chunk' (host: the origin the replica numbers its ops
 *          under, core/op-id.ts; a state-transfer chunk)
 *   body   JSON of the record's other fields:
 *            req       {"req":{"ts","id":{"replica","eventNo"},"op","args","strong","causalCtx",
 *                             "session"?:{"id","seq","acked"}}}
 *                      where causalCtx is DottedVersionVector#toJSON() or null
 *            reqs      {"reqs":[req,...]}: two or more req records, each as "req" above
 *            commit    {"ids":[{"replica","eventNo"},...]}
 *            commits   {"commits":[[id,...],...]}: two or more commit records, each its ids
 *            promise   {"ballot"}
 *            accept    {"instance","ballot","value":[{"id":{"replica","eventNo"},"prevStrong"} or
 *                                                    {"reconfig":{"nonce","change"}},...]}
 *            truncate  {"below"}
 *            config    {"entry":{"from","members":[{"id","address"},...],"retired","nonce"?}}
 *            identity  {"origin"}
 *            chunk     {"peer","session","index","total","part"}: a state-transfer chunk the
 *                      replica received (host/state-transfer.ts TransferPart, Reqs as above),
 *                      kept so that a transfer resumes after a crash
 *
 * The checkpoint's body (HostCheckpoint):
 *   {"core":{"finalized","state":[[key,value],...],"reqs":[req,...],"committedLive",
 *            "known","hlc","eventNo","lastStrongEventNo","finalizedOwnStrong"},
 *    "cab":[{"kind",...the cab record's body}, ...],
 *    "held":[req,...],
 *    "delivered":[{"replica","eventNo"},...],"origin"}
 *   where origin is the replica's (null while it has none: an installed state transfer)
 *   and each req is written as in a req record, and known as a causalCtx
 *
 * Encoding checks every field it writes (a value JSON would not keep, NaN say, is refused rather
 * than written as something else); decoding checks every field it reads, naming the one that is
 * not as the format says.
 */
import { toFrozenJson, type JsonValue } from '@creek/app';
import type { ConfigEntry, Member, ReconfigRequest } from '../cab/configuration.js';
import { isCast, type AcceptorRecord, type BatchEntry } from '../cab/messages.js';
import type { ReplicaCheckpoint } from '../core/checkpoint.js';
import { DottedVersionVector } from '../core/dvv.js';
import type { OpId } from '../core/op-id.js';
import type { DurableRecord, Req, SessionStamp } from '../core/types.js';
import type { HostCheckpoint, HostRecord, TransferChunkRecord } from '../host/replica-host.js';
import type { TransferPart } from '../host/state-transfer.js';

/** A row to insert, and `end`: the index after the last record it holds. */
export interface EncodedRow {
  readonly layer: string;
  readonly kind: string;
  readonly body: string;
  readonly end: number;
}

/**
 * The row that holds `records[i]`, and with it the records after it that share its row. Throws a
 * TypeError naming the field if a record cannot be encoded (a value JSON would not keep: NaN,
 * Infinity, a bigint, a class instance), rather than writing what would not read back.
 */
export function encodeRow(records: readonly HostRecord[], i: number): EncodedRow {
  const r = records[i]!;
  // Consecutive Reqs go in one row; so do consecutive commits, each kept apart in it.
  let end = i + 1;
  if (isReq(r)) while (end < records.length && isReq(records[end]!)) end++;
  else if (isCommit(r)) while (end < records.length && isCommit(records[end]!)) end++;
  if (end - i > 1 && isReq(r)) {
    const reqs = records.slice(i, end).map((q) => encodeReq((q as ReqRecord).record.req));
    return { layer: 'core', kind: 'reqs', body: JSON.stringify({ reqs }), end };
  } else if (end - i > 1) {
    const commits = records
      .slice(i, end)
      .map((q) => (encodeCore((q as CommitRecord).record) as { ids: object[] }).ids);
    return { layer: 'core', kind: 'commits', body: JSON.stringify({ commits }), end };
  }
  const [layer, kind, body] = encode(r);
  return { layer, kind, body, end };
}

/** The checkpoint table's body for `c`; throws as `encodeRow` does. */
export function encodeCheckpoint(c: HostCheckpoint): string {
  return JSON.stringify(checkpointBody(c));
}

/**
 * The records of one row of the records table. Throws naming the field of the body that is not as
 * the format says, or the row kind if there is no such kind.
 */
export function decodeRow(layer: string, kind: string, body: string): HostRecord[] {
  if (layer === 'core' && kind === 'reqs') return decodeReqs(body);
  if (layer === 'core' && kind === 'commits') return decodeCommits(body);
  return [decode(layer, kind, body)];
}

/** The checkpoint table's body. Throws naming the field that is not as it should be. */
export function decodeCheckpoint(body: string): HostCheckpoint {
  return checkpointFromJson(JSON.parse(body));
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

function checkpointBody(c: HostCheckpoint): object {
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

function checkpointFromJson(v: unknown): HostCheckpoint {
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
