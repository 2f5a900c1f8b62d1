/**
 * What bench:latency measures against, all on 127.0.0.1: the bare WebSocket echo server, the floor
 * servers (floors.ts), and the local Creek cluster of `creek start` processes, with the /status
 * and /metrics reads that find its leader, wait for it to settle and read its own response times.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';
import { startFloors as startFloorServers } from '../floors.js';
import { printTail, removeOnExit, sleep, track } from './children.js';
import { progress } from './format.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CREEK_BIN = join(ROOT, 'packages/server/bin/creek.js');
const SETTLE_TIMEOUT_MS = 30_000;

/** A server child's ws:// URL, and its pid for its CPU time. */
export interface Server {
  url: string;
  pid: number | undefined;
}

/** Plain CommonJS so it starts without tsx; exits when this process goes (its stdin closes). */
const ECHO_SERVER = `
const { WebSocketServer } = require('ws');
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('listening', () => console.log('echo-port ' + wss.address().port));
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

/** The echo server: its URL, and its pid for its CPU time. */
export function startEcho(): Promise<Server> {
  return startServer('echo server', ['-e', ECHO_SERVER]);
}

/**
 * The floor servers (floors.ts, as bench:peers starts them, without fsync as this cluster runs):
 * their directory is removed with the cluster's, even on an abrupt exit, and they exit when this
 * process does (their stdin closes).
 */
export async function startFloors(): Promise<{ durable: string; relay: string }> {
  const floors = await startFloorServers(false);
  removeOnExit(floors.dir);
  return floors;
}

/** Starts a child that prints `port N` (or `echo-port N`) once listening; its ws:// URL and pid. */
async function startServer(name: string, args: string[]): Promise<Server> {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const child = track(name, proc);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 10 s`)), 10_000);
    proc.stdout.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  }).catch((err: unknown) => {
    printTail(child);
    throw err;
  });
  return { url: `ws://127.0.0.1:${port}`, pid: proc.pid };
}

/** Ports free right now on 127.0.0.1 (held together so that they differ). */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (s) =>
        new Promise<number>((resolve, reject) => {
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
        }),
    ),
  );
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export class Cluster {
  readonly token = randomBytes(16).toString('hex');
  ports: number[] = [];
  /** The replica processes' pids, by replica id (for their CPU time). */
  readonly pids: (number | undefined)[] = [];

  constructor(readonly size: number) {}

  async start(): Promise<void> {
    const dir = mkdtempSync(join(os.tmpdir(), 'creek-bench-'));
    removeOnExit(dir);
    writeFileSync(join(dir, 'secret'), randomBytes(24).toString('hex'), { mode: 0o600 });
    writeFileSync(join(dir, 'token'), this.token, { mode: 0o600 });
    this.ports = await freePorts(this.size);
    const peers = this.ports.map((p, i) => `${i}=ws://127.0.0.1:${p}`).join(',');
    // Node flags for the replicas only, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' to profile them
    // (NODE_OPTIONS refuses --cpu-prof); a profile is written when the replica exits on SIGTERM.
    const nodeArgs = (process.env.CREEK_BENCH_REPLICA_NODE_ARGS ?? '').split(' ').filter(Boolean);
    for (let i = 0; i < this.size; i++) {
      const args = [
        ...nodeArgs,
        CREEK_BIN,
        'start',
        '--id',
        String(i),
        '--listen',
        `127.0.0.1:${this.ports[i]!}`,
        '--peers',
        peers,
        '--data',
        join(dir, `r${i}`),
        '--secret-file',
        join(dir, 'secret'),
        '--token-file',
        join(dir, 'token'),
        // The same token reads /status and /metrics (a benchmark's cluster has one operator).
        '--admin-token-file',
        join(dir, 'token'),
      ];
      const proc = spawn(process.execPath, args, {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CREEK_LOG_LEVEL: process.env.CREEK_LOG_LEVEL ?? 'warn' },
      });
      track(`replica ${i}`, proc);
      this.pids[i] = proc.pid;
    }
  }

  clientUrl(i: number): string {
    return `ws://127.0.0.1:${this.ports[i]!}/client`;
  }

  async status(i: number): Promise<ReplicaStatus | null> {
    let body: unknown;
    try {
      const r = await fetch(`http://127.0.0.1:${this.ports[i]!}/status`, {
        signal: AbortSignal.timeout(2000),
        headers: { authorization: `Bearer ${this.token}` },
      });
      body = await r.json();
    } catch {
      return null;
    }
    return ReplicaStatusSchema.parse(body);
  }

  /**
   * The replica's own response-time histogram (invoke arrives → view leaves), cumulative: the sum
   * and count per level ('tentative': first view, 'stable': stable view or confirm).
   */
  async serverTimes(
    i: number,
  ): Promise<Record<'tentative' | 'stable', { sum: number; n: number }>> {
    const text = await (
      await fetch(`http://127.0.0.1:${this.ports[i]!}/metrics`, {
        headers: { authorization: `Bearer ${this.token}` },
      })
    ).text();
    const read = (suffix: string, level: string): number => {
      const re = new RegExp(
        `^creek_response_seconds_${suffix}\\{[^}]*level="${level}"[^}]*\\} (\\S+)$`,
        'm',
      );
      return Number(re.exec(text)?.[1] ?? 0); // absent until the level's first observation
    };
    return {
      tentative: { sum: read('sum', 'tentative') * 1000, n: read('count', 'tentative') },
      stable: { sum: read('sum', 'stable') * 1000, n: read('count', 'stable') },
    };
  }

  statuses(): Promise<(ReplicaStatus | null)[]> {
    return Promise.all(this.ports.map((_, i) => this.status(i)));
  }

  /** Every replica answers /status and names the same leader; null on timeout. */
  async awaitLeader(timeoutMs: number): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const s = await this.statuses();
      const leader = s[0]?.leader ?? null;
      if (leader !== null && s.every((x) => x !== null && x.leader === leader)) return leader;
      await sleep(100);
    }
    return null;
  }

  /** All replicas settled with the same committed list; the time it took, or null on timeout. */
  async awaitSettled(timeoutMs: number): Promise<number | null> {
    const t0 = performance.now();
    while (performance.now() - t0 < timeoutMs) {
      const s = await this.statuses();
      const first = s[0];
      if (
        first !== null &&
        first !== undefined &&
        s.every(
          (x) =>
            x !== null && x.settled && x.committed === first.committed && x.digest === first.digest,
        )
      )
        return performance.now() - t0;
      await sleep(50);
    }
    return null;
  }
}

/** Lets the cluster commit what the last measurement left tentative, so cells don't overlap. */
export async function settle(cluster: Cluster): Promise<void> {
  const took = await cluster.awaitSettled(SETTLE_TIMEOUT_MS);
  if (took === null)
    progress(
      `  warning: the cluster did not settle within ${SETTLE_TIMEOUT_MS / 1000} s; going on`,
    );
  else if (took > 500) progress(`  cluster settled in ${(took / 1000).toFixed(1)} s`);
}
