import {
  decodeServerFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import type { Binding, ConsistencyLevel, ViewSink } from './binding.js';
import {
  errorFromWire,
  OperationFailed,
  ProtocolError,
  Unauthorized,
  Unavailable,
  type CreekError,
} from './errors.js';

/** The subset of the WebSocket API both the browser's and `ws` provide. */
interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
type SocketFactory = (url: string) => SocketLike;

export interface CreekBindingOptions {
  /** Client endpoints of the replicas, e.g. ws://127.0.0.1:7100/client; tried in order on failure. */
  readonly urls: readonly string[];
  readonly token?: string;
  /** How long to keep trying to reach a replica before ops fail with Unavailable. */
  readonly connectTimeoutMs?: number;
  /** Defaults to the global WebSocket (browsers, React Native, Node ≥ 22) or the `ws` package. */
  readonly WebSocket?: new (url: string) => SocketLike;
}

interface Pending {
  readonly opId: string;
  readonly frame: string;
  readonly levels: readonly ConsistencyLevel[];
  readonly sink: ViewSink<unknown>;
  /** The last tentative outcome, which a `confirm` refers to (it may be a failure). */
  lastTentative: { ok: true; value: unknown } | { ok: false; error: string } | null;
}

/**
 * The Creek binding (Correctables §5.1) over the wire protocol: one connection to one replica at a
 * time. If it drops, the binding moves to the next replica and resubmits every op in flight with
 * the same op id, which the cluster answers without applying it twice.
 */
export class CreekBinding implements Binding {
  private socket: SocketLike | null = null;
  private ready = false;
  private urlIndex = 0;
  private readonly pending = new Map<string, Pending>();
  private closed = false;
  private failingSince: number | null = null;
  private backoffMs = 50;
  private readonly factory: Promise<SocketFactory>;
  /** The replica this client is talking to, once welcomed. */
  replica: number | null = null;

  constructor(private readonly options: CreekBindingOptions) {
    if (options.urls.length === 0) throw new Error('connect: give at least one replica URL');
    this.factory = socketFactory(options.WebSocket);
    void this.open();
  }

  consistencyLevels(): ConsistencyLevel[] {
    return ['weak', 'strong'];
  }

  submitOperation<T>(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal?: AbortSignal,
  ): void {
    const opId = randomId();
    const level = levels.includes('strong') ? 'strong' : 'weak';
    const p: Pending = {
      opId,
      frame: encodeFrame({ t: 'invoke', opId, op, args, level }),
      levels,
      sink: sink as ViewSink<unknown>,
      lastTentative: null,
    };
    this.pending.set(opId, p);
    signal?.addEventListener('abort', () => this.pending.delete(opId), { once: true });
    if (this.ready) this.socket!.send(p.frame);
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
    for (const p of this.pending.values()) p.sink.error(new Unavailable('the client was closed'));
    this.pending.clear();
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const make = await this.factory;
    const url = this.options.urls[this.urlIndex % this.options.urls.length]!;
    const ws = make(url);
    this.socket = ws;
    ws.onopen = () =>
      ws.send(encodeFrame({ t: 'hello', version: PROTOCOL_VERSION, token: this.options.token }));
    ws.onmessage = (ev) => this.onFrame(typeof ev.data === 'string' ? ev.data : String(ev.data));
    ws.onerror = () => undefined; // a close follows
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.ready = false;
      this.replica = null;
      this.retry();
    };
  }

  private retry(): void {
    if (this.closed) return;
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.failingSince > (this.options.connectTimeoutMs ?? 10_000)) {
      for (const p of this.pending.values())
        p.sink.error(
          new Unavailable(
            `no replica answered for ${this.options.connectTimeoutMs ?? 10_000} ms (tried ${this.options.urls.join(', ')})`,
          ),
        );
      this.pending.clear();
      this.failingSince = now;
    }
    this.urlIndex++;
    setTimeout(() => void this.open(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 1000);
  }

  private onFrame(text: string): void {
    const decoded = decodeServerFrame(text);
    if (!decoded.ok)
      return this.failAll(
        new ProtocolError(`the replica sent a frame this client cannot read: ${decoded.message}`),
      );
    const f: ServerFrame = decoded.frame;
    if (f.t === 'welcome') {
      this.ready = true;
      this.replica = f.replica;
      this.failingSince = null;
      this.backoffMs = 50;
      // Resubmit what is in flight: the same op ids, so nothing is applied twice.
      for (const p of this.pending.values()) this.socket!.send(p.frame);
      return;
    }
    if (f.t === 'error' && f.opId === undefined) {
      if (f.code === 'unauthorized') {
        this.closed = true;
        return this.failAll(new Unauthorized(f.message));
      }
      return; // e.g. a bad frame we sent: per-op errors come with an op id
    }
    const p = this.pending.get(f.opId!);
    if (p === undefined) return;
    const wantsPreliminary = p.levels.includes('weak') && p.levels.includes('strong');
    const strong = p.levels.includes('strong');
    switch (f.t) {
      case 'view': {
        if (f.level === 'tentative' && strong) {
          p.lastTentative = f.outcome;
          // A preliminary view of a strong op. One that failed speculatively is not shown as a
          // view (it has no value); the final view may still succeed.
          if (f.outcome.ok && wantsPreliminary)
            p.sink.view({ value: f.outcome.value, level: 'weak', final: false });
          return;
        }
        this.pending.delete(p.opId);
        if (!f.outcome.ok) return p.sink.error(new OperationFailed(f.outcome.error));
        return p.sink.view({
          value: f.outcome.value,
          level: f.level === 'stable' ? 'strong' : 'weak',
          final: true,
        });
      }
      case 'confirm': {
        // The stable outcome equals the last tentative one (Correctables §5.2).
        this.pending.delete(p.opId);
        const last = p.lastTentative;
        if (last === null)
          return p.sink.error(
            new ProtocolError('a confirmation arrived before any tentative view'),
          );
        if (!last.ok) return p.sink.error(new OperationFailed(last.error));
        return p.sink.view({ value: last.value, level: 'strong', final: true });
      }
      case 'error':
        this.pending.delete(p.opId);
        return p.sink.error(errorFromWire(f.code, f.message));
    }
  }

  private failAll(e: CreekError): void {
    for (const p of this.pending.values()) p.sink.error(e);
    this.pending.clear();
  }
}

function randomId(): string {
  return globalThis.crypto.randomUUID();
}

async function socketFactory(given: CreekBindingOptions['WebSocket']): Promise<SocketFactory> {
  if (given !== undefined) return (url) => new given(url);
  const global = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (global !== undefined) return (url) => new global(url);
  // Node before 22 has no global WebSocket: use the `ws` package.
  const ws = (await import('ws')).default as unknown as new (url: string) => SocketLike;
  return (url) => new ws(url);
}
