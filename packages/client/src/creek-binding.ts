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
  // `never` parameters: the browser's WebSocket, `ws` and their subclasses all fit.
  onopen: ((ev: never) => void) | null;
  onmessage: ((ev: never) => void) | null;
  onclose: ((ev: never) => void) | null;
  onerror: ((ev: never) => void) | null;
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

/** An op of this client's session, from its submission until the cluster may forget it. */
interface SessionOp {
  readonly opId: string;
  /** Its number in the session (exactly-once across replicas). */
  readonly seq: number;
  readonly op: string;
  readonly args: unknown;
  readonly level: 'weak' | 'strong';
  /** A strong op asked for its stable view alone (`invokeStrong`): the replica sends no other. */
  readonly stableOnly: boolean;
  /** The views still to deliver; null once the caller has its answer (or gave up). */
  views: OpViews<unknown> | null;
  /** Known committed (or never to be ordered): with `views` null, it may be acknowledged. */
  committed: boolean;
  /** The connection it was last sent on (`committed` frames speak for that connection only). */
  sentOn: number;
}

/**
 * The Creek binding (Correctables §5.1) over the wire protocol: one connection to one replica at a
 * time, inside one session. If the connection drops, the binding moves to the next replica and
 * resubmits every op that is not known committed, with the same op id and session number: the
 * cluster applies each op once (core/session-dedupe.ts) and the caller gets its result once.
 *
 * Session guarantees across replicas: views say what their replica had (`seen`); the binding keeps
 * the most it has seen and presents it when it reconnects, and a replica welcomes it only once it
 * has caught up (else the binding tries the next one): read-your-writes and monotonic reads. A
 * replica's `seen` leaves out the session's own uncommitted ops at the top of its own ops, which
 * the binding resubmits: a replica that dies before gossiping what it answered strands no session
 * that saw only its own writes there.
 */
export class CreekBinding implements Binding {
  private socket: SocketLike | null = null;
  private ready = false;
  private urlIndex = 0;
  /** Session ops by op id, until committed and answered. */
  private readonly ops = new Map<string, SessionOp>();
  private readonly session = randomId();
  private nextSeq = 1;
  /** Per origin replica, how many of its ops this session has seen. */
  private readonly seen: number[] = [];
  /** Counts connections, so that a `committed` frame is applied to ops sent on its connection. */
  private connection = 0;
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
    const seq = this.nextSeq++;
    const o: SessionOp = {
      // Unique within the session, which is all op ids need to be; short, since every frame
      // about the op carries it.
      opId: String(seq),
      seq,
      op,
      args,
      level: levels.includes('strong') ? 'strong' : 'weak',
      stableOnly: levels.includes('strong') && !levels.includes('weak'),
      views: new OpViews(levels, sink as ViewSink<unknown>),
      committed: false,
      sentOn: 0,
    };
    this.ops.set(o.opId, o);
    // The caller stops listening; the op may still be applied, and is tracked until committed.
    signal?.addEventListener('abort', () => this.answered(o), { once: true });
    if (this.ready) this.send(o);
  }

  /** Ops of the session not yet acknowledged (answered and committed). */
  unacknowledged(): number {
    return this.ops.size;
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
    for (const o of this.ops.values()) o.views?.error(new Unavailable('the client was closed'));
    this.ops.clear();
  }

  private send(o: SessionOp): void {
    o.sentOn = this.connection;
    this.socket!.send(
      encodeFrame({
        t: 'invoke',
        opId: o.opId,
        op: o.op,
        args: o.args as never,
        level: o.level,
        ...(o.stableOnly ? { tentative: false as const } : {}),
        seq: o.seq,
        acked: this.acked(),
      }),
    );
  }

  /** Every op of the session numbered below this is answered and committed. */
  private acked(): number {
    let min = this.nextSeq;
    for (const o of this.ops.values()) if (o.seq < min) min = o.seq;
    return min;
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const make = await this.factory;
    const url = this.options.urls[this.urlIndex % this.options.urls.length]!;
    const ws = make(url);
    this.socket = ws;
    this.connection++;
    ws.onopen = () =>
      ws.send(
        encodeFrame({
          t: 'hello',
          version: PROTOCOL_VERSION,
          token: this.options.token,
          session: this.session,
          ...(this.seen.some((n) => n > 0) ? { seen: [...this.seen] } : {}),
        }),
      );
    ws.onmessage = (ev: { data: unknown }) =>
      this.onFrame(typeof ev.data === 'string' ? ev.data : String(ev.data));
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
      // Resubmit every op not known committed, answered ones too (their commit must be learnt):
      // same op ids and numbers, so nothing is applied twice.
      for (const o of this.ops.values()) if (!o.committed) this.send(o);
      return;
    }
    if (f.t === 'committed') {
      for (const o of [...this.ops.values()])
        if (o.seq < f.below && o.sentOn === this.connection) this.commit(o);
      return;
    }
    if (f.t === 'confirms') {
      for (const opId of f.opIds) {
        const o = this.ops.get(opId);
        if (o === undefined) continue;
        o.committed = true;
        if (o.views?.confirm() === true) this.answered(o);
      }
      return;
    }
    if (f.t === 'error' && f.opId === undefined) {
      if (f.code === 'unauthorized') {
        this.closed = true;
        return this.failAll(new Unauthorized(f.message));
      }
      // E.g. `unavailable` when the replica has not caught up with this session: it closes the
      // connection, and the binding tries the next replica.
      return;
    }
    const o = this.ops.get(f.opId!);
    if (o === undefined) return;
    if (f.t === 'view') {
      this.see(f.seen);
      // A stable view is of a committed op. A weak view without an op id is of an op that is never
      // ordered (a read, answered from the replica's state): the cluster keeps nothing to forget.
      if (f.level === 'stable' || (o.level === 'weak' && (f.id ?? null) === null))
        o.committed = true;
      if (o.views?.outcome(f.level, f.outcome) === true) this.answered(o);
    } else if (f.t === 'confirm') {
      o.committed = true;
      if (o.views?.confirm() === true) this.answered(o);
    } else {
      // Refused arguments or op names are refused everywhere: never ordered. Busy or unavailable
      // leave the op unanswered by this replica; it may be resubmitted at the next connection.
      if (f.code === 'invalid-arguments' || f.code === 'unknown-op') o.committed = true;
      o.views?.error(errorFromWire(f.code, f.message));
      this.answered(o);
    }
  }

  /**
   * Keeps the most the session has seen. A view's own id is not counted: the session's own ops
   * that are not committed are resubmitted when it moves, so no replica needs to have them first.
   */
  private see(seen: readonly number[] | undefined): void {
    if (seen === undefined) return;
    for (let i = 0; i < seen.length; i++) this.seen[i] = Math.max(this.seen[i] ?? 0, seen[i]!);
  }

  /** The caller has its answer (or stopped listening): the op is forgotten once committed. */
  private answered(o: SessionOp): void {
    o.views = null;
    if (o.committed) this.ops.delete(o.opId);
  }

  private commit(o: SessionOp): void {
    o.committed = true;
    if (o.views === null) this.ops.delete(o.opId);
  }

  private failAll(e: CreekError): void {
    for (const o of this.ops.values()) {
      o.views?.error(e);
      o.views = null;
    }
  }
}

/** A random session id. `randomUUID` exists only in secure contexts (https, localhost). */
function randomId(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function socketFactory(given: CreekBindingOptions['WebSocket']): Promise<SocketFactory> {
  if (given !== undefined) return (url) => new given(url);
  const global = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (global !== undefined) return (url) => new global(url);
  // Node before 22 has no global WebSocket: use the `ws` package.
  const ws = (await import('ws')).default as unknown as new (url: string) => SocketLike;
  return (url) => new ws(url);
}
