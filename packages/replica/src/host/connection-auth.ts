import { MAX_AUTH_TOKEN_CHARS } from '@creek/protocol';
import { toFrozenJson, type User } from '@creek/app';

/** What a client presenting a user token is told by a replica that verifies none. */
export const NO_USER_TOKENS =
  'this cluster verifies no user tokens: start its replicas with --auth-jwks or --auth-secret-file, or connect without auth';

/** A verified user as every execution of its ops reads it: frozen JSON. */
export function frozenUser(user: User): User {
  return toFrozenJson(user, 'user') as unknown as User;
}

/**
 * What the driver found a user token to be (the replica verifies tokens in its driver: keys may
 * have to be fetched, and the crypto is the driver's). `validForMs`: how long from now the token
 * stays valid (until its `exp`, plus the clock skew the replica allows). `unavailable`: the
 * replica could not tell (its keys could not be fetched): the client may try another replica.
 */
export type TokenVerdict =
  | { readonly ok: true; readonly user: User; readonly validForMs: number }
  | {
      readonly ok: false;
      readonly code: 'unauthorized' | 'unavailable';
      readonly message: string;
    };

/** The longest a replica waits before it asks for a fresh token: a minute before it expires. */
const MAX_REFRESH_LEAD_MS = 60_000;

/** Why a token is refused before it is read, or null: only its length is looked at. */
export function tokenTooLong(token: string): string | null {
  return token.length <= MAX_AUTH_TOKEN_CHARS
    ? null
    : `the token has ${token.length} characters, more than the ${MAX_AUTH_TOKEN_CHARS} a replica reads: ask the identity provider for a smaller one (fewer custom claims)`;
}

/**
 * One connection's signed-in user, and the life of its token by the driver's clock: the replica
 * asks for a fresh token before it expires (`auth-expiring`, once per token), and closes the
 * connection once it has expired (`auth-expired`). A connection keeps its user for as long as its
 * token would still verify, so a token's end is the same whether it is presented anew or not.
 */
export class ConnectionAuth {
  /** Who the connection's ops run as; null: anonymous. */
  user: User | null = null;
  /** A token of the connection is being verified: the hello's, or a refresh's. */
  verifying: 'hello' | 'refresh' | null = null;
  /** Its token expired: the connection was told so and is closing. */
  closing = false;
  /** When the token stops being valid (driver ms); null: no token. */
  private deadline: number | null = null;
  /** When to ask for a fresh one (driver ms), null once asked. */
  private askAt: number | null = null;

  /** A token of `user` was accepted at `now`, valid for `validForMs`. */
  accept(user: User, validForMs: number, now: number): void {
    this.user = user;
    this.deadline = now + validForMs;
    // Half the token's remaining life, at most a minute: a short-lived token is asked for early
    // enough for a client to fetch another.
    this.askAt = this.deadline - Math.min(MAX_REFRESH_LEAD_MS, validForMs / 2);
  }

  /** Ms from `now` until the token stops being valid, or undefined without one. */
  remaining(now: number): number | undefined {
    return this.deadline === null ? undefined : Math.max(0, this.deadline - now);
  }

  expired(now: number): boolean {
    return this.deadline !== null && now >= this.deadline;
  }

  /** What the connection must be told now: ask for a fresh token, or that the token expired. */
  due(now: number): 'ask' | 'expired' | null {
    if (this.closing) return null;
    if (this.expired(now)) return 'expired';
    if (this.askAt !== null && now >= this.askAt) {
      this.askAt = null;
      return 'ask';
    }
    return null;
  }

  /** When `due` next has something to say (Infinity: never). */
  nextDue(): number {
    return this.askAt ?? this.deadline ?? Number.POSITIVE_INFINITY;
  }
}
