import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));

export interface Status {
  id: number;
  role: string;
  leader: number | null;
  committed: number;
  tentative: number;
  digest: string;
  settled: boolean;
}

/** A cluster of real `creek start` processes on 127.0.0.1, for end-to-end tests. */
export class TestCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'creek-e2e-'));
  readonly token = randomBytes(16).toString('hex');
  readonly admin = randomBytes(16).toString('hex');
  readonly procs: (ChildProcess | null)[];
  private readonly peers: string;

  constructor(
    readonly size: number,
    readonly basePort = 20000 + Math.floor(Math.random() * 20000),
  ) {
    writeFileSync(join(this.dir, 'secret'), randomBytes(24).toString('hex'));
    writeFileSync(join(this.dir, 'token'), this.token);
    writeFileSync(join(this.dir, 'admin'), this.admin);
    this.peers = Array.from({ length: size }, (_, i) => `${i}=ws://127.0.0.1:${basePort + i}`).join(
      ',',
    );
    this.procs = Array.from({ length: size }, () => null);
  }

  start(i: number): void {
    const args = [
      BIN,
      'start',
      '--id',
      String(i),
      '--listen',
      `127.0.0.1:${this.basePort + i}`,
      '--peers',
      this.peers,
      '--data',
      join(this.dir, `r${i}`),
      '--secret-file',
      join(this.dir, 'secret'),
      '--token-file',
      join(this.dir, 'token'),
      '--admin-token-file',
      join(this.dir, 'admin'),
    ];
    this.procs[i] = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, CREEK_LOG_LEVEL: 'error' },
    });
  }

  async startAll(): Promise<void> {
    for (let i = 0; i < this.size; i++) this.start(i);
    await this.until(
      async () => (await this.statuses()).every((s) => s !== null && s.leader !== null),
      30_000,
      'a leader',
    );
  }

  kill(i: number): void {
    this.procs[i]?.kill('SIGKILL');
    this.procs[i] = null;
  }

  url(i: number): string {
    return `ws://127.0.0.1:${this.basePort + i}/client`;
  }

  async status(i: number): Promise<Status | null> {
    try {
      const r = await fetch(`http://127.0.0.1:${this.basePort + i}/status`);
      return (await r.json()) as Status;
    } catch {
      return null;
    }
  }

  async statuses(): Promise<(Status | null)[]> {
    return Promise.all(Array.from({ length: this.size }, (_, i) => this.status(i)));
  }

  async adminPost(i: number, action: string): Promise<number> {
    const r = await fetch(`http://127.0.0.1:${this.basePort + i}/admin/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.admin}` },
    });
    return r.status;
  }

  /** All replicas up, settled, with the same committed count and state. */
  async converged(timeoutMs = 30_000): Promise<Status[]> {
    let last: (Status | null)[] = [];
    await this.until(
      async () => {
        last = await this.statuses();
        const s = last as Status[];
        return (
          s.every((x) => x !== null && x.settled) &&
          s.every((x) => x.committed === s[0]!.committed && x.digest === s[0]!.digest)
        );
      },
      timeoutMs,
      'convergence',
    );
    return last as Status[];
  }

  async until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await this.statuses())}`);
  }

  stop(): void {
    for (let i = 0; i < this.size; i++) this.kill(i);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

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

  static async connect(url: string, token: string): Promise<RawClient> {
    const c = new RawClient();
    c.ws = new WebSocket(url);
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
    opId = randomUUID(),
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
