import {
  ClientConnections,
  type ClientCounters,
  type ConnectionOutput,
} from '@creek/replica/host/client-connections.js';
import {
  type ClientVersions,
  decodeClientFrame,
  encodeFrame,
  type ReplicaUrls,
  type ServerFrame,
} from '@creek/protocol';
import type { Logger } from 'pino';
import WebSocket, { type WebSocketServer } from 'ws';
import type { AccessDenied, User } from '@creek/app';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import type { Response } from '@creek/replica/core/types.js';
import { CLOSE_CODE, ConnectionGuard, type Gate } from './connection-guard.js';
import { DEFAULT_EDGE_LIMITS } from './edge-limits.js';
import { newViolations, type EdgeEndpoint } from './edge-violations.js';
import { tokenMatches } from './bearer.js';
import { TurnCork } from './turn-cork.js';
import type { UserTokenVerifier } from './user-tokens.js';

/** How the endpoint lets users sign in: their tokens' verifier, and who may call which op. */
export interface EndpointAuth {
  readonly verifier: UserTokenVerifier;
  access(op: string, user: User | null, args: unknown): AccessDenied | null;
}

/**
 * Clients on `/client`, over WebSocket: the socket driver of the replica's side of its client
 * connections (ClientConnections, in @creek/replica/host/client-connections.ts: hello, sessions,
 * op ids and retries, views and confirmations, `committed` frames, live queries). This owns the
 * sockets, the clock, the edge's guard and the token check: it decodes each frame (a bad one gets
 * an error frame and is counted), hands it over, and does what the connections ask, one write per
 * connection and turn (TurnCork).
 */
export class ClientEndpoint {
  private readonly connections: ClientConnections<WebSocket>;
  /** Each connection's gate at the edge, until it closes. */
  private readonly gates = new Map<WebSocket, Gate>();
  private readonly cork = new TurnCork();
  /** Per kind, connections that broke the protocol or an edge limit (ConnectionGuard). */
  private readonly violations = newViolations();
  /** This endpoint as the connection guard counts it. */
  readonly edge: EdgeEndpoint = { name: 'client', violations: this.violations };

  constructor(
    replicaId: number,
    opNames: () => string[],
    tokens: ReadonlySet<string> | null,
    invoke: (request: InvokeRequest) => void,
    /** Why the replica takes no ops now (a message for the client), or null when it does. */
    unavailable: () => string | null,
    private readonly log: Logger,
    /** Seconds from an invoke to its first view ('tentative') or to its stable view ('stable'). */
    observe: (level: 'tentative' | 'stable', seconds: number) => void = () => undefined,
    /**
     * Per origin replica, how many of its ops this replica has without a gap. For a session, this
     * replica's own component stops below the session's own uncommitted ops at the top of its ops
     * (the client resubmits those when it moves, so no replica needs them first).
     */
    seen: (session: string | null) => number[] = () => [],
    /** True when this replica has the op with this id (above the gapless prefix too). */
    received: (replica: number, eventNo: number) => boolean = () => false,
    /** The read-only ones among the ops: a client may show a cached result of those at once. */
    readOnlyOps: () => string[] = () => [],
    /** Keys whose value may have changed since the last call (Replica.takeChangedKeys). */
    changedKeys: () => ReadonlySet<string> = () => new Set(),
    /** User tokens and access rules; null: no user signs in, every op is open. */
    private readonly auth: EndpointAuth | null = null,
    /** The members' client URLs, the same array until they change (welcomes list them). */
    members?: () => ReplicaUrls,
    /** The client protocol versions it claims; absent: this build's (only upgrade tests set it). */
    speaks?: ClientVersions,
    /** The MAC of context tokens (node/context-key.ts); absent: none are signed or taken. */
    contextMac?: (payload: string) => string,
    /** Whether reads here see every op of a `seen` vector it holds (ReplicaHost.clients.readsSee). */
    readsSee?: (seen: readonly number[]) => boolean,
  ) {
    this.connections = new ClientConnections<WebSocket>({
      replicaId,
      opNames,
      readOnlyOps,
      authorize: (token) => tokens === null || (token !== undefined && tokenMatches(token, tokens)),
      ...(auth === null ? {} : { verifiesTokens: true, access: auth.access }),
      invoke,
      unavailable,
      seen,
      received,
      changedKeys,
      ...(members === undefined ? {} : { members }),
      ...(speaks === undefined ? {} : { versions: { speaks } }),
      ...(contextMac === undefined ? {} : { contextMac }),
      ...(readsSee === undefined ? {} : { readsSee }),
      observe,
      now: () => performance.now(),
      out: (ws, o) => this.output(ws, o),
    });
  }

  /** What the endpoint counted, with the edge's violations. */
  get counters(): ClientCounters & { readonly violations: EdgeEndpoint['violations'] } {
    return { ...this.connections.counters, violations: this.violations };
  }

  /**
   * Serves the connections of `wss`. Until its hello is accepted a connection is held to the
   * guard's limits (a deadline, a small frame size, a frame budget); the replica passes the guard
   * that also capped its upgrade, a bare server (tests) gets one with the default limits.
   */
  attach(
    wss: WebSocketServer,
    guard: ConnectionGuard = new ConnectionGuard(DEFAULT_EDGE_LIMITS, this.log),
  ): void {
    wss.on('connection', (ws, req) => {
      this.connections.open(ws);
      const gate = guard.gate(ws, req, this.edge);
      this.gates.set(ws, gate);
      // A frame ws refuses (invalid UTF-8, over maxPayload, a bad opcode) is an 'error' on this
      // socket, which ws then closes with the matching code; unhandled, it would end the process.
      ws.on('error', (err) => guard.wsError(ws, this.edge, err));
      ws.on('message', (data, isBinary) => {
        if (!gate.admit(data)) return;
        const decoded = decodeClientFrame(isBinary ? data : data.toString());
        if (!decoded.ok)
          return this.connections.badFrame(ws, decoded.code, decoded.message, decoded.opId);
        this.connections.frame(ws, decoded.frame);
      });
      ws.on('close', () => {
        this.gates.delete(ws);
        this.connections.closed(ws);
      });
    });
  }

  /** Does what the connections ask for `ws`. */
  private output(ws: WebSocket, o: ConnectionOutput): void {
    const gate = this.gates.get(ws);
    switch (o.t) {
      case 'frame':
        return this.send(ws, o.frame);
      case 'violation':
        return gate?.record(o.kind, o.detail);
      case 'authenticated':
        return gate?.pass();
      case 'refused':
        return gate?.refuse('auth', CLOSE_CODE.policy, o.reason);
      case 'close':
        return ws.close();
      case 'verify':
        return this.verify(ws, o.token);
    }
  }

  /**
   * Verifies a user token off the turn (the keys may have to be fetched) and hands the verdict to
   * the connections, then sends what they answered at once: the verdict comes after the turn that
   * asked for it, so nothing else would flush those frames until the next one.
   */
  private verify(ws: WebSocket, token: string): void {
    const auth = this.auth;
    if (auth === null) return; // never asked: the connections know the endpoint verifies none
    void auth.verifier.verify(token).then((verdict) => {
      try {
        this.connections.verified(ws, verdict);
      } catch (err) {
        this.log.error({ err }, 'client endpoint: handling a token verdict failed');
      }
      this.cork.release();
    });
  }

  /** A response from the replica for one of our tags. */
  respond(r: Response): void {
    this.connections.respond(r);
  }

  /**
   * `afterTurn` may send something: an op's confirms or committed mark, a live query's new result,
   * the welcome of a hello that waited for this replica to catch up.
   */
  sendsThisTurn(): boolean {
    return this.connections.sendsThisTurn();
  }

  /**
   * Call once per turn of the event loop, after responses: sends the turn's `committed` frames and
   * welcomes (or turns away) sessions that were waiting for this replica to catch up.
   */
  afterTurn(): void {
    this.connections.afterTurn();
    // Every frame of the turn, views included, leaves now: one write per connection.
    this.cork.release();
  }

  /**
   * Turns every client away: an `unavailable` error saying why, then the connection closes, so a
   * session resubmits its ops in flight at another replica (each applied once). For a replica that
   * must stop answering (its state diverged from its peers' without a majority's).
   */
  turnAway(message: string): void {
    const sockets = [...this.gates.keys()];
    for (const ws of sockets) this.send(ws, { t: 'error', code: 'unavailable', message });
    this.cork.release();
    for (const ws of sockets) ws.close(1013, 'unavailable');
  }

  /** Invocations still waiting for their last view. */
  pending(): number {
    return this.connections.pending();
  }

  private send(ws: WebSocket, frame: ServerFrame): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    this.cork.hold(ws);
    ws.send(encodeFrame(frame));
  }
}
