import { canonicalJson, toFrozenJson, type JsonValue, type User } from '@creek/app';
import type { Prng } from './prng.js';

/** Of the simulated sessions, the share whose user is anonymous. */
const ANONYMOUS_SHARE = 0.25;

/**
 * Who the simulated clients are: each client session belongs to one user (or is anonymous), drawn
 * the first time the session invokes, from the run's stream named 'users' (SimPrngs.named), so
 * that users leave every other draw of a seed as it was. Ids include characters a session key must
 * escape, and two sessions may share an id with different claims (a token refreshed with new
 * claims): every op carries its own caller, and every replica must run it as that caller.
 */
export class SimUsers {
  private readonly bySession = new Map<string, User | null>();

  constructor(private readonly prng: Prng) {}

  /** The user of `session` (undefined: anonymous). */
  of(session: string): User | undefined {
    let user = this.bySession.get(session);
    if (user === undefined) {
      user = this.draw();
      this.bySession.set(session, user);
    }
    return user ?? undefined;
  }

  private draw(): User | null {
    const prng = this.prng;
    if (prng.chance(ANONYMOUS_SHARE)) return null;
    const id = prng.pick(['alice', 'bob', 'auth0|carol', 'dave@example.com', 'ève/2']);
    const claims: Record<string, JsonValue> = {
      sub: id,
      role: prng.pick(['admin', 'member']),
      iat: prng.int(0, 1000),
    };
    return toFrozenJson({ id, claims }) as unknown as User;
  }
}

/** How a caller reads in a sighting and a violation: its canonical JSON, or `anonymous`. */
export function callerText(user: User | undefined | null): string {
  return user === undefined || user === null
    ? 'anonymous'
    : canonicalJson(user as unknown as JsonValue);
}
