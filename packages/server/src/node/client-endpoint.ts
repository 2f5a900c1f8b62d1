import {
  decodeClientFrame,
  encodeFrame,
  MAX_IN_FLIGHT_PER_CONNECTION,
  PROTOCOL_VERSION,
  type ErrorCode,
  type ServerFrame,
} from '@creek/protocol';
import type { Logger } from 'pino';
import WebSocket, { type WebSocketServer } from 'ws';
import type { InvokeRequest } from '../core/replica.js';
import { outcomesEqual, type Outcome, type Response } from '../core/types.js';

/** One client-chosen op id: who waits for it and what it was told so far. */
interface ClientOp {
  readonly opId: string;
  readonly startedAt: number;
  readonly strong: boolean;
  readonly views: ServerFrame[];
  readonly subscribers: Set<WebSocket>;
  lastTentative: Outcome | null;
  done: boolean;
}

const REMEMBERED_OPS = 100_000;

/**
 * Clients on `/client`: hello (protocol version, token), then invocations with client-chosen op ids.
 * Views stream back per op; when the stable result equals the last tentative view, a `confirm`
 * replaces it (Correctables §5.2). An invoke whose op id the replica already has (a retry after a
 * reconnect) is answered with that op's views so far, and never applied twice.
 */
export class ClientEndpoint {
  private readonly byTag = new Map<number, ClientOp>();
  private readonly byOpId = new Map<string, ClientOp>();
  private readonly inFlight = new Map<WebSocket, number>();
  private nextTag = 1;
  readonly counters = { connections: 0, invokes: 0, retries: 0, rejected: 0, badFrames: 0 };

  constructor(
    private readonly replicaId: number,
    private readonly opNames: () => string[],
    private readonly tokens: ReadonlySet<string> | null,
    private readonly invoke: (request: InvokeRequest) => void,
    private readonly available: () => boolean,
    private readonly log: Logger,
    /** Seconds from an invoke to its first view ('tentative') or to its stable view ('stable'). */
    private readonly observe: (level: 'tentative' | 'stable', seconds: number) => void = () =>
      undefined,
  ) {}

  attach(wss: WebSocketServer): void {
    wss.on('connection', (ws) => {
      this.counters.connections++;
      let greeted = false;
      ws.on('message', (data, isBinary) => {
        const decoded = decodeClientFrame(isBinary ? data : data.toString());
        if (!decoded.ok) {
          this.counters.badFrames++;
          return this.error(ws, decoded.code, decoded.message);
        }
        const f = decoded.frame;
        if (f.t === 'hello') {
          if (f.version !== PROTOCOL_VERSION) {
            return this.error(
              ws,
              'version',
              `this replica speaks protocol ${PROTOCOL_VERSION}, the client ${f.version}: upgrade the older side`,
            );
          }
          if (this.tokens !== null && (f.token === undefined || !this.tokens.has(f.token))) {
            this.log.warn('client presented no valid token');
            this.error(
              ws,
              'unauthorized',
              'this cluster needs a token: pass the one `creek dev` printed (or your --token-file) to connect()',
            );
            ws.close();
            return;
          }
          greeted = true;
          this.send(ws, {
            t: 'welcome',
            version: PROTOCOL_VERSION,
            replica: this.replicaId,
            levels: ['weak', 'strong'],
            ops: this.opNames(),
          });
          return;
        }
        if (!greeted) return this.error(ws, 'out-of-order', 'send hello before invoking', f.opId);
        if (!this.available())
          return this.error(
            ws,
            'unavailable',
            'this replica is paused or shutting down: try another replica',
            f.opId,
          );
        const known = this.byOpId.get(f.opId);
        if (known !== undefined) {
          // A retry: answer with what the op produced so far; later views reach this socket too.
          this.counters.retries++;
          for (const v of known.views) this.send(ws, v);
          if (!known.done) known.subscribers.add(ws);
          return;
        }
        const inFlight = this.inFlight.get(ws) ?? 0;
        if (inFlight >= MAX_IN_FLIGHT_PER_CONNECTION) {
          return this.error(
            ws,
            'busy',
            `more than ${MAX_IN_FLIGHT_PER_CONNECTION} invocations in flight on this connection: wait for responses`,
            f.opId,
          );
        }
        this.counters.invokes++;
        const op: ClientOp = {
          opId: f.opId,
          startedAt: performance.now(),
          strong: f.level === 'strong',
          views: [],
          subscribers: new Set([ws]),
          lastTentative: null,
          done: false,
        };
        const tag = this.nextTag++;
        this.byTag.set(tag, op);
        this.remember(op);
        this.inFlight.set(ws, inFlight + 1);
        this.invoke({ op: f.op, args: f.args, strong: op.strong, tag });
      });
      ws.on('close', () => {
        this.inFlight.delete(ws);
        for (const op of this.byTag.values()) op.subscribers.delete(ws);
      });
    });
  }

  /** A response from the replica for one of our tags. */
  respond(r: Response): void {
    const op = this.byTag.get(r.tag);
    if (op === undefined) return;
    let frame: ServerFrame;
    if (r.level === 'failed') {
      const error = r.outcome.ok ? 'failed' : r.outcome.error;
      const code: ErrorCode = error.startsWith('unknown operation')
        ? 'unknown-op'
        : 'invalid-arguments';
      frame = { t: 'error', opId: op.opId, code, message: error };
      op.done = true;
    } else if (
      r.level === 'stable' &&
      op.lastTentative !== null &&
      outcomesEqual(op.lastTentative, r.outcome)
    ) {
      frame = { t: 'confirm', opId: op.opId };
      op.done = true;
    } else {
      frame = { t: 'view', opId: op.opId, level: r.level, outcome: r.outcome, id: r.id };
      if (r.level === 'tentative') op.lastTentative = r.outcome;
      // A weak op answers once; a strong op is done at its stable view.
      op.done = r.level === 'stable' || !op.strong;
    }
    const seconds = (performance.now() - op.startedAt) / 1000;
    if (op.views.length === 0 && frame.t !== 'error') this.observe('tentative', seconds);
    if (frame.t === 'confirm' || (frame.t === 'view' && frame.level === 'stable'))
      this.observe('stable', seconds);
    op.views.push(frame);
    for (const ws of op.subscribers) this.send(ws, frame);
    if (op.done) {
      this.byTag.delete(r.tag);
      for (const ws of op.subscribers)
        this.inFlight.set(ws, Math.max(0, (this.inFlight.get(ws) ?? 1) - 1));
      op.subscribers.clear();
    }
  }

  /** Invocations still waiting for their last view. */
  pending(): number {
    return this.byTag.size;
  }

  private remember(op: ClientOp): void {
    this.byOpId.set(op.opId, op);
    if (this.byOpId.size > REMEMBERED_OPS) {
      const oldest = this.byOpId.keys().next().value as string;
      this.byOpId.delete(oldest);
    }
  }

  private send(ws: WebSocket, frame: ServerFrame): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(encodeFrame(frame));
  }

  private error(ws: WebSocket, code: ErrorCode, message: string, opId?: string): void {
    this.counters.rejected++;
    this.send(
      ws,
      opId === undefined ? { t: 'error', code, message } : { t: 'error', opId, code, message },
    );
  }
}
