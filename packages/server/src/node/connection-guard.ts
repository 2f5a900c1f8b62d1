import type { IncomingMessage, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import WebSocket, { type RawData } from 'ws';
import type { EdgeLimits } from './edge-limits.js';
import { ViolationLog, type EdgeEndpoint, type ViolationKind } from './edge-violations.js';

/**
 * The WebSocket close codes the guard sends (RFC 6455 §7.4.1); ws itself closes with 1002 and 1007
 * for the frames it refuses.
 */
export const CLOSE_CODE = {
  /** Authentication failed, no hello in time, too many frames before it. */
  policy: 1008,
  tooBig: 1009,
} as const;

/** ws's error codes (its documented `err.code`) for frames it refuses, by our kind. */
const WS_ERROR_KINDS: Readonly<Record<string, ViolationKind>> = {
  WS_ERR_INVALID_UTF8: 'invalidPayload',
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 'tooBig',
};

/**
 * Limits at the network edge, before a connection has proved anything: a cap on unauthenticated
 * connections per remote address and in total (over it, the upgrade is refused with HTTP 503
 * before the WebSocket handshake), then per connection a deadline for the hello (or peer auth
 * answer), a small frame size, a byte and a frame budget (a Gate). HTTP itself gets timeouts, so
 * a half-sent upgrade request does not hold its socket. Every violation closes that connection
 * only, is counted per endpoint and kind, and logged at most once per interval.
 */
export class ConnectionGuard {
  private readonly perAddress = new Map<string, number>();
  private total = 0;
  /** Releases the slot an admitted upgrade holds, by its socket (until 'close' or `pass()`). */
  private readonly slots = new WeakMap<Duplex, () => void>();
  readonly violations: ViolationLog;

  constructor(
    readonly limits: EdgeLimits,
    log: Logger,
  ) {
    this.violations = new ViolationLog(log, limits.violationLogIntervalMs);
  }

  /** Connections admitted and not yet authenticated or closed. */
  get unauthenticated(): number {
    return this.total;
  }

  /**
   * Options for `createServer` (http or https). Node's defaults let a request head trickle in for
   * 60 s, checked only every 30 s (slowloris); an upgrade request is only a head, so this bounds a
   * half-sent one.
   */
  httpServerOptions(): Pick<
    ServerOptions,
    'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'
  > {
    return {
      headersTimeout: this.limits.headersTimeoutMs,
      requestTimeout: this.limits.requestTimeoutMs,
      connectionsCheckingInterval: this.limits.httpCheckIntervalMs,
    };
  }

  /**
   * In the HTTP server's 'upgrade' handler, before the handshake: true takes a slot for this
   * unauthenticated connection; false has answered 503 (over a cap) and closes the socket.
   */
  admit(req: IncomingMessage, socket: Duplex, endpoint: EdgeEndpoint): boolean {
    const address = req.socket.remoteAddress ?? 'unknown';
    const here = this.perAddress.get(address) ?? 0;
    const { unauthenticatedPerAddress: perAddress, unauthenticatedTotal: total } = this.limits;
    if (here >= perAddress || this.total >= total) {
      this.violations.record(
        endpoint,
        'overCap',
        { address, fromAddress: here, total: this.total },
        `upgrade refused with 503: over ${here >= perAddress ? `${perAddress} unauthenticated connections from one address` : `${total} unauthenticated connections`}`,
      );
      refuseUpgrade(
        socket,
        '503 Service Unavailable',
        'too many connections waiting to authenticate: retry in a second',
        'Retry-After: 1\r\n',
      );
      return false;
    }
    this.perAddress.set(address, here + 1);
    this.total++;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      this.total--;
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n === 0) this.perAddress.delete(address);
      else this.perAddress.set(address, n);
    };
    socket.once('close', release);
    this.slots.set(socket, release);
    return true;
  }

  /**
   * In the endpoint's 'connection' handler: the pre-authentication limits of this connection. A
   * connection that was not admitted (a server without the 'upgrade' handler, in tests) gets them
   * too, without a slot.
   */
  gate(ws: WebSocket, req: IncomingMessage, endpoint: EdgeEndpoint): Gate {
    const release = this.slots.get(req.socket) ?? (() => undefined);
    return new Gate(this, ws, req.socket, endpoint, release);
  }

  /**
   * A frame ws refused: ws closes the connection with the matching code (1002, 1007, 1009); it is
   * counted, and cut if the other side does not answer the close.
   */
  wsError(ws: WebSocket, endpoint: EdgeEndpoint, err: Error & { code?: string }): void {
    const kind = WS_ERROR_KINDS[err.code ?? ''] ?? 'protocol';
    this.violations.record(
      endpoint,
      kind,
      { code: err.code, err: err.message },
      'connection closed: the WebSocket layer refused a frame',
    );
    this.cutAfterGrace(ws);
  }

  /** Closes with `code` and, if the other side does not answer the close in time, cuts it. */
  close(ws: WebSocket, code: number, reason: string): void {
    if (ws.readyState === WebSocket.OPEN) ws.close(code, reason.slice(0, 120));
    this.cutAfterGrace(ws);
  }

  private cutAfterGrace(ws: WebSocket): void {
    setTimeout(() => ws.terminate(), this.limits.closeGraceMs).unref();
  }
}

/**
 * One connection until it authenticates: its deadline, and its frame, byte and frame-count
 * budgets. Bytes are counted on the raw socket, so a frame whose header claims megabytes is cut
 * after `preAuthBytes`, before ws has buffered it.
 */
export class Gate {
  private passed = false;
  private closing = false;
  private bytes = 0;
  private frames = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onData = (chunk: Buffer): void => {
    this.bytes += chunk.length;
    if (this.bytes > this.guard.limits.preAuthBytes)
      this.refuse(
        'tooBig',
        CLOSE_CODE.tooBig,
        `more than ${this.guard.limits.preAuthBytes} bytes before authenticating`,
      );
  };
  private readonly onPing = (): void => {
    this.count();
  };

  constructor(
    private readonly guard: ConnectionGuard,
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    private readonly endpoint: EdgeEndpoint,
    private readonly release: () => void,
  ) {
    const ms = guard.limits.helloDeadlineMs;
    const what =
      endpoint.name === 'client' ? 'hello' : endpoint.name === 'events' ? 'watch' : 'auth answer';
    this.timer = setTimeout(
      () => this.refuse('helloDeadline', CLOSE_CODE.policy, `no accepted ${what} within ${ms} ms`),
      ms,
    ).unref();
    socket.on('data', this.onData);
    ws.on('ping', this.onPing);
    ws.once('close', () => this.unwatch());
  }

  /** The connection proved itself: the protocol's limits apply from now on. */
  get authenticated(): boolean {
    return this.passed;
  }

  /**
   * A message arrived: true to handle it. Before authentication a frame over the small limit, or
   * one too many, closes the connection (false).
   */
  admit(data: RawData): boolean {
    if (this.passed) return true;
    if (this.closing) return false;
    const size = Array.isArray(data)
      ? data.reduce((n, b) => n + b.length, 0)
      : data instanceof ArrayBuffer
        ? data.byteLength
        : data.length;
    const limit = this.guard.limits.preAuthFrameBytes;
    if (size > limit) {
      this.refuse(
        'tooBig',
        CLOSE_CODE.tooBig,
        `a frame of ${size} bytes before authenticating (limit ${limit})`,
      );
      return false;
    }
    return this.count();
  }

  /** Authenticated: lifts the limits and frees the connection's slot. */
  pass(): void {
    if (this.closing) return;
    this.passed = true;
    this.unwatch();
    this.release();
  }

  /** Counts a violation that does not close the connection (the client gets an error frame). */
  record(kind: ViolationKind, detail: string): void {
    this.guard.violations.record(
      this.endpoint,
      kind,
      { detail },
      'connection sent a frame out of place',
    );
  }

  /** Counts a violation and closes the connection with `code`. */
  refuse(kind: ViolationKind, code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    // The slot stays taken until the socket is gone (at most closeGraceMs from now).
    this.unwatch();
    this.guard.violations.record(
      this.endpoint,
      kind,
      { closeCode: code, reason },
      'connection closed',
    );
    this.guard.close(this.ws, code, reason);
  }

  private count(): boolean {
    if (this.passed) return true;
    if (++this.frames <= this.guard.limits.preAuthFrames) return true;
    this.refuse(
      'flood',
      CLOSE_CODE.policy,
      `more than ${this.guard.limits.preAuthFrames} frames before authenticating`,
    );
    return false;
  }

  private unwatch(): void {
    clearTimeout(this.timer);
    this.socket.off('data', this.onData);
    this.ws.off('ping', this.onPing);
  }
}

/**
 * Answers an upgrade request with a plain HTTP error and closes the socket, so the client reads a
 * status and a reason (a destroyed socket told it only "socket hang up").
 */
export function refuseUpgrade(
  socket: Duplex,
  status: string,
  reason: string,
  extraHeaders = '',
): void {
  const body = `${reason}\n`;
  // Node removed its own 'error' listener when it handed the socket over for the upgrade.
  socket.on('error', () => undefined);
  socket.end(
    `HTTP/1.1 ${status}\r\n${extraHeaders}Connection: close\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
