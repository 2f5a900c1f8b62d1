import * as z from 'zod';
import { ERROR_CODES } from './errors.js';
import {
  MAX_AUTH_TOKEN_CHARS,
  MAX_CAUSE_KEY_CHARS,
  MAX_CONTEXT_TOKEN_CHARS,
  MAX_CORRECTION_CAUSES,
} from './limits.js';
import { JsonValueSchema, OpIdSchema } from './json-value.js';
import { HeldOwnOpsSchema, OwnOpsSchema } from './own-ops.js';
import { MAX_SEEN_ENTRIES, SeenLaterSchema } from './seen.js';

/**
 * A user token as a client presents it: a JSON Web Token from the app's identity provider. The
 * schema bounds it loosely (the frame's own limits bound it anyway), so that a token over
 * MAX_AUTH_TOKEN_CHARS is refused as a token, with `unauthorized` and the bound named, rather than
 * as a malformed frame.
 */
export const AuthTokenSchema = z
  .string()
  .min(1)
  .max(2 * MAX_AUTH_TOKEN_CHARS);

/**
 * Client ↔ replica. A client says hello (with its token when the cluster has tokens), then invokes
 * ops with ids it chooses; the replica streams views of each op: tentative ones, then the stable
 * one — or, when the stable result equals the last tentative one, a short confirmation instead
 * (Correctables §5.2).
 */
export const LevelSchema = z.enum(['weak', 'strong']);

/** A client session: random, chosen by the client, the same across reconnects and replicas. */
export const SessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, 'a session id is 8 to 64 letters, digits, - or _');

/**
 * Per origin replica, how many of its ops the client's session has seen (read or written through
 * views). A replica serves the session only once it has all of them: read-your-writes and
 * monotonic reads across replicas. The answering replica counts its own ops only up to the last
 * one the session cannot resubmit itself: the session's own ops not yet committed (and no-ops) at
 * the top are left out, since the client resubmits those when it moves.
 */
export const SeenSchema = z.array(z.number().int().nonnegative()).max(MAX_SEEN_ENTRIES);

/**
 * A context token (context-token.ts): what a session had seen when a replica signed it, for
 * another client to start after (`connect({ after })`). Its format is checked where it is read.
 */
export const ContextTokenSchema = z.string().min(1).max(MAX_CONTEXT_TOKEN_CHARS);

export const ClientHelloSchema = z.object({
  t: z.literal('hello'),
  /** The oldest client protocol version the client speaks (client-versions.ts). */
  version: z.number().int(),
  /** The newest it speaks; absent: `version` alone (builds before versions were negotiated). */
  newest: z.number().int().positive().max(65_535).optional(),
  token: z.string().max(4096).optional(),
  /**
   * The signed-in user's token (a JWT), for a cluster that verifies them (`creek start
   * --auth-jwks` or `--auth-secret-file`): ops then run as that user (`tx.user`). Absent: the
   * client is anonymous. Not the cluster's client token (`token`), which says nothing
   * about who the user is.
   */
  auth: AuthTokenSchema.optional(),
  session: SessionIdSchema.optional(),
  /** What the session has seen, when it reconnects (see SeenSchema). */
  seen: SeenSchema.optional(),
  /** The same, for later incarnations' origins (seen.ts). */
  seenLater: SeenLaterSchema.optional(),
  /**
   * A context token (since CONTEXT_SINCE): the replica welcomes the session only once it holds
   * every op the token covers, as for `seen`, and refuses a token it cannot verify.
   */
  after: ContextTokenSchema.optional(),
});

export const InvokeSchema = z.object({
  t: z.literal('invoke'),
  /**
   * Chosen by the client, unique per client: within its session, or without one within its
   * connection. A retry with the same id is answered, not re-applied.
   */
  opId: z.string().min(1).max(128),
  op: z.string().min(1).max(256),
  args: JsonValueSchema,
  /** weak: one tentative view; strong: tentative views then the stable one. */
  level: LevelSchema,
  /**
   * Strong ops only: `false` when the caller wants the stable view alone (`invokeStrong`,
   * Correctables §3.2): the replica then sends no tentative view, which saves a frame and a wake-up
   * of the client per op. Absent: tentative views are sent.
   */
  tentative: z.literal(false).optional(),
  /**
   * With a session: the op's number in it (from 1). A resubmission of the op, to any replica,
   * carries the same number and is applied once (exactly-once across replicas).
   */
  seq: z.number().int().positive().optional(),
  /** Every op of the session numbered below this has its final answer and is committed. */
  acked: z.number().int().nonnegative().optional(),
});

/**
 * A live query: the replica runs the read-only op `op(args)` now and again whenever a key it read
 * may have changed, and sends its result (`watched`) each time it differs from the last one sent,
 * at each level: the replica's tentative state and its committed state.
 */
export const WatchQuerySchema = z.object({
  t: z.literal('watch'),
  /** Chosen by the client, unique per connection. */
  watchId: z.string().min(1).max(128),
  op: z.string().min(1).max(256),
  args: JsonValueSchema,
  /**
   * What the client's query already shows, when it is sent again on a new connection (after a
   * failover): the committed position of its latest stable result, and the session's own ops its
   * latest view holds. The replica sends no stable result read below that position, and no
   * tentative result that does not hold those ops, until its reads reach them: the client would
   * not show those results, and the replica would then not send a later equal one.
   */
  shown: z
    .object({
      position: z.number().int().nonnegative().optional(),
      own: HeldOwnOpsSchema.optional(),
    })
    .optional(),
});

/**
 * A fresh token for the connection's user, before the one it connected with expires (or when the
 * replica asks, `auth-expiring`): answered with `authed`, or `auth-refused` (the connection keeps
 * its previous token until that one expires). It must name the same user: signing in as another
 * user, or signing out, takes a new connection, since a session belongs to one user.
 */
export const AuthRefreshSchema = z.object({
  t: z.literal('reauth'),
  token: AuthTokenSchema,
});

/** Ends a live query: no more `watched` frames for it. */
export const UnwatchQuerySchema = z.object({
  t: z.literal('unwatch'),
  watchId: z.string().min(1).max(128),
});

/**
 * A round-trip probe, answered with a `pong` carrying the same `n`. Allowed before hello, and
 * without a token: a client measures how far each replica is (the time to its pong) on a short
 * connection of its own, to use the nearest one. It says nothing an open socket does not.
 */
export const PingSchema = z.object({
  t: z.literal('ping'),
  n: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
});

/**
 * A request for a context token (since CONTEXT_SINCE) covering everything the session has seen
 * (`seen`, as the session keeps it) and everything the replica has now; answered with a `context`
 * frame carrying the same `n`. Only after welcome.
 */
export const ContextRequestSchema = z.object({
  t: z.literal('context'),
  n: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  seen: SeenSchema.optional(),
  seenLater: SeenLaterSchema.optional(),
});

export const ClientFrameSchema = z.discriminatedUnion('t', [
  ClientHelloSchema,
  PingSchema,
  ContextRequestSchema,
  InvokeSchema,
  WatchQuerySchema,
  UnwatchQuerySchema,
  AuthRefreshSchema,
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

export const OutcomeSchema = z.union([
  z.object({ ok: z.literal(true), value: JsonValueSchema }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

/** The most replicas a `members` list names (replica ids are 0-255). */
export const MAX_LISTED_REPLICAS = 256;

/**
 * The cluster's replicas as clients reach them: each member's id and client URL (ws:// or wss://,
 * ending in /client). A client given one URL learns the others from it, and follows replacements.
 */
export const ReplicaUrlsSchema = z
  .array(
    z.object({
      id: z.number().int().nonnegative().max(255),
      url: z
        .string()
        .max(2048)
        // ws:// or wss:// on the wire; a simulator names its replicas sim://<id>.
        .regex(
          /^[a-z][a-z0-9+.-]*:\/\/\S+$/i,
          'a client URL is a URL such as ws://host:7100/client',
        ),
    }),
  )
  .max(MAX_LISTED_REPLICAS);
export type ReplicaUrls = z.infer<typeof ReplicaUrlsSchema>;

/** Why a view corrects an answer its client was shown (the `view` frame's `causes`). */
export const CorrectionCausesSchema = z
  .array(
    z.object({
      /** The op, e.g. `bank.withdraw`. */
      op: z.string().max(256),
      /** Its id, `r<origin>#<event>`. */
      id: z.string().max(64),
      /** A key it wrote that the corrected op read. */
      key: z.string().max(MAX_CAUSE_KEY_CHARS),
    }),
  )
  .min(1)
  .max(MAX_CORRECTION_CAUSES);
export type CorrectionCauses = z.infer<typeof CorrectionCausesSchema>;

export const ServerFrameSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('welcome'),
    /** The client protocol version the connection runs at: the newest both sides speak. */
    version: z.number().int(),
    replica: z.number().int().nonnegative(),
    levels: z.array(LevelSchema),
    ops: z.array(z.string()),
    /** The read-only ones among `ops` (a client may show a cached result of those at once). */
    readOnly: z.array(z.string()).optional(),
    /**
     * Present when the replica verifies user tokens: who the connection's ops run as (the user's
     * id, or null for an anonymous client), and in how many ms its token stops being valid.
     */
    auth: z
      .object({
        user: z.string().nullable(),
        expiresInMs: z.number().nonnegative().optional(),
      })
      .optional(),
    /** The cluster's members as clients reach them (absent from older replicas). */
    members: ReplicaUrlsSchema.optional(),
  }),
  /** The members changed (a replica added, removed or replaced): their client URLs now. */
  z.object({ t: z.literal('members'), members: ReplicaUrlsSchema }),
  /** The answer to a `ping`, with its `n`. */
  z.object({ t: z.literal('pong'), n: z.number().int().nonnegative() }),
  /**
   * The answer to a `context` request, with its `n`: the signed token, or why there is none
   * (`code` and `message`).
   */
  z.object({
    t: z.literal('context'),
    n: z.number().int().nonnegative(),
    token: ContextTokenSchema.optional(),
    code: z.enum(ERROR_CODES).optional(),
    message: z.string().optional(),
  }),
  /** A refreshed token was accepted: the connection's ops run as this user until it expires. */
  z.object({
    t: z.literal('authed'),
    user: z.string(),
    expiresInMs: z.number().nonnegative(),
  }),
  /** A refreshed token was refused: the connection keeps its previous token until it expires. */
  z.object({
    t: z.literal('auth-refused'),
    code: z.enum(ERROR_CODES),
    message: z.string(),
  }),
  /** The connection's token expires in `inMs`: send a fresh one (`reauth`). */
  z.object({ t: z.literal('auth-expiring'), inMs: z.number().nonnegative() }),
  /**
   * The connection's token expired and no fresh one came: the replica closes the connection. Ops
   * sent on it stay where they are (a session resubmits them on its next connection, with a
   * fresh token, and each applies once).
   */
  z.object({ t: z.literal('auth-expired'), message: z.string() }),
  z.object({
    t: z.literal('view'),
    opId: z.string(),
    /** Tentative views may repeat as the op is re-executed; `stable` is the last one. */
    level: z.enum(['tentative', 'stable']),
    outcome: OutcomeSchema,
    /** The op's id in the cluster (null if it is never ordered); left out for sessions. */
    id: OpIdSchema.nullable().optional(),
    /** What the replica had when it answered (see SeenSchema); absent when unchanged. */
    seen: SeenSchema.optional(),
    /** The same, for later incarnations' origins (seen.ts); absent when none has a count. */
    seenLater: SeenLaterSchema.optional(),
    /**
     * On a view whose answer replaces one its client was shown: the ops, ordered ahead of it
     * unseen, whose writes made the difference, and a key each wrote that the op read.
     */
    causes: CorrectionCausesSchema.optional(),
  }),
  /** A live query's result changed: at the replica's tentative state, or at its committed one. */
  z.object({
    t: z.literal('watched'),
    watchId: z.string(),
    level: z.enum(['tentative', 'stable']),
    outcome: OutcomeSchema,
    /** Stable results: how many committed ops the state read holds (later results, higher). */
    position: z.number().int().nonnegative().optional(),
    /** For a session: which of its own ops the state read holds (see OwnOpsSchema). */
    own: OwnOpsSchema.optional(),
  }),
  /** The replica ended a live query (an op that writes, bad arguments, too many watches): why. */
  z.object({
    t: z.literal('unwatched'),
    watchId: z.string(),
    code: z.enum(ERROR_CODES),
    message: z.string(),
  }),
  /** The stable result equals the last tentative view the client got. */
  /**
   * `seen` (as on views, when it changed): what the replica had when the op was confirmed, the
   * op itself included now that it is committed, so that a session moves only to a replica that
   * has it. Absent from older replicas.
   */
  z.object({
    t: z.literal('confirm'),
    opId: z.string(),
    seen: SeenSchema.optional(),
    seenLater: SeenLaterSchema.optional(),
  }),
  /** Confirmations of several ops at once: a replica sends a session those of a turn together. */
  z.object({
    t: z.literal('confirms'),
    opIds: z.array(z.string()).min(1),
    seen: SeenSchema.optional(),
    seenLater: SeenLaterSchema.optional(),
  }),
  /**
   * Every op of the session numbered below `below` that was submitted on this connection is
   * committed (weak ops included, which get no stable view): the client may acknowledge them.
   */
  z.object({ t: z.literal('committed'), below: z.number().int().nonnegative() }),
  z.object({
    t: z.literal('error'),
    opId: z.string().optional(),
    code: z.enum(ERROR_CODES),
    message: z.string(),
  }),
]);
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
