import * as z from 'zod';
import { SessionIdSchema } from './client.js';
import { DvvSchema, JsonValueSchema, OpIdSchema, UserSchema } from './json-value.js';
import { PeerVersionsSchema } from './peer-versions.js';

/**
 * Replica ↔ replica. The connecting replica proves it holds the cluster secret by HMAC
 * challenge–response (the secret never crosses the wire), then both sides exchange gossip (Reqs)
 * and Multi-Paxos (ids) messages.
 */
export const ReqSchema = z.object({
  ts: z.number().int().nonnegative(),
  id: OpIdSchema,
  op: z.string().min(1).max(256),
  args: JsonValueSchema,
  strong: z.boolean(),
  causalCtx: DvvSchema.nullable(),
  /** The client session's numbering of the op (exactly-once across replicas). */
  session: z
    .object({
      id: SessionIdSchema,
      seq: z.number().int().positive(),
      acked: z.number().int().nonnegative(),
    })
    .optional(),
  /** Who invoked it (`tx.user`), as its replica verified it; absent for an anonymous caller. */
  user: UserSchema.optional(),
});
export type WireReq = z.infer<typeof ReqSchema>;

const CastIdSchema = z.object({ id: OpIdSchema, prevStrong: z.number().int().nonnegative() });
const instance = z.number().int().nonnegative();
const ballot = z.number().int().nonnegative();
/** Replica ids: 0-255 (ballots and op ids encode them in a byte). */
const replicaId = z.number().int().nonnegative().max(255);

/** A replica of a configuration and the address its peers dial (server cab/configuration.ts). */
export const MemberSchema = z.object({ id: replicaId, address: z.string().max(2048) });
/** A membership change as it travels to the leader and through the ordered log. */
export const ReconfigRequestSchema = z.object({
  change: z.discriminatedUnion('op', [
    z.object({ op: z.literal('add'), member: MemberSchema }),
    z.object({ op: z.literal('remove'), id: replicaId }),
  ]),
  nonce: z.string().min(1).max(128),
});
/** One configuration and the first consensus instance it governs. */
export const ConfigEntrySchema = z.object({
  from: instance,
  members: z.array(MemberSchema).min(1).max(256),
  retired: z.array(replicaId).max(256),
  nonce: z.string().min(1).max(128).optional(),
});
/**
 * The value of one consensus instance (server cab/messages.ts `Batch`): op ids, or a membership
 * change. A replica's acceptor stores it in this shape (server node/record-codec.ts).
 */
export const BatchSchema = z.array(
  z.union([CastIdSchema, z.object({ reconfig: ReconfigRequestSchema })]),
);

export const GossipMessageSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('push'), reqs: z.array(ReqSchema) }),
  z.object({
    kind: z.literal('summary'),
    seen: DvvSchema,
    reply: z.boolean(),
    wanted: z.array(OpIdSchema).optional(),
    pruned: z.record(z.string().regex(/^\d+$/), z.number().int().nonnegative()).optional(),
    boot: z.number().nonnegative().optional(),
    echo: z.number().nonnegative().optional(),
    /** The sender's origin, when it is a later incarnation of its replica. */
    origin: z.number().int().nonnegative().optional(),
    /** The digest of the sender's finalized state at its newest finalized position. */
    digest: z
      .object({ at: z.number().int().nonnegative(), digest: z.string().regex(/^[0-9a-f]{32}$/) })
      .optional(),
  }),
  z.object({ kind: z.literal('pull'), ids: z.array(OpIdSchema) }),
  z.object({ kind: z.literal('gone'), ids: z.array(OpIdSchema) }),
]);

export const PaxosMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('forward'), casts: z.array(CastIdSchema) }),
  z.object({ type: z.literal('reconfigure'), request: ReconfigRequestSchema }),
  z.object({
    type: z.literal('retired'),
    entry: ConfigEntrySchema,
    truncatedBelow: instance.optional(),
  }),
  z.object({
    type: z.literal('readIndex'),
    nonces: z.array(z.string().min(1).max(64)).max(4096),
    promised: ballot.optional(),
  }),
  z.object({ type: z.literal('readProbe'), ballot, seq: z.number().int().nonnegative() }),
  z.object({ type: z.literal('readAck'), ballot, seq: z.number().int().nonnegative() }),
  z.object({
    type: z.literal('readIndexed'),
    nonces: z.array(z.string().min(1).max(64)).max(4096),
    index: instance,
  }),
  z.object({
    type: z.literal('frontierAsk'),
    nonces: z.array(z.string().min(1).max(64)).max(4096),
  }),
  z.object({
    type: z.literal('frontier'),
    nonces: z.array(z.string().min(1).max(64)).max(4096),
    below: instance,
  }),
  z.object({ type: z.literal('prepare'), ballot, from: instance }),
  z.object({
    type: z.literal('promise'),
    ballot,
    accepted: z.array(z.object({ instance, ballot, value: BatchSchema })),
    decided: z.array(z.object({ instance, value: BatchSchema })),
    truncatedBelow: instance,
  }),
  z.object({ type: z.literal('nack'), ballot, promised: ballot }),
  z.object({ type: z.literal('accept'), ballot, instance, value: BatchSchema }),
  z.object({ type: z.literal('accepted'), ballot, instance }),
  z.object({
    type: z.literal('heartbeat'),
    ballot,
    leading: z.boolean(),
    quorate: z.boolean().optional(),
    decidedBelow: instance,
    deliveredBelow: instance,
    promised: ballot,
    knownBelow: instance,
  }),
  z.object({ type: z.literal('handOver'), ballot }),
  z.object({ type: z.literal('catchup'), from: instance }),
  z.object({
    type: z.literal('decisions'),
    entries: z.array(z.object({ instance, value: BatchSchema })),
    truncatedBelow: instance,
  }),
]);

/**
 * Most digests a `divergence` message carries: a replica keeps those of its last 4,096 committed
 * positions (server core/final-digests.ts); a bound keeps a peer's numbers from sizing the work.
 */
const MAX_DIGESTS = 65_536;
/** A committed position (ops committed up to it), or an op id's origin and event number. */
const position = z.number().int().nonnegative();

/** Replicas whose digests disagree find the first op that made them differ (host/divergence.ts). */
export const DivergenceMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ask'), at: position }),
  z.object({
    type: z.literal('digests'),
    from: position,
    digests: z.array(z.string().regex(/^[0-9a-f]{32}$/)).max(MAX_DIGESTS),
    ops: z
      .array(z.tuple([z.string().min(1).max(256), position, position]).nullable())
      .max(MAX_DIGESTS),
  }),
]);

const session = z.number().int().nonnegative();
const count = z.number().int().nonnegative();
/**
 * Most chunks one state transfer may have: 300,000 characters each, so about 300 GB of
 * checkpoint, beyond any replica's; a bound keeps a peer's numbers from sizing the receiver's work.
 */
const MAX_TRANSFER_CHUNKS = 1_000_000;
const chunkIndex = z.number().int().nonnegative().max(MAX_TRANSFER_CHUNKS);
/** The most chunks a receiver may ask for at once (the replica's MAX_TRANSFER_WINDOW). */
const MAX_TRANSFER_WINDOW = 256;

/** One chunk of a state transfer (server host/state-transfer.ts `TransferPart`). */
const TransferPartSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('header'),
    header: z.object({
      finalized: count,
      committedLive: count,
      known: DvvSchema,
      hlc: z.number().int().nonnegative(),
      truncatedBelow: instance,
      config: z.array(ConfigEntrySchema).max(256).optional(),
      /** Closed origins and their cuts (the replica's core/closing-origins.ts). */
      closed: z
        .array(z.tuple([count, count]))
        .max(65_536)
        .optional(),
      delivered: z.array(OpIdSchema),
      counts: z.object({ state: count, reqs: count, held: count }),
      digest: z.string().regex(/^[0-9a-f]{32}$/),
    }),
  }),
  z.object({
    kind: z.literal('state'),
    entries: z.array(z.tuple([z.string(), JsonValueSchema])),
  }),
  z.object({ kind: z.literal('reqs'), reqs: z.array(ReqSchema) }),
  z.object({ kind: z.literal('held'), reqs: z.array(ReqSchema) }),
]);

/**
 * Chunk `index` of `total` of transfer `session`, sender → receiver. The receiver stores the
 * chunks it has in this shape (server node/record-codec.ts).
 */
export const TransferChunkSchema = z.object({
  type: z.literal('chunk'),
  session,
  index: chunkIndex,
  total: z.number().int().positive().max(MAX_TRANSFER_CHUNKS),
  part: TransferPartSchema,
});

export const TransferMessageSchema = z.discriminatedUnion('type', [
  /**
   * Receiver → sender: chunks of `session` from `next`, `window` of them (the sender's default
   * when absent, which is what a receiver sent before asks named a window).
   */
  z.object({
    type: z.literal('ask'),
    session,
    next: chunkIndex,
    window: z.number().int().positive().max(MAX_TRANSFER_WINDOW).optional(),
  }),
  TransferChunkSchema,
  z.object({ type: z.literal('refuse'), session }),
]);

const GossipFrameSchema = z.object({ t: z.literal('gossip'), msg: GossipMessageSchema });
const TransferFrameSchema = z.object({ t: z.literal('transfer'), msg: TransferMessageSchema });
const PaxosFrameSchema = z.object({ t: z.literal('paxos'), msg: PaxosMessageSchema });
const DivergenceFrameSchema = z.object({
  t: z.literal('divergence'),
  msg: DivergenceMessageSchema,
});

export const PeerFrameSchema = z.discriminatedUnion('t', [
  /**
   * Sent by the accepting side as soon as a peer connects: `version` is the oldest version of the
   * peer protocol it speaks and `newest` the newest (peer-versions.ts). A build of version 3, which
   * knew no ranges, sends `version` 3 alone and refuses any other `version`: the oldest version
   * goes there so that such a build still links with this one.
   */
  z.object({
    t: z.literal('challenge'),
    version: z.number().int(),
    newest: z.number().int().positive().max(65_535).optional(),
    nonce: z.string().length(64),
  }),
  /**
   * The dialing replica's answer: `mac` proves the cluster secret over the challenge, its own id
   * and the id it dialed, and both ranges of versions when the challenge had one (server
   * peer-auth.ts); `nonce` is its own challenge to the accepting side; `versions` what it speaks
   * (absent from a build of version 3, which speaks 3 alone).
   */
  z.object({
    t: z.literal('auth'),
    from: z.number().int().nonnegative(),
    mac: z.string().length(64),
    nonce: z.string().length(64),
    versions: PeerVersionsSchema.optional(),
  }),
  /**
   * The accepting replica's answer to the dialer's nonce: the dialer trusts nothing before it.
   * `version`: the version the link runs at, covered by `mac`, when the dialer told its range.
   */
  z.object({
    t: z.literal('welcome'),
    replica: z.number().int().nonnegative(),
    mac: z.string().length(64),
    version: z.number().int().positive().max(65_535).optional(),
  }),
  GossipFrameSchema,
  PaxosFrameSchema,
  TransferFrameSchema,
  DivergenceFrameSchema,
  /** Several messages to the same peer from one turn of the sender's event loop, in order. */
  z.object({
    t: z.literal('batch'),
    frames: z
      .array(
        z.discriminatedUnion('t', [
          GossipFrameSchema,
          PaxosFrameSchema,
          TransferFrameSchema,
          DivergenceFrameSchema,
        ]),
      )
      .max(10_000),
  }),
  z.object({ t: z.literal('error'), code: z.string(), message: z.string() }),
]);
export type PeerFrame = z.infer<typeof PeerFrameSchema>;
