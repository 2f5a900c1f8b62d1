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
 *                             "session"?:{"id","seq","acked"},"user"?:{"id","claims"}}}
 *                      (no "user": an anonymous caller, as in every record written before users)
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
 *            divergence {"report"}: the divergence the replica knows of (host/divergence.ts; the
 *                      protocol's DivergenceStatus `current`), null once it is over
 *
 * The checkpoint's body (HostCheckpoint):
 *   {"core":{"finalized","state":[[key,value],...],"reqs":[req,...],"committedLive",
 *            "known","hlc","eventNo","lastStrongEventNo","finalizedOwnStrong","closed"?},
 *   where closed lists the closed origins as [origin, cut] (absent: none)
 *    "cab":[{"kind",...the cab record's body}, ...],
 *    "held":[req,...],
 *    "delivered":[{"replica","eventNo"},...],"origin","divergence"?}
 *   where origin is the replica's (null while it has none: an installed state transfer), and
 *   divergence the report of the divergence it knew of (absent: none)
 *   and each req is written as in a req record, and known as a causalCtx
 *
 * The Zod schemas below are the format. Where a record holds what a peer message carried (a Req,
 * an op id, the batch of a Paxos instance, a membership change, a configuration, a state-transfer
 * chunk) its schema has the wire's shape, checked at compile time against @creek/protocol's
 * (`sameShape`): a field added to or taken from one must be added to or taken from the other. Its
 * value rules are the encoder's, which are looser than the wire's (see `finite`). Decoding (`load`,
 * once when a replica starts) runs the schemas, so a corrupt body is refused naming the field it
 * fails at. Encoding runs on every `append`, on the path of every op, so it is written by hand and
 * runs no schema; its functions return the schemas' input types, so that a schema change fails to
 * compile here until the encoder writes what the schema reads.
 */
import {
  DivergenceStatusSchema,
  JsonValueSchema,
  type BatchSchema,
  type ConfigEntrySchema,
  type DvvSchema,
  type MemberSchema,
  type OpIdSchema,
  type ReconfigRequestSchema,
  type ReqSchema,
  type TransferChunkSchema,
  type WireJson,
} from '@creek/protocol';
import { toFrozenJson, type JsonValue, type User } from '@creek/app';
import * as z from 'zod';
import type { ConfigEntry, Member, ReconfigRequest } from '@creek/replica/cab/configuration.js';
import { isCast, type AcceptorRecord } from '@creek/replica/cab/messages.js';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import type { DurableRecord, Req, SessionStamp } from '@creek/replica/core/types.js';
import type {
  HostCheckpoint,
  HostRecord,
  TransferChunkRecord,
} from '@creek/replica/host/records.js';
import { reqFromWire, transferPartFromWire } from './wire.js';

// ---- the schemas ----

/**
 * A number as the encoder writes one: any finite number (`num`; Zod's number refuses NaN and
 * Infinity). The disk's value rules are the encoder's, not the wire's tighter ones (integers,
 * lengths, patterns): a record that `append` took must never keep a replica from starting.
 */
const finite = z.number();

/** An op id (the wire's OpIdSchema). */
const StoredOpIdSchema = z.object({ replica: finite, eventNo: finite });

/** A dotted version vector, DottedVersionVector#toJSON (the wire's DvvSchema). */
const StoredDvvSchema = z.record(z.string(), z.array(finite));

/** A Req (the wire's ReqSchema): as it travels between replicas. */
const StoredReqShape = z.object({
  ts: finite,
  id: StoredOpIdSchema,
  op: z.string(),
  args: JsonValueSchema,
  strong: z.boolean(),
  causalCtx: StoredDvvSchema.nullable(),
  session: z.object({ id: z.string(), seq: finite, acked: finite }).optional(),
  user: z.object({ id: z.string(), claims: z.record(z.string(), JsonValueSchema) }).optional(),
});

/** A Req read back into a live one: frozen args, a DottedVersionVector. */
const StoredReqSchema = StoredReqShape.transform(reqFromWire);

/** A member of a configuration (the wire's MemberSchema). */
const StoredMemberSchema = z.object({ id: finite, address: z.string() });

/** A membership change (the wire's ReconfigRequestSchema). */
const StoredReconfigSchema = z.object({
  change: z.discriminatedUnion('op', [
    z.object({ op: z.literal('add'), member: StoredMemberSchema }),
    z.object({ op: z.literal('remove'), id: finite }),
  ]),
  nonce: z.string(),
});

/** A configuration (the wire's ConfigEntrySchema). */
const StoredConfigEntrySchema = z.object({
  from: finite,
  members: z.array(StoredMemberSchema),
  retired: z.array(finite),
  nonce: z.string().optional(),
});

/** The value of a consensus instance (the wire's BatchSchema). */
const StoredBatchSchema = z.array(
  z.union([
    z.object({ id: StoredOpIdSchema, prevStrong: finite }),
    z.object({ reconfig: StoredReconfigSchema }),
  ]),
);

/** A key and its value in the store (as JSON: frozen when read back, like a live value). */
const StateEntrySchema = z.tuple([z.string(), JsonValueSchema]);

/** A state-transfer chunk as it travels (the wire's TransferChunkSchema, without its `type`). */
const StoredChunkShape = z.object({
  session: finite,
  index: finite,
  total: finite,
  part: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('header'),
      header: z.object({
        finalized: finite,
        committedLive: finite,
        known: StoredDvvSchema,
        hlc: finite,
        truncatedBelow: finite,
        config: z.array(StoredConfigEntrySchema).optional(),
        delivered: z.array(StoredOpIdSchema),
        counts: z.object({ state: finite, reqs: finite, held: finite }),
        digest: z.string(),
      }),
    }),
    z.object({ kind: z.literal('state'), entries: z.array(StateEntrySchema) }),
    z.object({ kind: z.literal('reqs'), reqs: z.array(StoredReqShape) }),
    z.object({ kind: z.literal('held'), reqs: z.array(StoredReqShape) }),
  ]),
});

/**
 * Compiles only when schemas `A` and `B` read the same type: a record holds what a peer message
 * carried, so the disk's shape must change with the wire's (only their value rules differ).
 */
function sameShape<A extends z.ZodType, B extends z.ZodType>(
  ..._: [z.input<A>] extends [z.input<B>]
    ? [z.input<B>] extends [z.input<A>]
      ? []
      : [never]
    : [never]
): void {}

sameShape<typeof StoredOpIdSchema, typeof OpIdSchema>();
sameShape<typeof StoredDvvSchema, typeof DvvSchema>();
sameShape<typeof StoredReqShape, typeof ReqSchema>();
sameShape<typeof StoredMemberSchema, typeof MemberSchema>();
sameShape<typeof StoredReconfigSchema, typeof ReconfigRequestSchema>();
sameShape<typeof StoredConfigEntrySchema, typeof ConfigEntrySchema>();
sameShape<typeof StoredBatchSchema, typeof BatchSchema>();
sameShape<typeof StoredChunkShape, ReturnType<typeof TransferChunkSchema.omit<{ type: true }>>>();

// The rows' bodies, and the checkpoint's: the disk's own shapes.

const ReqBodySchema = z.object({ req: StoredReqSchema });
const ReqsBodySchema = z.object({ reqs: z.array(StoredReqSchema) });
const CommitBodySchema = z.object({ ids: z.array(StoredOpIdSchema) });
const CommitsBodySchema = z.object({ commits: z.array(z.array(StoredOpIdSchema)) });

const PromiseBodySchema = z.object({ ballot: finite });
const AcceptBodySchema = z.object({ instance: finite, ballot: finite, value: StoredBatchSchema });
const TruncateBodySchema = z.object({ below: finite });
const ConfigBodySchema = z.object({ entry: StoredConfigEntrySchema });

/** An acceptor record (cab/messages.ts AcceptorRecord) with its kind, as a checkpoint holds it. */
const AcceptorRecordSchema = z.discriminatedUnion('kind', [
  PromiseBodySchema.extend({ kind: z.literal('promise') }),
  AcceptBodySchema.extend({ kind: z.literal('accept') }),
  TruncateBodySchema.extend({ kind: z.literal('truncate') }),
  ConfigBodySchema.extend({ kind: z.literal('config') }),
]) satisfies z.ZodType<AcceptorRecord>;

const IdentityBodySchema = z.object({ origin: finite });

/** A divergence report (the protocol's, which /status shows). */
const StoredDivergenceSchema = DivergenceStatusSchema.shape.current.unwrap();
const DivergenceBodySchema = z.object({ report: StoredDivergenceSchema.nullable() });

/** A state-transfer chunk the replica received, with the peer it came from. */
const ChunkBodySchema = StoredChunkShape.extend({ peer: finite });

const CheckpointBodySchema = z.object({
  core: z.object({
    finalized: finite,
    state: z.array(StateEntrySchema),
    reqs: z.array(StoredReqSchema),
    committedLive: finite,
    known: StoredDvvSchema,
    hlc: finite,
    eventNo: finite,
    lastStrongEventNo: finite,
    finalizedOwnStrong: finite,
    closed: z.array(z.tuple([finite, finite])).optional(),
  }),
  cab: z.array(AcceptorRecordSchema),
  held: z.array(StoredReqSchema),
  delivered: z.array(StoredOpIdSchema),
  origin: finite.nullish(),
  divergence: StoredDivergenceSchema.optional(),
});

const CheckpointSchema = CheckpointBodySchema.transform((c): HostCheckpoint => ({
  kind: 'checkpoint',
  core: {
    ...c.core,
    state: c.core.state.map(([key, value]) => [key, toFrozenJson(value)] as const),
    known: DottedVersionVector.fromJSON(c.core.known),
  },
  cab: c.cab,
  held: c.held,
  delivered: c.delivered,
  origin: c.origin ?? null,
  ...(c.divergence === undefined ? {} : { divergence: c.divergence }),
}));

type Rows = readonly HostRecord[];

/** Each row kind, `layer/kind`: its body's schema, read into the records the row holds. */
const ROWS = new Map<string, z.ZodType<Rows>>([
  ['core/req', ReqBodySchema.transform((b): Rows => [core({ kind: 'req', req: b.req })])],
  [
    'core/reqs',
    ReqsBodySchema.transform((b): Rows => b.reqs.map((req) => core({ kind: 'req', req }))),
  ],
  ['core/commit', CommitBodySchema.transform((b): Rows => [core({ kind: 'commit', ids: b.ids })])],
  [
    'core/commits',
    CommitsBodySchema.transform((b): Rows => b.commits.map((ids) => core({ kind: 'commit', ids }))),
  ],
  ['cab/promise', PromiseBodySchema.transform((b): Rows => [cab({ kind: 'promise', ...b })])],
  ['cab/accept', AcceptBodySchema.transform((b): Rows => [cab({ kind: 'accept', ...b })])],
  ['cab/truncate', TruncateBodySchema.transform((b): Rows => [cab({ kind: 'truncate', ...b })])],
  ['cab/config', ConfigBodySchema.transform((b): Rows => [cab({ kind: 'config', ...b })])],
  [
    'host/identity',
    IdentityBodySchema.transform((b): Rows => [
      { layer: 'identity', record: { kind: 'identity', origin: b.origin } },
    ]),
  ],
  [
    'host/chunk',
    ChunkBodySchema.transform((b): Rows => [{ layer: 'transfer', record: chunkRecord(b) }]),
  ],
  [
    'host/divergence',
    DivergenceBodySchema.transform((b): Rows => [
      { layer: 'divergence', record: { kind: 'divergence', report: b.report } },
    ]),
  ],
]);

function core(record: DurableRecord): HostRecord {
  return { layer: 'core', record };
}

function cab(record: AcceptorRecord): HostRecord {
  return { layer: 'cab', record };
}

function chunkRecord(b: z.output<typeof ChunkBodySchema>): TransferChunkRecord {
  const part = transferPartFromWire(b.part);
  return { kind: 'chunk', peer: b.peer, session: b.session, index: b.index, total: b.total, part };
}

// ---- decoding ----

/**
 * The records of one row of the records table. Throws a TypeError naming the field of the body
 * that is not as the format says, or the row kind if there is no such kind.
 */
export function decodeRow(layer: string, kind: string, body: string): Rows {
  const schema = ROWS.get(`${layer}/${kind}`);
  if (schema === undefined) throw new Error(`unknown record type ${layer}/${kind}`);
  return parse(schema, body);
}

/** The checkpoint table's body. Throws a TypeError naming the field that is not as it should be. */
export function decodeCheckpoint(body: string): HostCheckpoint {
  return parse(CheckpointSchema, body);
}

function parse<T>(schema: z.ZodType<T>, body: string): T {
  const result = schema.safeParse(JSON.parse(body));
  if (result.success) return result.data;
  throw new TypeError(firstIssue(result.error));
}

/** The first issue, at its path in the body: `core.reqs[3].ts: Invalid input: expected number…`. */
function firstIssue(error: z.ZodError): string {
  const [first, ...rest] = error.issues;
  if (first === undefined) return error.message;
  const { path, message } = innermost(first);
  let at = '';
  for (const key of path)
    at += typeof key === 'number' ? `[${key}]` : `${at === '' ? '' : '.'}${String(key)}`;
  const more = rest.length === 0 ? '' : ` (and ${rest.length} more)`;
  return `${at === '' ? 'body' : at}: ${message}${more}`;
}

/**
 * A value that matched none of a union's shapes (a batch entry: an op id or a membership change)
 * is reported by the shape it came closest to, the one whose first issue is deepest in it: the
 * field it fails at, rather than "Invalid input" at the entry.
 */
function innermost(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string } {
  if (issue.code !== 'invalid_union') return issue;
  let best: { path: PropertyKey[]; message: string } | undefined;
  for (const [first] of issue.errors) {
    if (first === undefined) continue;
    const inner = innermost(first);
    if (best === undefined || inner.path.length > best.path.length) best = inner;
  }
  if (best === undefined) return issue;
  return { path: [...issue.path, ...best.path], message: best.message };
}

// ---- encoding ----

/**
 * What the encoder writes for a schema: what the schema reads, as read-only values (a live record's
 * arrays are read-only; JSON.stringify does not mind). A JSON value (op args, state values) is
 * taken as it is.
 */
type Json<S extends z.ZodType> = ReadOnly<z.input<S>>;
type ReadOnly<T> = WireJson extends T
  ? T
  : T extends object
    ? { readonly [K in keyof T]: ReadOnly<T[K]> }
    : T;

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
    const body: Json<typeof ReqsBodySchema> = { reqs };
    return { layer: 'core', kind: 'reqs', body: JSON.stringify(body), end };
  } else if (end - i > 1) {
    const commits = records
      .slice(i, end)
      .map((q) => (encodeCore((q as CommitRecord).record) as Json<typeof CommitBodySchema>).ids);
    const body: Json<typeof CommitsBodySchema> = { commits };
    return { layer: 'core', kind: 'commits', body: JSON.stringify(body), end };
  }
  const [layer, kind, body] = encode(r);
  return { layer, kind, body, end };
}

/** The checkpoint table's body for `c`; throws as `encodeRow` does. */
export function encodeCheckpoint(c: HostCheckpoint): string {
  return JSON.stringify(checkpointBody(c));
}

function encode(r: HostRecord): [layer: string, kind: string, body: string] {
  if (r.layer === 'core') return ['core', r.record.kind, JSON.stringify(encodeCore(r.record))];
  if (r.layer === 'cab') return ['cab', r.record.kind, JSON.stringify(encodeCab(r.record))];
  if (r.layer === 'identity') {
    const body: Json<typeof IdentityBodySchema> = {
      origin: num(r.record.origin, 'identity.origin'),
    };
    return ['host', 'identity', JSON.stringify(body)];
  }
  if (r.layer === 'transfer') return ['host', 'chunk', JSON.stringify(encodeChunk(r.record))];
  if (r.layer === 'divergence') {
    // Rare (a divergence's reports), so checked by its schema rather than by hand.
    const body: Json<typeof DivergenceBodySchema> = DivergenceBodySchema.parse({
      report: r.record.report,
    });
    return ['host', 'divergence', JSON.stringify(body)];
  }
  throw new TypeError(`unknown record layer ${JSON.stringify((r as { layer: unknown }).layer)}`);
}

function encodeReq(q: Req): Json<typeof ReqSchema> {
  if (q.causalCtx !== null && !(q.causalCtx instanceof DottedVersionVector))
    throw new TypeError('req.causalCtx is neither a DottedVersionVector nor null');
  return {
    ...reqFields(q),
    causalCtx: q.causalCtx === null ? null : q.causalCtx.toJSON(),
    ...(q.session === undefined ? {} : { session: sessionFields(q.session) }),
    ...(q.user === undefined ? {} : { user: userFields(q.user) }),
  };
}

/** A Req's caller, checked: frozen JSON already (wire.ts, the client endpoint), kept as it is. */
function userFields(u: User): { id: string; claims: Record<string, JsonValue> } {
  const claims = toFrozenJson(u.claims, 'req.user.claims');
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
    throw new TypeError('req.user.claims is not a JSON object');
  return { id: str(u.id, 'req.user.id'), claims };
}

/** A live Req's plain fields, checked. Its args are already frozen JSON and come back as they are. */
function reqFields(q: Req) {
  return {
    ts: num(q.ts, 'req.ts'),
    id: opId(q.id, 'req.id'),
    op: str(q.op, 'req.op'),
    args: toFrozenJson(q.args, 'req.args'),
    strong: bool(q.strong, 'req.strong'),
  };
}

function sessionFields(s: SessionStamp): SessionStamp {
  return {
    id: str(s.id, 'req.session.id'),
    seq: num(s.seq, 'req.session.seq'),
    acked: num(s.acked, 'req.session.acked'),
  };
}

function encodeCore(r: DurableRecord): Json<typeof ReqBodySchema> | Json<typeof CommitBodySchema> {
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

type AcceptorBody =
  | Json<typeof PromiseBodySchema>
  | Json<typeof AcceptBodySchema>
  | Json<typeof TruncateBodySchema>
  | Json<typeof ConfigBodySchema>;

function encodeCab(r: AcceptorRecord): AcceptorBody {
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

function checkpointBody(c: HostCheckpoint): Json<typeof CheckpointBodySchema> {
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
      ...(k.closed === undefined
        ? {}
        : {
            closed: k.closed.map(
              ([origin, cut]) =>
                [num(origin, 'checkpoint.core.closed'), num(cut, 'checkpoint.core.closed')] as [
                  number,
                  number,
                ],
            ),
          }),
    },
    cab: c.cab.map((r) => ({ kind: r.kind, ...encodeCab(r) }) as Json<typeof AcceptorRecordSchema>),
    held: c.held.map(encodeReq),
    delivered: c.delivered.map((id, i) => opId(id, `checkpoint.delivered[${i}]`)),
    origin: c.origin === undefined || c.origin === null ? null : num(c.origin, 'checkpoint.origin'),
    ...(c.divergence === undefined
      ? {}
      : { divergence: StoredDivergenceSchema.parse(c.divergence) }),
  };
}

function encodeMember(m: Member, at: string): Json<typeof MemberSchema> {
  return { id: num(m.id, `${at}.id`), address: str(m.address, `${at}.address`) };
}

function encodeReconfig(r: ReconfigRequest, at: string): Json<typeof ReconfigRequestSchema> {
  const c = r.change;
  return {
    nonce: str(r.nonce, `${at}.nonce`),
    change:
      c.op === 'add'
        ? { op: 'add', member: encodeMember(c.member, `${at}.change.member`) }
        : { op: 'remove', id: num(c.id, `${at}.change.id`) },
  };
}

function encodeConfigEntry(e: ConfigEntry, at: string): Json<typeof ConfigEntrySchema> {
  return {
    from: num(e.from, `${at}.from`),
    members: e.members.map((m, i) => encodeMember(m, `${at}.members[${i}]`)),
    retired: e.retired.map((id, i) => num(id, `${at}.retired[${i}]`)),
    ...(e.nonce === undefined ? {} : { nonce: str(e.nonce, `${at}.nonce`) }),
  };
}

/** A state-transfer chunk the replica received (host/state-transfer.ts `TransferPart`). */
function encodeChunk(c: TransferChunkRecord): Json<typeof ChunkBodySchema> {
  const p = c.part;
  const part =
    p.kind === 'header'
      ? p
      : p.kind === 'state'
        ? {
            kind: p.kind,
            entries: p.entries.map(
              ([key, value]) =>
                [
                  str(key, 'chunk.state key'),
                  toFrozenJson(value, `chunk.state['${key}']`),
                ] as const,
            ),
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

type ReqRecord = { layer: 'core'; record: Extract<DurableRecord, { kind: 'req' }> };

function isReq(r: HostRecord): r is ReqRecord {
  return r.layer === 'core' && r.record.kind === 'req';
}

type CommitRecord = { layer: 'core'; record: Extract<DurableRecord, { kind: 'commit' }> };

function isCommit(r: HostRecord): r is CommitRecord {
  return r.layer === 'core' && r.record.kind === 'commit';
}
