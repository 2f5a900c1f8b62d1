import type { JsonValue } from './json.js';

/**
 * A signed-in caller, as the replica its client is connected to verified it from the client's
 * token (a JSON Web Token the app's identity provider issued). Plain JSON, frozen: it travels with
 * the op to every replica, so every execution of the op sees the same user.
 */
export interface User {
  /** The token's subject (`sub`): the identity provider's id of the user. */
  readonly id: string;
  /** Every claim of the verified token, `sub`, `iss`, `aud` and `exp` included. */
  readonly claims: Readonly<Record<string, JsonValue>>;
}
