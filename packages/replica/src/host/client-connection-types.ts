import type { AccessDenied, User } from '@creek/app';
import type { ClientFrame, ClientVersions, ReplicaUrls, ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '../core/replica.js';
import type { Outcome } from '../core/types.js';
import type { ConnectionAuth } from './connection-auth.js';

/*
 * The types of the replica's side of its client connections (client-connections.ts): what it keeps
 * per op and per connection, what it asks of its driver, and what the driver gives it.
 */

export type Hello = Extract<ClientFrame, { t: 'hello' }>;

/** One client-chosen op id: who waits for it and what it was told so far. */
export interface ClientOp<C> {
  readonly opId: string;
  /** The op id within its session (op ids are unique per client, not across clients). */
  readonly key: string;
  readonly startedAt: number;
  readonly strong: boolean;
  /** A strong op whose caller wants its stable view alone: tentative outcomes are not sent. */
  readonly stableOnly: boolean;
  /** Its first outcome was observed in the tentative latency histogram. */
  tentativeObserved: boolean;
  /** Its number in the client's session, if the client has one. */
  readonly seq: number | null;
  readonly views: ServerFrame[];
  readonly subscribers: Set<C>;
  lastTentative: Outcome | null;
  /** The client has its last view. */
  done: boolean;
  /** Committed, or never to be ordered (a weak read, a rejection): the session may acknowledge it. */
  settled: boolean;
  /** Connections that will report it in a `committed` frame once it settles. */
  readonly owners: Set<C>;
}

/** One client connection. */
export interface Connection<C> {
  /** Numbers connections, so op ids of clients without a session are scoped to their connection. */
  readonly no: number;
  /** Its hello was accepted (version and token): the edge's pre-authentication limits are lifted. */
  passed: boolean;
  greeted: boolean;
  session: string | null;
  /**
   * The session as the cluster keeps it, its user's (core/session-dedupe.ts scopedSession): op
   * ids of retries and `seen` are looked up under it, so another user naming the session id
   * reaches none of its ops.
   */
  sessionKey: string | null;
  /** Its signed-in user and the life of its token. */
  readonly auth: ConnectionAuth;
  /** A hello whose user token is being verified (TokenVerdict comes to `verified`). */
  pendingHello: Hello | null;
  inFlight: number;
  /** Session ops submitted here that have not settled (for `committed` frames). */
  readonly unsettled: Set<ClientOp<C>>;
  /** The highest session number submitted here. */
  lastSeq: number;
  /** The last `below` sent in a `committed` frame. */
  committedBelow: number;
  /** A weak op settled since the last `committed` frame (strong ops' stable views say it already). */
  weakSettled: boolean;
  /** Confirmations of this turn, sent together at its end (sessions only). */
  confirms: string[];
  /** The last `seen` vector sent, as a string (views carry it only when it changed). */
  lastSeen: string;
  /** A hello waiting for this replica to catch up with what the session saw elsewhere. */
  waitingHello: { readonly seen: readonly number[]; readonly deadline: number } | null;
  /**
   * Context requests waiting for this replica to hold what they cover (a client's `after`: its
   * session's `seen` with another client's token's counts), answered once it does or at the
   * deadline. At most MAX_WAITING_CONTEXTS.
   */
  waitingContexts: {
    readonly n: number;
    readonly seen: readonly number[];
    readonly deadline: number;
  }[];
  /** The client protocol version it runs at: the replica's oldest until its hello passed. */
  version: number;
}

/**
 * What the replica's side of a connection asks its driver to do, in order: send a frame; count a
 * frame that broke the protocol (the connection stays); lift the edge's limits for a client whose
 * hello passed; refuse one whose token did not (count it and close the connection); close it;
 * verify a user token (the driver answers with `verified`, at once or later).
 */
export type ConnectionOutput =
  | { readonly t: 'frame'; readonly frame: ServerFrame }
  | { readonly t: 'violation'; readonly kind: 'badFrame' | 'outOfOrder'; readonly detail: string }
  | { readonly t: 'authenticated' }
  | { readonly t: 'refused'; readonly reason: string }
  | { readonly t: 'close' }
  | { readonly t: 'verify'; readonly token: string };

/** What the endpoint counts (the replica's `/status` shows them). */
export interface ClientCounters {
  connections: number;
  invokes: number;
  retries: number;
  rejected: number;
  badFrames: number;
}

/** What the replica's side of its client connections needs from the replica and its driver. */
export interface ClientConnectionsOptions<C> {
  /** The replica's id, which its welcome names. */
  readonly replicaId: number;
  /** The ops a welcome lists, and the read-only ones among them. */
  opNames(): string[];
  readOnlyOps(): string[];
  /** Whether a hello's token lets its client in (no tokens configured: every hello). */
  authorize(token: string | undefined): boolean;
  /**
   * The replica verifies user tokens (`ConnectionOutput` verify): clients may sign in, and `access`
   * decides who may call which op. Absent or false: a client presenting a user token is refused.
   */
  readonly verifiesTokens?: boolean;
  /**
   * Whether `user` (null: anonymous) may invoke op `op`, checked before the op goes to the replica
   * (so a refused op is never ordered): null when it may. Absent: every op is open.
   */
  access?(op: string, user: User | null, args: unknown): AccessDenied | null;
  /** Hands an invocation to the replica; its responses come back to `respond`. */
  invoke(request: InvokeRequest): void;
  /** Why the replica takes no ops now (a message for the client), or null when it does. */
  unavailable(): string | null;
  /**
   * Per origin replica, how many of its ops this replica has without a gap. For a session, this
   * replica's own component stops below the session's own uncommitted ops at the top of its ops
   * (the client resubmits those when it moves, so no replica needs them first).
   */
  seen(session: string | null): number[];
  /**
   * True when this replica has the op with this id (above the gapless prefix too), or knows that
   * no replica ever will (ClientView.closedOff: its origin was closed below it), so that a session
   * that saw such an op, tentative and then dropped, is not turned away everywhere for good.
   * When neither, the host may note that a client waits for the op (ClientView.heldForClient:
   * an op that died with its origin's disk gets its origin closed).
   */
  received(replica: number, eventNo: number): boolean;
  /**
   * Whether this replica's reads see every op of `seen` it holds (ClientView.readsSee): not yet
   * when one is still tentative here and reads see only the committed state (no speculation).
   * Absent: they do.
   */
  readsSee?(seen: readonly number[]): boolean;
  /** Keys whose value may have changed since the last call (Replica.takeChangedKeys). */
  changedKeys(): ReadonlySet<string>;
  /**
   * The cluster's members as clients reach them (their client URLs), the same array until they
   * change: welcomes list them, and every welcomed connection is told when they change, so a
   * client given one URL finds the others and follows replacements. Absent: not said.
   */
  members?(): ReplicaUrls;
  /** Seconds from an invoke to its first view ('tentative') or to its stable view ('stable'). */
  observe(level: 'tentative' | 'stable', seconds: number): void;
  /** The driver's clock, in milliseconds (a monotonic one: only differences are used). */
  now(): number;
  /** What the driver does for connection `conn` (see ConnectionOutput). */
  out(conn: C, o: ConnectionOutput): void;
  /**
   * A deliberately broken endpoint that passes no session numbers to the replica, so that a
   * resubmission elsewhere is taken for a new op and applied again. Exists so a test can show the
   * simulator's checkers catch it.
   */
  readonly unsafeDropSessions?: boolean;
  /**
   * The client protocol versions the replica speaks (default: this build's) and the version that
   * introduced each frame kind (default: CLIENT_FRAME_SINCE); only tests of upgrades set them.
   */
  readonly versions?: {
    readonly speaks?: ClientVersions;
    readonly since?: ReadonlyMap<string, number>;
  };
  /**
   * The MAC of context tokens (host/context-tokens.ts): the same function at every replica of the
   * cluster. Absent: the replica signs no tokens and refuses hellos that present one.
   */
  contextMac?(payload: string): string;
  /**
   * A deliberately broken endpoint that checks a hello's context token but does not wait for the
   * ops it covers. Exists so a test can show the simulator's checkers catch it.
   */
  readonly unsafeIgnoreAfter?: boolean;
  /**
   * A deliberately broken endpoint that answers a context request (a running client's `after`)
   * at once, signing counts it does not hold, instead of waiting for them. For a test.
   */
  readonly unsafeAnswerUnheld?: boolean;
  /** A deliberately broken side of live queries (LiveQueries' `unsafeStableOwnOps`), for a test. */
  readonly unsafeStableOwnOps?: boolean;
}
