import type { ServerFrame } from '@creek/protocol';
import type { Connection } from './client-connection-types.js';
import { answerContext, type ContextTokens } from './context-tokens.js';

/** Context requests one connection may have waiting at once; more are refused as busy. */
const MAX_WAITING_CONTEXTS = 16;
const TOO_MANY_CONTEXTS = `at most ${MAX_WAITING_CONTEXTS} context requests wait at once on a connection: ask again once one is answered`;
const CONTEXT_BEHIND =
  'this replica has not caught up with what the context request covers (another client’s token) within 3 s: ask again, or at another replica';

/**
 * A replica's answers to context requests (client frame `context`): a token covering what the
 * request names (`seen`: the session's, and for `client.after` another client's token's counts
 * too) and everything the replica holds. What the request names may still be on its way here, as
 * for a hello after a token: the request then waits, up to `waitMs`, and is answered once the
 * replica holds it, or refused as unavailable. Waiting costs the replica nothing but the entry: a
 * request naming ops that do not exist is answered at its deadline.
 */
export class ContextAnswers<C> {
  constructor(
    private readonly contexts: ContextTokens | null,
    private readonly io: {
      /** The replica holds every op `seen` names (ClientConnections.caughtUp). */
      caughtUp(seen: readonly number[]): boolean;
      /** What the replica holds, per origin (ClientConnectionsOptions.seen(null)). */
      have(): readonly number[];
      now(): number;
      send(conn: C, frame: ServerFrame): void;
      waitMs: number;
      /** ClientConnectionsOptions.unsafeAnswerUnheld: a planted bug, for a test. */
      unsafeAnswerUnheld?: boolean;
    },
  ) {}

  /** Request `n` of connection `c`: answered now, or held until the replica catches up. */
  request(conn: C, c: Connection<C>, n: number, seen: readonly number[] | undefined): void {
    const held =
      seen === undefined || this.io.unsafeAnswerUnheld === true || this.io.caughtUp(seen);
    if (this.contexts !== null && !held) {
      if (c.waitingContexts.length < MAX_WAITING_CONTEXTS)
        c.waitingContexts.push({ n, seen: seen!, deadline: this.io.now() + this.io.waitMs });
      else this.io.send(conn, { t: 'context', n, code: 'busy', message: TOO_MANY_CONTEXTS });
      return;
    }
    this.answer(conn, n, seen);
  }

  /** After a turn: answers the held requests of `c` it has caught up with, or held too long. */
  afterTurn(conn: C, c: Connection<C>): void {
    c.waitingContexts = c.waitingContexts.filter((w) => {
      if (this.io.caughtUp(w.seen)) this.answer(conn, w.n, w.seen);
      else if (this.io.now() > w.deadline)
        this.io.send(conn, { t: 'context', n: w.n, code: 'unavailable', message: CONTEXT_BEHIND });
      else return true;
      return false;
    });
  }

  private answer(conn: C, n: number, seen: readonly number[] | undefined): void {
    this.io.send(conn, answerContext(this.contexts, n, seen, this.io.have()));
  }
}
