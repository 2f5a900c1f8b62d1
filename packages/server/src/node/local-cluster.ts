import type { NetworkKind } from '../geo/index.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';
import { START_OPTIONS } from './config.js';
import { envName } from './settings.js';
import { EDGE_LIMITS_ENV, type EdgeLimits } from './edge-limits.js';
import { DevIdentity } from './dev-identity.js';
import type { NetworkProfile } from '../geo/index.js';
import { ProfileLinks } from './profile-delays.js';

const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));

export interface LocalClusterOptions {
  /** Number of replica processes; default 3. */
  readonly replicas?: number;
  /**
   * The `creek` command the replicas run (its bin/creek.js); default this build's. A test of
   * upgrades starts them on an earlier release's and restarts them on this one (`startReplica`).
   */
  readonly bin?: string;
  /** Module whose default export is the app (see `defineApp`); default: the built-ins only. */
  readonly app?: string;
  /**
   * Where the replicas keep their data and the cluster's secrets. Default: a fresh temporary
   * directory, removed by `stop()`. A given directory is kept, and so are its secrets, so a
   * cluster restarted on it comes back with its state.
   */
  readonly dataDir?: string;
  /** Replica i listens on basePort + i; default: ports free at start. */
  readonly basePort?: number;
  readonly host?: string;
  readonly fsync?: boolean;
  /** `creek start --check-invariants`: replicas check the app's invariants on committed state. */
  readonly checkInvariants?: boolean;
  /** Finalized ops between two checkpoints of each replica (`creek start --checkpoint-every`). */
  readonly checkpointEvery?: number;
  /** Execution worker threads per replica (`creek start --workers`, a count or `auto`); default 0. */
  readonly workers?: number | 'auto';
  /** False: `creek start --speculation off`, ops execute only once committed (SMR). */
  readonly speculative?: boolean;
  /** `creek start --reads`: strong reads by the leader's read index (default) or by quorum. */
  readonly reads?: 'leader' | 'quorum';
  /**
   * The Paxos timers' defaults (`creek start --network`): 'wan' for replicas behind links with
   * round trips up to 300 ms (a bench's latency-injecting proxies); default 'lan'.
   */
  readonly network?: NetworkKind;
  /** `creek start --election-timeout-ms`: overrides the network's (at least 4 heartbeats). */
  readonly electionTimeoutMs?: number;
  /** `creek start --heartbeat-ms`: overrides the network's. */
  readonly heartbeatMs?: number;
  /** Every replica's `creek start --preferred-leader`: the replica that should lead. */
  readonly preferredLeader?: number;
  /** pino level of the replicas' logs; default `warn`. */
  readonly logLevel?: string;
  /** Where the replicas' stdout and stderr go; default: stderr is inherited, stdout dropped. */
  readonly stdio?: 'inherit' | 'ignore';
  /** Each line a replica logs (its stdout: pino's JSON lines), in place of `stdio`'s stdout. */
  readonly onLog?: (replica: number, line: string) => void;
  /**
   * PEM files: every replica serves https:// and wss:// with this certificate (it must name the
   * host), and peers and this class's own requests trust `ca`.
   */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
  /**
   * Overrides of the replicas' limits before authentication (passed as CREEK_EDGE_LIMITS), e.g. a
   * short hello deadline for tests.
   */
  readonly edgeLimits?: Partial<EdgeLimits>;
  /**
   * The cluster's name, passed to every replica (`creek start --cluster-id`); default: a new random
   * one. Readiness waits until every replica's /health reports it, so another cluster already on
   * the ports is never taken for this one.
   */
  readonly clusterId?: string;
  /**
   * Every replica verifies users' tokens (`creek start --auth-*`): with the key set at `jwks` (a
   * file or URL) or the HS256 secret in `secretFile`, requiring `issuer` and `audience` if given.
   */
  readonly auth?: {
    readonly jwks?: string;
    readonly secretFile?: string;
    readonly issuer?: string;
    readonly audience?: string;
    readonly clockSkewS?: number;
  };
  /**
   * The cluster runs its own dev identity provider (DevIdentity): a key kept in the data
   * directory, whose JWKS, issuer and audience every replica verifies users' tokens with;
   * `identity` mints them. Not with `auth`: one source of users' tokens.
   */
  readonly devIdentity?: boolean;
  /**
   * Wide-area links on one machine: once the cluster is ready, and whenever a replica (re)starts,
   * each replica delays its messages to each other one by the profile's one-way delay between
   * their regions (`profileDelays`: replica i in region i mod regions; no jitter).
   */
  readonly profile?: NetworkProfile;
  /** Called when a replica exits after the cluster started, while it is not stopping. */
  readonly onExit?: (replica: number, code: number | null, signal: NodeJS.Signals | null) => void;
}

/** What `/status` of a replica says (packages/protocol's ReplicaStatus). */
export type { ReplicaStatus };

/**
 * A cluster of real `creek start` processes on one machine: what `creek dev`, the examples, the
 * benchmarks and the end-to-end tests run. Replicas are separate processes, so a test can kill one
 * with SIGKILL, and faults go through each replica's authenticated admin API.
 */
export class LocalCluster {
  readonly size: number;
  readonly host: string;
  readonly dir: string;
  readonly token: string;
  readonly adminToken: string;
  readonly clusterId: string;
  private readonly procs: (ChildProcess | null)[];
  private readonly peers: string;
  /**
   * The replicas this object runs as the cluster's members, ascending: 0..size-1 at the start,
   * then as `addReplica` and `removeReplica` change them. `urls`, `statuses`, `converged` and
   * `waitForLeader` look at these.
   */
  readonly members: number[];
  /** Ports of replicas added after the start (the genesis ones use basePort + id). */
  private readonly extraPorts = new Map<number, number>();
  /** Replicas started with --join (added after the start). */
  private readonly joined = new Set<number>();
  private readonly ownsDir: boolean;
  private stopping = false;
  /** While `start()` waits for readiness: a replica that exits then fails the start at once. */
  private onEarlyExit: ((message: string) => void) | null = null;
  private devIdentity: DevIdentity | null = null;
  /** The profile's delays, once `start()` set them: a replica (re)started later gets them too. */
  private profileLinks: ProfileLinks | null = null;

  private constructor(
    private readonly options: LocalClusterOptions,
    readonly basePort: number,
  ) {
    if (options.devIdentity === true && options.auth !== undefined)
      throw new Error(
        'devIdentity and auth both given: the replicas verify tokens of one source, the dev identity or auth',
      );
    this.size = options.replicas ?? 3;
    if (!Number.isInteger(this.size) || this.size < 1 || this.size > 15)
      throw new Error(`replicas must be an integer from 1 to 15, not ${this.size}`);
    this.host = options.host ?? '127.0.0.1';
    this.clusterId = options.clusterId ?? `local-${randomBytes(6).toString('hex')}`;
    this.ownsDir = options.dataDir === undefined;
    this.dir =
      options.dataDir === undefined
        ? mkdtempSync(join(tmpdir(), 'creek-cluster-'))
        : resolve(options.dataDir);
    mkdirSync(this.dir, { recursive: true });
    this.secretFile('cluster.secret');
    this.token = readFileSync(this.secretFile('client.token'), 'utf8').trim();
    this.adminToken = readFileSync(this.secretFile('admin.token'), 'utf8').trim();
    this.peers = Array.from({ length: this.size }, (_, i) => `${i}=${this.peerUrl(i)}`).join(',');
    this.procs = Array.from({ length: this.size }, () => null);
    this.members = Array.from({ length: this.size }, (_, i) => i);
  }

  /** The dev identity provider the replicas verify users' tokens with (`devIdentity`), or null. */
  get identity(): DevIdentity | null {
    return this.devIdentity;
  }

  /** The port replica i listens on. */
  port(i: number): number {
    return this.extraPorts.get(i) ?? this.basePort + i;
  }

  /** Starts every replica and resolves once all of them answer and agree on a leader. */
  static async start(options: LocalClusterOptions = {}, timeoutMs = 30_000): Promise<LocalCluster> {
    const size = options.replicas ?? 3;
    const basePort = options.basePort ?? (await freeRun(size, options.host ?? '127.0.0.1'));
    const cluster = new LocalCluster(options, basePort);
    if (options.devIdentity === true) {
      try {
        cluster.devIdentity = await DevIdentity.open(cluster.dir);
      } catch (err) {
        await cluster.stop();
        throw err;
      }
    }
    const exited = new Promise<never>((_, reject) => {
      cluster.onEarlyExit = (message) => reject(new Error(message));
    });
    for (let i = 0; i < cluster.size; i++) cluster.startReplica(i);
    try {
      await Promise.race([cluster.waitForLeader(timeoutMs), exited]);
      if (options.profile !== undefined) {
        const links = new ProfileLinks(options.profile, cluster);
        await links.apply();
        cluster.profileLinks = links;
      }
    } catch (err) {
      await cluster.stop();
      throw err;
    } finally {
      cluster.onEarlyExit = null;
    }
    return cluster;
  }

  /** The client URL of replica i. */
  url(i: number): string {
    return `${this.options.tls === undefined ? 'ws' : 'wss'}://${this.host}:${this.port(i)}/client`;
  }

  /** Every member's client URL, for `connect({ urls })`. */
  get urls(): string[] {
    return this.members.map((i) => this.url(i));
  }

  httpUrl(i: number): string {
    return `${this.options.tls === undefined ? 'http' : 'https'}://${this.host}:${this.port(i)}`;
  }

  isRunning(i: number): boolean {
    return (this.procs[i] ?? null) !== null;
  }

  /**
   * Adds a replica to the running cluster as an operator does: `POST /admin/members/add` at a
   * member (decided through the log), then starts it with --join on an empty data directory, on a
   * free port. It takes a peer's checkpoint before it serves. Resolves with its id once the change
   * is in force at the member asked (not once the new replica serves: `waitForLeader` tells).
   */
  async addReplica(ask = this.members.find((i) => this.isRunning(i))): Promise<number> {
    if (ask === undefined) throw new Error('addReplica: no member is running to ask');
    const id = Math.max(this.size - 1, ...this.members, ...this.joined) + 1;
    this.extraPorts.set(id, await freeRun(1, this.host));
    await this.admin(ask, 'members/add', { id, url: this.peerUrl(id) });
    this.joined.add(id);
    this.members.push(id);
    this.members.sort((a, b) => a - b);
    this.startReplica(id);
    return id;
  }

  /**
   * Removes replica i from the cluster (`POST /admin/members/remove` at another running member);
   * a removed replica that runs exits by itself. Resolves once the change is in force there.
   */
  async removeReplica(
    i: number,
    ask = this.members.find((m) => m !== i && this.isRunning(m)),
  ): Promise<void> {
    if (ask === undefined) throw new Error('removeReplica: no other member is running to ask');
    await this.admin(ask, 'members/remove', { id: i });
    const k = this.members.indexOf(i);
    if (k >= 0) this.members.splice(k, 1);
  }

  /**
   * (Re)starts replica i on its data directory; `env` adds to its environment (a test of upgrades
   * sets CREEK_TEST_PEER_PROTOCOL there), and `bin` is the `creek` command it runs (default: the
   * cluster's, `LocalClusterOptions.bin`).
   */
  startReplica(
    i: number,
    env: Readonly<Record<string, string>> = {},
    bin = this.options.bin ?? BIN,
  ): void {
    if ((this.procs[i] ?? null) !== null) throw new Error(`replica ${i} is already running`);
    const joining = this.joined.has(i);
    const args = [
      bin,
      'start',
      '--id',
      String(i),
      '--listen',
      `${this.host}:${this.port(i)}`,
      '--peers',
      // A replica added later asks the members it knows of (the cluster's configuration wins).
      joining ? this.members.map((m) => `${m}=${this.peerUrl(m)}`).join(',') : this.peers,
      ...(joining ? ['--join'] : []),
      '--data',
      join(this.dir, `replica-${i}`),
      '--secret-file',
      join(this.dir, 'cluster.secret'),
      '--token-file',
      join(this.dir, 'client.token'),
      '--admin-token-file',
      join(this.dir, 'admin.token'),
      '--cluster-id',
      this.clusterId,
    ];
    if (this.options.app !== undefined) args.push('--app', resolve(this.options.app));
    const tls = this.options.tls;
    if (tls !== undefined)
      args.push('--tls-cert', tls.cert, '--tls-key', tls.key, '--tls-ca', tls.ca);
    if (this.options.fsync === true) args.push('--fsync');
    if (this.options.checkInvariants === true) args.push('--check-invariants');
    if (this.options.checkpointEvery !== undefined)
      args.push('--checkpoint-every', String(this.options.checkpointEvery));
    if (this.options.workers !== undefined) args.push('--workers', String(this.options.workers));
    if (this.options.speculative === false) args.push('--speculation', 'off');
    if (this.options.reads !== undefined) args.push('--reads', this.options.reads);
    if (this.options.network !== undefined) args.push('--network', this.options.network);
    if (this.options.electionTimeoutMs !== undefined)
      args.push('--election-timeout-ms', String(this.options.electionTimeoutMs));
    if (this.options.heartbeatMs !== undefined)
      args.push('--heartbeat-ms', String(this.options.heartbeatMs));
    if (this.options.preferredLeader !== undefined)
      args.push('--preferred-leader', String(this.options.preferredLeader));
    const id = this.devIdentity;
    const auth: LocalClusterOptions['auth'] =
      id === null
        ? this.options.auth
        : { jwks: id.jwksFile, issuer: id.issuer, audience: id.audience };
    if (auth?.jwks !== undefined) args.push('--auth-jwks', auth.jwks);
    if (auth?.secretFile !== undefined) args.push('--auth-secret-file', auth.secretFile);
    if (auth?.issuer !== undefined) args.push('--auth-issuer', auth.issuer);
    if (auth?.audience !== undefined) args.push('--auth-audience', auth.audience);
    if (auth?.clockSkewS !== undefined) args.push('--auth-clock-skew', String(auth.clockSkewS));
    const onLog = this.options.onLog;
    const out = onLog !== undefined ? 'pipe' : (this.options.stdio ?? 'ignore');
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', out, 'inherit'],
      // The flags above say all: a CREEK_* setting in the caller's environment must not add to
      // them, e.g. CREEK_TLS_CERT given to `creek dev`. CREEK_LOG_LEVEL is set here, and so are
      // the edge limits a test asks for.
      env: {
        ...withoutCreekSettings(process.env),
        CREEK_LOG_LEVEL: this.options.logLevel ?? 'warn',
        ...(this.options.edgeLimits === undefined
          ? {}
          : { [EDGE_LIMITS_ENV]: JSON.stringify(this.options.edgeLimits) }),
        ...env,
      },
    });
    if (onLog !== undefined && child.stdout !== null)
      createInterface({ input: child.stdout }).on('line', (line) => onLog(i, line));
    child.on('exit', (code, signal) => {
      if (this.procs[i] === child) this.procs[i] = null;
      if (this.stopping) return;
      if (this.onEarlyExit !== null)
        this.onEarlyExit(
          `replica ${i} exited (${signal ?? `status ${code}`}) before the cluster was ready; its stderr says why`,
        );
      else this.options.onExit?.(i, code, signal);
    });
    this.procs[i] = child;
    this.profileLinks?.reapply(i, () => this.procs[i] === child && !this.stopping);
  }

  /**
   * Sends `signal` to replica i's process: SIGSTOP freezes it (its sockets stay open, nothing it
   * does moves), SIGCONT resumes it. False if it is not running.
   */
  signal(i: number, signal: NodeJS.Signals): boolean {
    const child = this.procs[i];
    return child !== null && child !== undefined && child.kill(signal);
  }

  /** The process id of replica i, or null while it is not running (for tools that read /proc). */
  pid(i: number): number | null {
    return this.procs[i]?.pid ?? null;
  }

  /** SIGKILL: the replica dies at once, with whatever it had not yet written. */
  kill(i: number): void {
    this.procs[i]?.kill('SIGKILL');
    this.procs[i] = null;
  }

  /**
   * SIGKILL, resolving once the process has exited: its data directory may then be wiped or
   * opened again by a new process (a test waits for this, not for a fixed time).
   */
  async killed(i: number): Promise<void> {
    const child = this.procs[i];
    if (child === null || child === undefined) return;
    const gone =
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((r) => child.once('exit', () => r()));
    this.kill(i);
    await gone;
  }

  /**
   * SIGTERM: the replica drains the ops in flight, then exits; resolves with its exit code (null if
   * it was not running or died of a signal).
   */
  async terminate(i: number): Promise<number | null> {
    const child = this.procs[i];
    if (child === null || child === undefined) return null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const code = await exited;
    this.procs[i] = null;
    return code;
  }

  /** GET /status of replica i (with the admin token, which reads it); null if it does not answer. */
  async status(i: number): Promise<ReplicaStatus | null> {
    let body: unknown;
    try {
      const r = await this.monitor(i, '/status');
      if (!r.ok) return null;
      body = await r.json();
    } catch {
      return null;
    }
    // Checked outside the catch: a replica that says something else is a bug, not one that is down.
    return ReplicaStatusSchema.parse(body);
  }

  /** GET /metrics of replica i: the Prometheus text. */
  async metrics(i: number): Promise<string> {
    const r = await this.monitor(i, '/metrics');
    if (!r.ok) throw new Error(`/metrics of replica ${i}: HTTP ${r.status}`);
    return r.text();
  }

  /** A GET of an operators' endpoint (/status, /metrics) of replica i. */
  monitor(i: number, path: string): Promise<globalThis.Response> {
    return this.request(i, path, { headers: { authorization: `Bearer ${this.adminToken}` } });
  }

  /** An HTTP request to replica i, over https trusting the cluster CA when it serves TLS. */
  request(
    i: number,
    path: string,
    init: { readonly method?: string; readonly headers?: Record<string, string> } = {},
  ): Promise<globalThis.Response> {
    const tls = this.options.tls;
    if (tls === undefined) {
      const url = `${this.httpUrl(i)}${path}`;
      // A pooled keep-alive connection that the replica closed as idle (Node's 5 s keep-alive
      // timeout) just as a request went out on it fails with "other side closed" — a caller
      // whose event loop was blocked (spawnSync) meets this race. The replica closes only idle
      // connections, so the request never reached it: it goes again, once, on a new connection.
      return fetch(url, init).catch((err: unknown) => {
        if (!closedIdleConnection(err)) throw err;
        return fetch(url, init);
      });
    }
    // fetch() takes no CA of its own; https.request does.
    return new Promise((resolvePromise, reject) => {
      const req = httpsRequest(
        `${this.httpUrl(i)}${path}`,
        { ...init, ca: readFileSync(tls.ca, 'utf8'), timeout: 5_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolvePromise(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500 })),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${path} of replica ${i} timed out`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** The members' statuses, in the order of `members`. */
  async statuses(): Promise<(ReplicaStatus | null)[]> {
    return Promise.all(this.members.map((i) => this.status(i)));
  }

  /** POSTs an admin action (block, unblock, delay, pause, resume) to replica i. */
  async admin(
    i: number,
    action: string,
    params: Record<string, string | number> = {},
  ): Promise<unknown> {
    const query = new URLSearchParams(
      Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    const r = await this.request(i, `/admin/${action}${query === '' ? '' : `?${query}`}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.adminToken}` },
    });
    const body: unknown = await r.json();
    if (!r.ok)
      throw new Error(`admin ${action} on replica ${i}: ${r.status} ${JSON.stringify(body)}`);
    return body;
  }

  /**
   * Adds `ms` of one-way delay to every message between every two replicas: wide-area latency on
   * one machine. 0 removes it.
   */
  async delayBetweenReplicas(ms: number): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (const i of this.members)
      for (const j of this.members)
        if (i !== j && this.isRunning(i)) calls.push(this.admin(i, 'delay', { peer: j, ms }));
    await Promise.all(calls);
  }

  /**
   * Resolves once every replica (re)started since `start()` has the profile's delays (at once
   * without a profile); rejects if they could not be set on one.
   */
  async profileInForce(): Promise<void> {
    await this.profileLinks?.inForce();
  }

  /**
   * Until every replica of this cluster answers, knows a leader and takes client ops: a new
   * cluster's replicas first learn from one another, and answer `unavailable` meanwhile
   * (ReplicaHost.learningFromPeers), which may outlast the first election. "Of this cluster": its
   * /health reports `clusterId`, so a process of another cluster on a port does not count.
   */
  async waitForLeader(timeoutMs = 30_000): Promise<void> {
    await this.until(
      async () =>
        (await this.ours()) &&
        (await this.statuses()).every((s) => s !== null && s.leader !== null && !s.learning),
      timeoutMs,
      'every replica to answer, know a leader and take ops',
    );
  }

  /** Whether every replica's /health answers with this cluster's id. */
  private async ours(): Promise<boolean> {
    const health = async (i: number): Promise<unknown> => {
      try {
        return ((await (await this.request(i, '/health')).json()) as { cluster?: unknown }).cluster;
      } catch {
        return null;
      }
    };
    const ids = await Promise.all(this.members.map((i) => health(i)));
    return ids.every((id) => id === this.clusterId);
  }

  /** Resolves once every replica is up, settled, with the same committed count and state digest. */
  async converged(timeoutMs = 30_000): Promise<ReplicaStatus[]> {
    let last: (ReplicaStatus | null)[] = [];
    await this.until(
      async () => {
        last = await this.statuses();
        const s = last as ReplicaStatus[];
        return (
          s.every((x) => x !== null && x.settled) &&
          s.every((x) => x.committed === s[0]!.committed && x.digest === s[0]!.digest)
        );
      },
      timeoutMs,
      'convergence',
    );
    return last as ReplicaStatus[];
  }

  async until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await this.statuses())}`);
  }

  /** SIGTERMs every replica, waits for them (SIGKILL after `graceMs`), removes a temporary dir. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    const running = this.procs.filter((p): p is ChildProcess => p !== null);
    await Promise.all(
      running.map(
        (child) =>
          new Promise<void>((r) => {
            if (child.exitCode !== null || child.signalCode !== null) return r();
            const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
            child.once('exit', () => {
              clearTimeout(timer);
              r();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
    this.procs.fill(null);
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Stops at once with SIGKILL (for exit handlers, which cannot wait). */
  killAll(): void {
    this.stopping = true;
    for (let i = 0; i < this.procs.length; i++) this.kill(i);
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }

  private peerUrl(i: number): string {
    return `${this.options.tls === undefined ? 'ws' : 'wss'}://${this.host}:${this.port(i)}`;
  }

  /** A secret file in the data dir, made once with 24 random bytes; returns its path. */
  private secretFile(name: string): string {
    const file = join(this.dir, name);
    if (!existsSync(file))
      writeFileSync(file, randomBytes(24).toString('hex') + '\n', { mode: 0o600 });
    return file;
  }
}

/**
 * Below Linux's default ephemeral range (32768–60999): a port found free there can be taken by an
 * outgoing connection's local port before the replica binds it, which made a replica of a busy
 * test run fail to start now and then.
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

/** A first port p such that p .. p+n-1 are free right now on `host`. */
export async function freeRun(n: number, host: string): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM - n));
    const ok = await Promise.all(Array.from({ length: n }, (_, i) => isFree(base + i, host)));
    if (ok.every(Boolean)) return base;
  }
  throw new Error(`found no ${n} consecutive free ports on ${host}`);
}

/** `env` without the variables `creek start` reads as settings (and its --config). */
function withoutCreekSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const settings = new Set([...Object.keys(START_OPTIONS), 'config'].map(envName));
  return Object.fromEntries(Object.entries(env).filter(([k]) => !settings.has(k)));
}

/** Whether nothing listens on `port` of `host` right now. */
export function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** fetch()'s error for a connection closed under a request before any answer came (undici). */
function closedIdleConnection(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return err instanceof TypeError && cause?.code === 'UND_ERR_SOCKET';
}
