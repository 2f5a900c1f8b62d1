import type { ClientFrame } from '@creek/protocol';
import type { Identity } from './sign-in.js';

// What goes into a client session (its config) and what comes out of it (its outputs).

/** Where the client stands with the cluster (`client.status()`). */
export type ConnectionStatus = 'connecting' | 'connected' | 'offline' | 'closed';

/**
 * What a client session asks of its driver, in the order it asks. The socket driver acts on each
 * at once; a simulator may queue them and deliver them over its network and clock. Connections are
 * named by number: events of one the session has left are ignored, so a driver may report them.
 */
export type SessionOutput =
  /** Open a connection, numbered `connection`, to the replica at `url`, and report its events. */
  | { readonly t: 'connect'; readonly connection: number; readonly url: string }
  /** Send `frame` on `connection`. */
  | { readonly t: 'send'; readonly connection: number; readonly frame: ClientFrame }
  /**
   * Close `connection`; `terminate`: at once, without waiting for the peer's close handshake (the
   * session has left it and reads nothing more from it).
   */
  | { readonly t: 'drop'; readonly connection: number; readonly terminate: boolean }
  /**
   * Measure the round trip to the replica at `url` on a connection of its own (a `ping` frame,
   * answered with `pong`; no hello), and hand it to `probed` (null if it failed). The session
   * uses the nearest replica that serves.
   */
  | { readonly t: 'probe'; readonly url: string }
  /** Call `reconnect()` after `afterMs`. */
  | { readonly t: 'reconnect'; readonly afterMs: number }
  /** The status changed. */
  | { readonly t: 'status'; readonly status: ConnectionStatus }
  /** A replica welcomed the client: who it is, and the ops its app offers. */
  | {
      readonly t: 'welcomed';
      readonly replica: number;
      readonly operations: readonly string[];
      /** The read-only ones among them (welcomes from older replicas do not say: null). */
      readonly readOnlyOperations: readonly string[] | null;
    }
  /** The client has no replica any more (the connection dropped, or it left it). */
  | { readonly t: 'disconnected' }
  /** What the offline storage should keep changed: save `stored()` (several changes in one). */
  | { readonly t: 'persist' }
  /**
   * Get the user's token (the app's `auth`), for the hello or a refresh of `connection`, and hand
   * it to `tokenProvided` (or say why not: `tokenFailed`).
   */
  | { readonly t: 'token'; readonly connection: number }
  /**
   * Call `refreshDue(connection)` after `afterMs`: the user's token should be refreshed then
   * (before it expires). One timer is enough: a later one replaces it.
   */
  | { readonly t: 'refresh'; readonly connection: number; readonly afterMs: number }
  /** The identity changed (signing in, signed in, expired, refused, signed out). */
  | { readonly t: 'identity'; readonly identity: Identity };

/** What a client session is made of; the socket driver (`CreekBinding`) checks it first. */
export interface ClientSessionConfig {
  /** Client endpoints of the replicas, tried in order on failure. */
  readonly urls: readonly string[];
  readonly token?: string | undefined;
  /**
   * The driver can get the user's token (`connect({ auth })`): the session asks for one at each
   * connection (`token` output) and presents it in its hello, and again when the replica asks for
   * a fresh one. Absent or false: the client is anonymous.
   */
  readonly auth?: boolean | undefined;
  /**
   * A context token (`client.context()` of another client): the session is welcomed only by a
   * replica that holds every op the token covers, so its reads see them.
   */
  readonly after?: string | undefined;
  /** The session id (random, chosen by the driver); a restored session brings its own. */
  readonly session: string;
  /**
   * A new random session id, for the session of a new user (`changeAuth`, or the app's auth
   * function giving another user's token). Absent: one derived from the first (a driver whose
   * users change should give random ones).
   */
  readonly newSession?: (() => string) | undefined;
  /**
   * Learn the cluster's replicas from the one the session reaches (its welcome lists them, and it
   * says when they change). Default true; false: the session keeps to `urls`.
   */
  readonly discover?: boolean | undefined;
  /**
   * Measure the replicas the session knows (`probe`) and use the nearest, failing over in order of
   * distance. Default true; false: in the order known (`urls` first).
   */
  readonly nearest?: boolean | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly stallTimeoutMs?: number | undefined;
  /** How many ops one connection may have in flight (a replica refuses more as busy). */
  readonly maxInFlight: number;
  /** Offline ops on, and how many may wait. */
  readonly offline: boolean;
  readonly maxQueued: number;
  /** The offline queue is kept in a storage: say when it changed (`persist`). */
  readonly persistent: boolean;
  /** The current time in milliseconds (the driver's clock, or a simulator's). */
  readonly now: () => number;
  /** Where the session's outputs go, each as it is made (see SessionOutput). */
  readonly out: (o: SessionOutput) => void;
}
