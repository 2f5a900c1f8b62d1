import {
  decodeServerFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import type { Binding, ConsistencyLevel, ViewSink } from './binding.js';
import { OpViews } from './op-views.js';
import {
  errorFromWire,
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
  readonly views: OpViews<unknown>;
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
      views: new OpViews(levels, sink as ViewSink<unknown>),
    };
    this.pending.set(opId, p);
    signal?.addEventListener('abort', () => this.pending.delete(opId), { once: true });
    if (this.ready) this.socket!.send(p.frame);
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
    for (const p of this.pending.values()) p.views.error(new Unavailable('the client was closed'));
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
      this.failAll(
        new Unavailable(
          `no replica answered for ${this.options.connectTimeoutMs ?? 10_000} ms (tried ${this.options.urls.join(', ')})`,
        ),
      );
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
    const done =
      f.t === 'view'
        ? p.views.outcome(f.level, f.outcome)
        : f.t === 'confirm'
          ? p.views.confirm()
          : p.views.error(errorFromWire(f.code, f.message));
    if (done) this.pending.delete(p.opId);
  }

  private failAll(e: CreekError): void {
    for (const p of this.pending.values()) p.views.error(e);
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
