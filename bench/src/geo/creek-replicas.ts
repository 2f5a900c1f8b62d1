/**
 * A Creek cluster of `creek start` processes whose every peer link crosses its own Toxiproxy
 * proxy: replica i reaches replica j at proxy (i, j), delayed by the profile's one-way delay
 * between their regions. LocalCluster gives every replica the same `--peers` list, so it cannot
 * say "j, as i reaches it"; these processes are started here with a `--peers` list of their own.
 *
 * A replica sends on the connection it dialed (peer-mesh.ts), so what i sends j crosses proxy
 * (i, j) upstream; both directions are delayed alike, so the handshake pays the link too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';
import type { NetworkProfile } from '@creek/server/geo';
import { ports } from '../peer-servers.js';
import { linkDelay } from './links.js';
import type { Toxiproxy } from './toxiproxy.js';

const BIN = fileURLToPath(new URL('../../../packages/server/bin/creek.js', import.meta.url));

export interface GeoCreek {
  /** The client URL of replica i (a client in i's region connects to it directly). */
  readonly urls: readonly string[];
  /** The client token every replica accepts. */
  readonly token: string;
  /** Replica i's /status (null when it does not answer). */
  status(i: number): Promise<ReplicaStatus | null>;
  /** The leader all replicas agree on, once they do. */
  waitForLeader(timeoutMs: number): Promise<number>;
  /**
   * Makes replica `target` lead. Election is Ω: the lowest-numbered replica heard that hears a
   * majority runs, so while the leader is cut off (the admin API's block, on the leader alone) a
   * target numbered below every other replica is elected; the leader is then reconnected and
   * steps down to the higher ballot. The cluster has no leader transfer of its own yet.
   */
  placeLeader(target: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export interface GeoCreekOptions {
  readonly name: string;
  readonly replicas: number;
  readonly profile: NetworkProfile;
  readonly toxiproxy: Toxiproxy;
  /** False: `--speculation off`, the SMR baseline. */
  readonly speculative: boolean;
  /** The app module (`--app`); its ops and the built-ins are served. */
  readonly app: string;
  /** More `creek start` flags, the same for every replica (`--reads quorum`, `--network wan`). */
  readonly flags?: readonly string[];
}

export async function startGeoCreek(o: GeoCreekOptions): Promise<GeoCreek> {
  const dir = mkdtempSync(join(tmpdir(), `creek-bench-geo-${o.name}-`));
  const secret = (file: string): string => {
    const path = join(dir, file);
    writeFileSync(path, randomBytes(24).toString('hex') + '\n', { mode: 0o600 });
    return path;
  };
  const clusterSecret = secret('cluster.secret');
  const tokenFile = secret('client.token');
  const adminFile = secret('admin.token');
  const token = readFileSync(tokenFile, 'utf8').trim();
  const adminToken = readFileSync(adminFile, 'utf8').trim();
  const listen = await ports(o.replicas, 21_000 + Math.floor(Math.random() * 4000));
  const n = o.replicas;
  // proxy[i][j]: where replica i dials replica j.
  const proxy: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      const d = linkDelay(o.profile, i, j);
      proxy[i]![j] = await o.toxiproxy.proxy(`${o.name}-${i}-${j}`, `127.0.0.1:${listen[j]}`, {
        up: d,
        down: d,
      });
    }
  const clusterId = `geo-${o.name}-${randomBytes(4).toString('hex')}`;
  const procs: ChildProcess[] = [];
  let stopping = false;
  let exited: string | null = null;
  for (let i = 0; i < n; i++) {
    const peers = Array.from(
      { length: n },
      (_, j) => `${j}=ws://127.0.0.1:${i === j ? listen[j] : proxy[i]![j]}`,
    ).join(',');
    const args = [
      BIN,
      'start',
      '--id',
      String(i),
      '--listen',
      `127.0.0.1:${listen[i]}`,
      '--peers',
      peers,
      '--data',
      join(dir, `replica-${i}`),
      '--secret-file',
      clusterSecret,
      '--token-file',
      tokenFile,
      '--admin-token-file',
      adminFile,
      '--cluster-id',
      clusterId,
      '--app',
      o.app,
      ...(o.speculative ? [] : ['--speculation', 'off']),
      ...(o.flags ?? []),
    ];
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, CREEK_LOG_LEVEL: 'error' },
    });
    child.on('exit', (code, signal) => {
      if (!stopping) exited = `replica ${i} of ${o.name} exited (${signal ?? `status ${code}`})`;
    });
    procs.push(child);
  }
  const status = async (i: number): Promise<ReplicaStatus | null> => {
    try {
      const r = await fetch(`http://127.0.0.1:${listen[i]}/status`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      if (!r.ok) return null;
      return ReplicaStatusSchema.parse(await r.json());
    } catch {
      return null;
    }
  };
  const admin = async (i: number, action: string): Promise<void> => {
    const r = await fetch(`http://127.0.0.1:${listen[i]}/admin/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    if (!r.ok)
      throw new Error(`admin ${action} on replica ${i}: HTTP ${r.status} ${await r.text()}`);
  };
  const stop = async (): Promise<void> => {
    stopping = true;
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  const geo: GeoCreek = {
    urls: listen.map((p) => `ws://127.0.0.1:${p}/client`),
    token,
    status,
    async placeLeader(target, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const leader = await geo.waitForLeader(Math.max(1, deadline - Date.now()));
        if (leader === target) return;
        if (Date.now() > deadline)
          throw new Error(`${o.name}: replica ${target} did not take the lead in ${timeoutMs} ms`);
        for (let j = 0; j < n; j++) if (j !== leader) await admin(leader, `block?peer=${j}`);
        try {
          while (Date.now() < deadline && (await status(target))?.role !== 'leader')
            await new Promise((r) => setTimeout(r, 100));
        } finally {
          await admin(leader, 'unblock');
        }
      }
    },
    async waitForLeader(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last: (ReplicaStatus | null)[] = [];
      while (Date.now() < deadline) {
        if (exited !== null) throw new Error(`${exited}; its stderr says why`);
        last = await Promise.all(procs.map((_, i) => status(i)));
        const leaders = new Set(last.map((s) => s?.leader ?? null));
        const [leader] = [...leaders];
        if (leaders.size === 1 && leader !== null && leader !== undefined) return leader;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(
        `${o.name}: the replicas did not agree on a leader within ${timeoutMs} ms: ${JSON.stringify(last.map((s) => s?.leader))}`,
      );
    },
    stop,
  };
  return geo;
}
