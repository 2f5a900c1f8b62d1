/**
 * etcd 3.4 members whose peer traffic crosses Toxiproxy, as Creek's does in creek-replicas.ts.
 *
 * A member advertises one peer URL, and every other member dials that one, so etcd cannot be
 * handed a proxy per pair the way Creek's `--peers` can. Two ways around it:
 *
 * - `per-pair` (root, with `unshare`): the advertised URLs name hosts (`e<j>.creek-geo`), and each
 *   member runs in a mount namespace of its own whose /etc/hosts sends e<j> to 127.0.<i+1>.<j+1>,
 *   where the proxy of the pair (i, j) listens. Every directed link gets the profile's delay, as
 *   Creek's do.
 * - `per-member` (otherwise): one proxy in front of each member's peer listener, delaying what
 *   flows back out (downstream) by c[i]. Raft messages travel on streams the receiver dialed
 *   (rafthttp: member j opens a stream to i's URL, and i writes its messages to j on it), so every
 *   message member i sends is delayed by c[i], and an exchange between i and j (a message and its
 *   answer) costs c[i] + c[j], fitted to the profile's round trip (`memberDelays`). With 3 members
 *   every round trip is exact, one-way delays are not; with 5 the fit leaves large residuals.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxRttMs, type NetworkProfile } from '@creek/server/geo';
import { Etcd3 } from 'etcd3';
import { ports } from '../peer-servers.js';
import { linkDelay, memberDelays } from './links.js';
import type { Toxiproxy } from './toxiproxy.js';

/** How the members' links are proxied (see above). */
export type EtcdLinks = 'per-pair' | 'per-member';

/** Per-pair links need a mount namespace per member: root and util-linux's `unshare`. */
export function perPairPossible(): boolean {
  if (process.getuid?.() !== 0) return false;
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], {
    timeout: 5000,
  });
  return r.status === 0;
}

export interface GeoEtcd {
  /** Member i's client URL (a client in i's region uses it directly). */
  readonly urls: readonly string[];
  readonly links: EtcdLinks;
  /** `per-member`: the delays (ms) its proxies add to what each member sends. */
  readonly delays: readonly number[];
  /** The member that leads now, by index. */
  leader(): Promise<number>;
  /** Hands leadership to member `target` (etcd's move-leader) and waits until it leads. */
  moveLeader(target: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * etcd's tuning guide: a heartbeat of about the largest round trip between members, an election
 * timeout of ten heartbeats (defaults: 100 ms and 1 s, for one data centre).
 */
export function etcdTimers(profile: NetworkProfile, members: number): [number, number] {
  const heartbeat = Math.max(100, Math.ceil(maxRttMs(profile, members)));
  return [heartbeat, heartbeat * 10];
}

export async function startGeoEtcd(
  profile: NetworkProfile,
  members: number,
  toxiproxy: Toxiproxy,
): Promise<GeoEtcd> {
  const dir = mkdtempSync(join(tmpdir(), 'creek-bench-geo-etcd-'));
  const base = await ports(members * 2, 25_000 + Math.floor(Math.random() * 2000));
  const client = base.slice(0, members).map((p) => `http://127.0.0.1:${p}`);
  const listenPeer = base.slice(members);
  const links: EtcdLinks = perPairPossible() ? 'per-pair' : 'per-member';
  const delays = links === 'per-member' ? memberDelays(profile, members) : [];
  const advertised: string[] = [];
  /** Per member, the /etc/hosts its namespace sees (`per-pair`). */
  const hostsFiles: string[] = [];
  if (links === 'per-pair') {
    // One port for every pair's proxy: the pairs differ by address (127.0.<i+1>.<j+1>).
    const port = 30_000 + Math.floor(Math.random() * 2000);
    for (let j = 0; j < members; j++) advertised.push(`http://e${j}.creek-geo:${port}`);
    const system = readFileSync('/etc/hosts', 'utf8');
    for (let i = 0; i < members; i++) {
      const names: string[] = [];
      for (let j = 0; j < members; j++) {
        const address = `127.0.${i + 1}.${j + 1}`;
        names.push(`${address} e${j}.creek-geo`);
        if (i === j) continue;
        const d = linkDelay(profile, i, j);
        await toxiproxy.proxy(
          `etcd-${i}-${j}`,
          `127.0.0.1:${listenPeer[j]}`,
          { up: d, down: d },
          `${address}:${port}`,
        );
      }
      const file = join(dir, `hosts-${i}`);
      writeFileSync(file, `${system.trimEnd()}\n${names.join('\n')}\n`);
      hostsFiles.push(file);
    }
  } else {
    for (let i = 0; i < members; i++) {
      const c = delays[i]!;
      const port = await toxiproxy.proxy(`etcd-${i}`, `127.0.0.1:${listenPeer[i]}`, {
        up: { latencyMs: 0, jitterMs: 0 },
        down: { latencyMs: Math.round(c), jitterMs: Math.round(c * profile.jitter) },
      });
      advertised.push(`http://127.0.0.1:${port}`);
    }
  }
  const initial = advertised.map((u, i) => `e${i}=${u}`).join(',');
  const [heartbeat, election] = etcdTimers(profile, members);
  const procs: ChildProcess[] = advertised.map((url, i) => {
    const args = [
      '--name',
      `e${i}`,
      '--data-dir',
      join(dir, `e${i}`),
      '--listen-client-urls',
      client[i]!,
      '--advertise-client-urls',
      client[i]!,
      '--listen-peer-urls',
      `http://127.0.0.1:${listenPeer[i]}`,
      '--initial-advertise-peer-urls',
      url,
      '--initial-cluster',
      initial,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      'creek-bench-geo',
      '--heartbeat-interval',
      String(heartbeat),
      '--election-timeout',
      String(election),
      '--log-level',
      'error',
      '--logger',
      'zap',
    ];
    const stdio = ['ignore', 'ignore', 'inherit'] as const;
    if (links === 'per-member') return spawn('etcd', args, { stdio: [...stdio] });
    // unshare and sh exec into etcd: the child's pid is etcd's, and SIGTERM reaches it.
    return spawn(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$0" /etc/hosts && exec etcd "$@"',
        hostsFiles[i]!,
        ...args,
      ],
      { stdio: [...stdio] },
    );
  });
  const stop = async (): Promise<void> => {
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
  /** Each member's id and the leader it names ('0': none), by index. */
  const statuses = async (): Promise<{ member: string; leader: string }[]> =>
    Promise.all(
      client.map(async (url) => {
        const c = new Etcd3({ hosts: url });
        try {
          const s = await c.maintenance.status();
          return { member: s.header.member_id, leader: s.leader };
        } finally {
          c.close();
        }
      }),
    );
  const leaderIndex = async (): Promise<number> => {
    const s = await statuses();
    const leaders = new Set(s.map((x) => x.leader));
    const [leader] = [...leaders];
    if (leaders.size !== 1 || leader === undefined || leader === '0') return -1;
    return s.findIndex((x) => x.member === leader);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const at = await leaderIndex().catch(() => -1);
    if (at >= 0) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error('etcd did not elect a leader within 60 s');
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    urls: client,
    links,
    delays,
    async leader() {
      const at = await leaderIndex();
      if (at < 0) throw new Error('the etcd members do not agree on a leader');
      return at;
    },
    async moveLeader(target, timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const at = await leaderIndex().catch(() => -1);
        if (at === target) return;
        if (at >= 0) {
          const s = await statuses();
          const c = new Etcd3({ hosts: client[at]! });
          try {
            await c.maintenance.moveLeader({ targetID: s[target]!.member });
          } catch {
            // A move under way, or an election: look again.
          } finally {
            c.close();
          }
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`etcd's leadership did not move to member ${target} within ${timeoutMs} ms`);
    },
    stop,
  };
}
