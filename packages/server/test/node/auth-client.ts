import { randomUUID } from 'node:crypto';
import { decodeServerFrame, PROTOCOL_VERSION, type ServerFrame } from '@creek/protocol';
import WebSocket from 'ws';

type Welcome = Extract<ServerFrame, { t: 'welcome' }>;
type ErrorFrame = Extract<ServerFrame, { t: 'error' }>;

/**
 * A bare protocol client for the identity tests: it says hello with whatever token it is given
 * (the SDK presents none yet) and keeps every frame the replica sends, each checked against the
 * protocol's schema. Every wait has a generous deadline: CI runs on a loaded machine.
 */
export class AuthClient {
  readonly frames: ServerFrame[] = [];
  /** Resolves when the replica closes the connection (or it breaks). */
  readonly closed: Promise<void>;
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly ws: WebSocket) {
    this.closed = new Promise((r) => ws.once('close', () => r()));
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      const d = decodeServerFrame(String(data));
      if (!d.ok) throw new Error(`the replica sent a frame the protocol refuses: ${d.message}`);
      this.frames.push(d.frame);
      for (const w of [...this.waiters]) w();
    });
    ws.on('close', () => {
      for (const w of [...this.waiters]) w();
    });
  }

  /**
   * Connects and says hello; resolves once the replica welcomed it, or refused it (the error is
   * then in `refusal`).
   */
  static async open(
    url: string,
    hello: { auth?: string; session?: string; token?: string } = {},
  ): Promise<AuthClient> {
    const c = await AuthClient.connect(url);
    c.send({ t: 'hello', version: PROTOCOL_VERSION, ...hello });
    await c.waitFor(() => c.welcome !== null || c.refusal !== null || c.isClosed);
    return c;
  }

  /** Connects, and says nothing yet (a test sends what it wants first). */
  static async connect(url: string): Promise<AuthClient> {
    const ws = new WebSocket(url);
    const c = new AuthClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return c;
  }

  get welcome(): Welcome | null {
    return (this.frames.find((f) => f.t === 'welcome') as Welcome | undefined) ?? null;
  }

  /** The error that named no op (a refused hello, say), if one came. */
  get refusal(): ErrorFrame | null {
    return (
      (this.frames.find((f) => f.t === 'error' && f.opId === undefined) as
        ErrorFrame | undefined) ?? null
    );
  }

  get isClosed(): boolean {
    return this.ws.readyState === WebSocket.CLOSED || this.ws.readyState === WebSocket.CLOSING;
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** Invokes `op`; resolves with its final frame: a stable view, a confirm, a weak view, an error. */
  async call(
    op: string,
    args: unknown,
    o: { level?: 'weak' | 'strong'; opId?: string; seq?: number } = {},
  ): Promise<ServerFrame> {
    const level = o.level ?? 'strong';
    const opId = o.opId ?? randomUUID();
    this.send({
      t: 'invoke',
      opId,
      op,
      args,
      level,
      ...(o.seq === undefined ? {} : { seq: o.seq, acked: 0 }),
    });
    const final = (f: ServerFrame): boolean =>
      ('opId' in f && f.opId === opId && (f.t === 'error' || f.t === 'confirm')) ||
      (f.t === 'view' && f.opId === opId && (f.level === 'stable' || level === 'weak'));
    await this.waitFor(() => this.frames.some(final));
    return this.frames.find(final)!;
  }

  /** The value an op's final frame gives, or its error as `error: code: message`. */
  async value(
    op: string,
    args: unknown,
    o: Parameters<AuthClient['call']>[2] = {},
  ): Promise<unknown> {
    const f = await this.call(op, args, o);
    if (f.t === 'error') return `error: ${f.code}: ${f.message}`;
    if (f.t === 'view') return f.outcome.ok ? f.outcome.value : `failed: ${f.outcome.error}`;
    // A confirm: the stable outcome equals the last tentative view.
    const opId = f.t === 'confirm' ? f.opId : '';
    const views = this.frames.filter(
      (x): x is Extract<ServerFrame, { t: 'view' }> => x.t === 'view' && x.opId === opId,
    );
    const last = views.at(-1)!;
    return last.outcome.ok ? last.outcome.value : `failed: ${last.outcome.error}`;
  }

  /** Resolves once `done()` holds; rejects after `ms`. */
  waitFor(done: () => boolean, ms = 20_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`waited ${ms} ms; frames: ${JSON.stringify(this.frames).slice(0, 500)}`));
      }, ms);
      this.waiters.add(check);
    });
  }

  close(): void {
    this.ws.close();
  }
}
