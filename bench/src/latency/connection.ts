/**
 * bench:latency's connections: one client-side shape for echo and for Creek, so both pay the same
 * client costs (build a frame, JSON.parse the answer, look the op up by id).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type WebSocket from 'ws';
import { completion, openRaw, type RawFrame } from '../raw-client.js';
import { isStopping, shutdown } from './children.js';

/**
 * strong: a strong op that asks for the stable view alone (invokeStrong); invoke: a strong op's
 * tentative view, then its stable one.
 */
export type Kind = 'echo' | 'weak' | 'strong' | 'invoke';
/** sentAt/doneAt/tentativeAt are performance.now() ms; tentativeAt is a strong op's first view. */
export type Done = (
  sentAt: number,
  doneAt: number,
  ok: boolean,
  tentativeAt: number | null,
) => void;

interface Pending {
  readonly sentAt: number;
  readonly strong: boolean;
  tentativeAt: number | null;
  readonly done: Done;
}

/** A connection that fails outside a measurement ends the run. */
export const failRun = (err: Error): void => {
  if (isStopping()) return;
  console.error(`\nbench:latency: ${err.message}`);
  void shutdown(1);
};

export class Conn {
  private readonly pending = new Map<string, Pending>();
  /** Called if the connection fails or closes while this benchmark still uses it. */
  onFail: (err: Error) => void = failRun;
  firstError: string | null = null;
  private closing = false;
  private ws!: WebSocket;

  private constructor(
    private readonly echo: boolean,
    private readonly keys: number,
  ) {}

  /** Without a token: an echo or floor server, whose every answer completes the op. */
  static async open(url: string, opts: { token?: string; keys: number }): Promise<Conn> {
    const conn = new Conn(opts.token === undefined, opts.keys);
    const ws = await openRaw(url, opts.token, (f) => conn.onFrame(f));
    conn.ws = ws;
    ws.on('close', () => {
      if (!conn.closing) conn.onFail(new Error(`connection to ${url} closed during the run`));
    });
    ws.on('error', (err) => conn.onFail(new Error(`connection to ${url}: ${err.message}`)));
    return conn;
  }

  /** An invoke frame; the echo connection sends the very same frame as its message. */
  frame(kind: Exclude<Kind, 'echo'>, n: number): { opId: string; text: string } {
    const opId = randomUUID();
    const key = `k${n % this.keys}`;
    const level = kind === 'weak' ? 'weak' : 'strong';
    const text = JSON.stringify({
      t: 'invoke',
      opId,
      op: 'kv.increment',
      args: { key },
      level,
      ...(kind === 'strong' ? { tentative: false } : {}),
    });
    return { opId, text };
  }

  private seq = 0;

  issue(kind: Kind, done: Done): void {
    // The echo is sent the weak invoke frame.
    const { opId, text } = this.frame(kind === 'echo' ? 'weak' : kind, this.seq++);
    this.pending.set(opId, {
      sentAt: performance.now(),
      strong: kind === 'strong' || kind === 'invoke',
      tentativeAt: null,
      done,
    });
    this.ws.send(text);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  private onFrame(f: RawFrame): void {
    const now = performance.now();
    const op = f.opId === undefined ? undefined : this.pending.get(f.opId);
    if (op === undefined) return;
    const c = this.echo ? { ok: true as const } : completion(f, op.strong);
    if (c === null) {
      op.tentativeAt ??= now; // a strong op's tentative view: not done yet
      return;
    }
    if (!c.ok) this.firstError ??= c.error;
    this.pending.delete(f.opId!);
    op.done(op.sentAt, now, c.ok, op.tentativeAt);
  }

  close(): void {
    this.closing = true;
    this.ws.close();
  }
}
