import type { User } from '@creek/app';
import type { ClientFrame, ErrorCode } from '@creek/protocol';
import {
  AuthFailed,
  errorFromWire,
  TokenExpired,
  Unauthorized,
  type CreekError,
} from '../errors.js';
import { MIN_RETRY_MS, readToken, refreshDelayMs, type TokenPayload } from './user-token.js';

/**
 * Where the client stands with its user (`client.identity()`):
 * - `signed-out`: no user; the client is anonymous (`auth` absent or null);
 * - `signing-in`: the client has a way to get the user's token, and no replica has accepted one
 *   yet in this session;
 * - `signed-in`: a replica accepted the user's token: ops run as `user`;
 * - `expired`: the connection's token expired with no fresh one accepted; the client reconnects
 *   with a fresh token from `auth` (then `signed-in` again), and if a replica refuses the token it
 *   gets (a token string cannot be refreshed) the session ends with TokenExpired;
 * - `refused`: a replica refused the user's token at sign-in (Unauthorized): the session ended.
 */
export type IdentityState = 'signed-out' | 'signing-in' | 'signed-in' | 'expired' | 'refused';

/** The client's identity state (`client.identity()`, `onIdentity`, @creek/react's useIdentity). */
export interface Identity {
  readonly state: IdentityState;
  /**
   * Who the client's ops run as: the user whose token a replica accepted (`id` as the replica
   * verified it, `claims` those of that token). Null until one did in this session, and when
   * signed out or refused; while `expired`, the user whose token expired.
   */
  readonly user: User | null;
  /**
   * What went wrong last: AuthFailed (the app's auth function threw or gave no token),
   * Unauthorized (a token refused), TokenExpired. Null once a token is accepted again.
   */
  readonly error: CreekError | null;
  /**
   * Counts the client's sessions: 1 for its first, one more each time the user changes
   * (`setAuth`) and a new session starts. Whatever was read in an earlier session was read as
   * another user (the React hooks read anew when it changes).
   */
  readonly session: number;
}

/** What the sign-in asks of its session. */
export interface SignInHooks {
  /** Ask the driver for the user's token for the current connection (`token` output). */
  askToken(): void;
  /** Send a frame on the current connection. */
  send(frame: ClientFrame): void;
  /** Call `refreshDue` after `afterMs` (`refresh` output). */
  timer(afterMs: number): void;
  /** The identity changed. */
  identity(identity: Identity): void;
}

/**
 * The user's side of a client session, pure: the token of each connection (asked of the driver at
 * every hello, never kept across connections), refreshes on the same connection — before the token
 * expires (a timer from the token's `exp`, read without verifying it), or when the replica asks —
 * one at a time, and the identity state the app sees. A refresh never moves an op: ops in flight
 * stay on their connection, in their session.
 */
export class SignIn {
  /** A token asked of the driver, for the hello or a refresh. */
  private tokenFor: 'hello' | 'refresh' | null = null;
  /** The current connection's hello token, as read (null: opaque), once given. */
  private presented: TokenPayload | null = null;
  /** A fresh token sent in `reauth`, not yet answered (null payload: opaque). */
  private refreshing: { readonly token: string; readonly payload: TokenPayload | null } | null =
    null;
  /** The token the connection presented last (its hello's, or an accepted refresh's). */
  private inUse: string | null = null;
  /** The refresh timer went off before the welcome: refresh once welcomed. */
  private refreshWanted = false;
  /** When the connection's accepted token expires, as the token says. */
  private expiresAt: number | undefined;
  /** The expiry the last timer was set for: a new one only for a later expiry. */
  private timedFor: number | null = null;
  /**
   * Whose a restored session was (StoredSession.user), until a replica welcomes it: the welcome
   * must name the same user. Undefined: not known.
   */
  private expected: string | null | undefined;
  private current: Identity;

  constructor(
    /** The driver can get the user's tokens. */
    private auth: boolean,
    private readonly hooks: SignInHooks,
  ) {
    this.current = {
      state: auth ? 'signing-in' : 'signed-out',
      user: null,
      error: null,
      session: 1,
    };
  }

  get identity(): Identity {
    return this.current;
  }

  /** The session has a user's tokens to present. */
  get signsIn(): boolean {
    return this.auth;
  }

  private set(change: Partial<Identity>): void {
    this.current = { ...this.current, ...change };
    this.hooks.identity(this.current);
  }

  /** A new connection opened: its hello waits for a fresh token (a kept one may have expired). */
  opened(): void {
    this.tokenFor = 'hello';
    this.presented = null;
    this.refreshing = null;
    this.refreshWanted = false;
    this.hooks.askToken();
  }

  /** A new connection is being made: nothing asked for the last one counts. */
  connecting(): void {
    this.tokenFor = null;
    this.refreshing = null;
  }

  /**
   * The driver's token for the current connection: `hello` (the session says hello with it),
   * `other-user` (a refresh names another user than the session's: the app switched users without
   * setAuth, so the session must end), or null (sent as a refresh, the same token again, which
   * is no refresh — a token string, a function that caches — or not asked for).
   */
  provided(token: string): 'hello' | 'other-user' | null {
    const purpose = this.tokenFor;
    this.tokenFor = null;
    if (purpose === null) return null;
    const payload = readToken(token);
    if (purpose === 'hello') {
      this.presented = payload;
      this.inUse = token;
      return 'hello';
    }
    if (token === this.inUse) return null;
    const user = this.current.user;
    if (user !== null && payload?.sub !== undefined && payload.sub !== user.id) return 'other-user';
    this.refreshing = { token, payload };
    this.hooks.send({ t: 'reauth', token });
    return null;
  }

  /**
   * The driver could not get a token (`message`): said in the identity's error; returns what it
   * was for. A refresh is tried again later while the token has life left.
   */
  failed(message: string, now: number): 'hello' | 'refresh' | null {
    const purpose = this.tokenFor;
    this.tokenFor = null;
    if (purpose === null) return null;
    this.set({ error: new AuthFailed(message) });
    if (purpose === 'refresh') this.retryLater(now);
    return purpose;
  }

  /** A restored session was `user`'s (null: anonymous; undefined: not known). */
  expect(user: string | null | undefined): void {
    this.expected = user;
  }

  /** Whose the session is, for the storage: the user's id, null if anonymous, else unknown. */
  get storedUser(): string | null | undefined {
    if (this.current.user !== null) return this.current.user.id;
    if (this.expected !== undefined) return this.expected; // restored, not welcomed yet
    return this.auth ? undefined : null;
  }

  /**
   * A replica welcomed the session as `user` (its word: an id, or null for anonymous; undefined:
   * it verifies no tokens). Returns why not, when that is not the session's user (the app's auth
   * function gave another user's token, or the session restored was another user's): nothing of
   * this session may run as that user. Null when it is.
   */
  welcomed(user: string | null | undefined, now: number): string | null {
    if (user === undefined) return null;
    const was = this.current.user?.id ?? this.expected;
    if (was !== undefined && was !== user) {
      const who = (u: string | null): string => (u === null ? 'anonymous' : `user '${u}'`);
      return `the session was ${who(was)}'s, and a replica took the client as ${who(user)} (a token of another user, or a stored session of another)`;
    }
    this.expected = undefined;
    if (!this.auth || user === null) return null;
    this.expiresAt = this.presented?.expiresAt;
    this.set({
      state: 'signed-in',
      user: { id: user, claims: this.presented?.claims ?? {} },
      error: null,
    });
    if (this.refreshWanted) this.refresh();
    else this.plan(now);
    return null;
  }

  /** The user of the session as a replica accepted it, if one did. */
  get userId(): string | null {
    return this.current.user?.id ?? null;
  }

  /** The refresh timer went off (`welcomed`: the connection is ready for a `reauth`). */
  due(welcomed: boolean): void {
    if (!welcomed) this.refreshWanted = true;
    else this.refresh();
  }

  /** The replica asks for a fresh token (`auth-expiring`). */
  expiring(): void {
    this.refresh();
  }

  /** Asks the driver for a fresh token, unless one is on its way already. */
  refresh(): void {
    if (!this.auth || this.tokenFor !== null || this.refreshing !== null) return;
    this.tokenFor = 'refresh';
    this.hooks.askToken();
  }

  /** The replica took the fresh token (`authed`): ops run as `user` with its claims from now. */
  authed(user: string, now: number): void {
    const payload = this.refreshing?.payload ?? null;
    this.inUse = this.refreshing?.token ?? this.inUse;
    this.refreshing = null;
    this.expiresAt = payload?.expiresAt;
    this.set({
      state: 'signed-in',
      user: { id: user, claims: payload?.claims ?? this.current.user?.claims ?? {} },
      error: null,
    });
    this.plan(now);
  }

  /** The replica refused the fresh token: the previous one stays until it expires. */
  refreshRefused(code: ErrorCode, message: string, now: number): void {
    this.refreshing = null;
    this.set({ error: errorFromWire(code, message) });
    this.retryLater(now);
  }

  /** The connection's token expired unrefreshed (`auth-expired`); the session reconnects. */
  expired(message: string): void {
    this.tokenFor = null;
    this.refreshing = null;
    this.set({ state: 'expired', error: new TokenExpired(message) });
  }

  /**
   * A replica refused the hello's token: the session ends, each op with the error this makes
   * (TokenExpired when the token had expired and none fresh was accepted, else Unauthorized).
   */
  refused(message: string): (mayHaveTakenEffect: boolean) => CreekError {
    const expired = this.current.state === 'expired';
    const make = (mayHaveTakenEffect: boolean): CreekError =>
      expired
        ? new TokenExpired(message, { mayHaveTakenEffect })
        : new Unauthorized(message, { mayHaveTakenEffect });
    this.set({
      state: expired ? 'expired' : 'refused',
      user: expired ? this.current.user : null,
      error: make(false),
    });
    return make;
  }

  /** A new session starts, with a user's tokens (`auth`) or anonymous. */
  restart(auth: boolean): void {
    this.auth = auth;
    this.tokenFor = null;
    this.presented = null;
    this.refreshing = null;
    this.refreshWanted = false;
    this.expiresAt = undefined;
    this.timedFor = null;
    this.expected = undefined;
    this.set({
      state: auth ? 'signing-in' : 'signed-out',
      user: null,
      error: null,
      session: this.current.session + 1,
    });
  }

  /** A timer for the refresh of the accepted token, unless one is set for it (or a later one). */
  private plan(now: number): void {
    const delay = refreshDelayMs(this.expiresAt, now);
    if (delay === null || (this.timedFor !== null && this.expiresAt! <= this.timedFor)) return;
    this.timedFor = this.expiresAt!;
    this.hooks.timer(delay);
  }

  /** After a failed refresh: again when half the token's life is left, if that is worth it. */
  private retryLater(now: number): void {
    if (this.expiresAt === undefined) return;
    const half = (this.expiresAt - now) / 2;
    if (half >= MIN_RETRY_MS) this.hooks.timer(half);
  }
}
