import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

export interface Views {
  frames: {
    t: string;
    level?: string;
    outcome?: { ok: boolean; value?: unknown; error?: string };
    code?: string;
  }[];
  done: boolean;
}

/** A bare protocol client: enough to drive a replica from a test. */
export class RawClient {
  private ws!: WebSocket;
  private readonly ops = new Map<string, Views & { strong: boolean; resolve: () => void }>();

  /** `ca`: PEM of the CA a wss:// replica's certificate chains to. */
  static async connect(url: string, token: string, ca?: string): Promise<RawClient> {
    const c = new RawClient();
    c.ws = new WebSocket(url, ca === undefined ? {} : { ca });
    await new Promise<void>((resolve, reject) => {
      c.ws.once('error', reject);
      c.ws.on('open', () => c.ws.send(JSON.stringify({ t: 'hello', version: 1, token })));
      c.ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { t: string; opId?: string; level?: string };
        if (f.t === 'welcome') return resolve();
        const op = f.opId === undefined ? undefined : c.ops.get(f.opId);
        if (op === undefined) return;
        op.frames.push(f as Views['frames'][number]);
        if (f.t === 'error' || f.t === 'confirm' || f.level === 'stable' || !op.strong) {
          op.done = true;
          op.resolve();
        }
      });
    });
    return c;
  }

  /** Sends an invoke; the promise settles when the op is done (or never, if the replica dies). */
  invoke(
    op: string,
    args: unknown,
    level: 'weak' | 'strong',
    opId: string = randomUUID(),
  ): { opId: string; views: Views; done: Promise<void> } {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const views = { frames: [], done: false, strong: level === 'strong', resolve };
    this.ops.set(opId, views);
    this.ws.send(JSON.stringify({ t: 'invoke', opId, op, args, level }));
    return { opId, views, done };
  }

  close(): void {
    this.ws.close();
  }
}

export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)),
  ]);
}
