import {
  CONTEXT_SINCE,
  maxSeen,
  readContextToken,
  seenOnWire,
  type ClientFrame,
  type ServerFrame,
} from '@creek/protocol';
import { ClientClosed, errorFromWire, ProtocolError, type CreekError } from '../errors.js';

/** Where a context request's answer goes (`ClientSession.context`). */
export interface ContextSink {
  token(token: string): void;
  error(e: CreekError): void;
}

/**
 * A session's context tokens (protocol context-token.ts), both ways:
 * - the token it starts after (`after` in its config), said in hellos until a replica that speaks
 *   tokens welcomes the session; from then on its counts are part of what the session has seen. A
 *   replica of an older release does not read it: the session then says its counts as `seen`,
 *   which every release honours, on a new connection.
 * - its requests for tokens: each goes out once the session may ask (welcomed, and every op its
 *   callers have an answer to is in the hands of the current replica, so the token covers it), and
 *   again on the next connection if the answer did not come on this one. Requests are numbered per
 *   session; an answer names its request.
 */
export class ContextRequests {
  private next = 1;
  /**
   * Unanswered requests, the connection each was sent on (0: not yet), and for `client.after`
   * the counts of the other client's token it covers too.
   */
  private readonly pending = new Map<
    number,
    { sink: ContextSink; sentOn: number; covers?: readonly number[] }
  >();
  /** The token the session starts after, and its counts, until a welcome takes it in. */
  private startAfter: { readonly token: string; readonly seen: readonly number[] } | null = null;
  /** The client protocol version of the current connection's welcome (0 until then). */
  private version = 0;

  constructor(
    after: string | undefined,
    private readonly io: {
      send(frame: ClientFrame): void;
      /** What the session has seen (SeenVector.counts). */
      seen(): readonly number[];
      /** Adds to what the session has seen (SeenVector.see). */
      see(seen: readonly number[]): void;
      /** Whether a request may go on the current connection now, and that connection's number. */
      mayAsk(): boolean;
      connection(): number;
    },
  ) {
    if (after === undefined) return;
    const read = readContextToken(after);
    if (!read.ok) throw new TypeError(`connect: after: ${read.message}`);
    this.startAfter = { token: after, seen: read.seen };
  }

  /** What a hello says of the token the session starts after. */
  hello(): { after?: string } {
    return this.startAfter === null ? {} : { after: this.startAfter.token };
  }

  /**
   * A replica welcomed the session at client protocol `version`: the token it started after is
   * now part of what it has seen (`see`). False when the replica did not read that token (an older
   * release), and the session must say it again on a new connection.
   */
  welcomed(version: number, url: string, see: (seen: readonly number[]) => void): boolean {
    this.version = version;
    if (version < CONTEXT_SINCE) this.failAll(() => oldReplicaContext(url));
    if (this.startAfter === null) return true;
    see(this.startAfter.seen);
    this.startAfter = null;
    return version >= CONTEXT_SINCE;
  }

  /** A caller asks for a token; it goes now if it may, else at the next `flush`. */
  ask(sink: ContextSink, url: string, welcomed: boolean): void {
    if (welcomed && this.version < CONTEXT_SINCE) return sink.error(oldReplicaContext(url));
    this.pending.set(this.next++, { sink, sentOn: 0 });
    this.flush();
  }

  /**
   * The session goes on after another client's token (`client.after`): a request covering both
   * that token and what the session has seen, which its replica answers once it holds all of it;
   * the token it signs then becomes part of what the session has seen, so the session's later ops
   * run after the token's, here and at any replica it moves to. The sink gets that new token.
   */
  after(token: string, sink: ContextSink, url: string, welcomed: boolean): void {
    const read = readContextToken(token);
    if (!read.ok) return sink.error(new TypeError(`client.after: ${read.message}`) as CreekError);
    this.afterSeen(read.seen, sink, url, welcomed);
  }

  /**
   * As `after`, for counts read elsewhere than from a token: a shared context's frontier
   * (shared-context.ts), which the cluster keeps and a strong read gives.
   */
  afterSeen(seen: readonly number[], sink: ContextSink, url: string, welcomed: boolean): void {
    if (welcomed && this.version < CONTEXT_SINCE) return sink.error(oldReplicaContext(url));
    this.pending.set(this.next++, { sink, sentOn: 0, covers: seen });
    this.flush();
  }

  /** Sends the requests not sent on the current connection, if requests may go now. */
  flush(): void {
    if (this.pending.size === 0 || !this.io.mayAsk()) return;
    const connection = this.io.connection();
    for (const [n, p] of this.pending) {
      if (p.sentOn === connection) continue;
      p.sentOn = connection;
      const seen = p.covers === undefined ? this.io.seen() : maxSeen(this.io.seen(), p.covers);
      this.io.send({ t: 'context', n, ...seenOnWire(seen) });
    }
  }

  /** The replica's answer to request `f.n`. */
  answered(f: Extract<ServerFrame, { t: 'context' }>, url: string): void {
    const p = this.pending.get(f.n);
    if (p === undefined) return;
    const read = f.token === undefined ? null : readContextToken(f.token);
    if (read?.ok === true) {
      this.pending.delete(f.n);
      // The replica holds everything the token covers: the session's later ops come after it.
      if (p.covers !== undefined) this.io.see(read.seen);
      return p.sink.token(f.token!);
    }
    this.pending.delete(f.n);
    p.sink.error(
      f.code === undefined
        ? new ProtocolError(`the replica at ${url} answered a context request without a token`)
        : errorFromWire(f.code, f.message ?? 'no context token'),
    );
  }

  /** Every request fails with `make()` (the session closed, or its replica speaks no tokens). */
  failAll(make: () => CreekError): void {
    const sinks = [...this.pending.values()].map((p) => p.sink);
    this.pending.clear();
    for (const s of sinks) s.error(make());
  }

  /** The session closed: what is unanswered fails. */
  closed(): void {
    this.failAll(() => new ClientClosed(false));
  }
}

/** Why a replica of an older release gives no context token. */
function oldReplicaContext(url: string): CreekError {
  return new ProtocolError(
    `the replica at ${url} runs a release without context tokens (client protocol ${CONTEXT_SINCE - 1}): upgrade it to ask for one`,
    { mayHaveTakenEffect: false },
  );
}
