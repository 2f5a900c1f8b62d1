import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ReplicaStatus } from '@creek/protocol';
import { performance } from 'node:perf_hooks';
import { pipeline, Readable } from 'node:stream';
import type { BackupSnapshot } from '@creek/replica/host/backup.js';
import { backupChunks } from './backup-file.js';
import { presentsToken } from './bearer.js';
import type { MembershipAdmin } from './membership-admin.js';
import type { ReplicaMetricsExporter } from './metrics.js';
import type { PeerMesh } from './peer-mesh.js';
import { probeAnswer, type ReplicaCondition } from './probes.js';
import { requestUrl } from './request-url.js';

/** Who the replica is to probes, and the tokens its operators present (ReplicaServerConfig). */
export interface HttpConfig {
  readonly id: number;
  readonly clusterId?: string | null;
  /** Reads /status and /metrics; null: only the admin token does. */
  readonly monitorToken?: string | null;
  /** Needed for /admin (and reads /status and /metrics); null disables /admin. */
  readonly adminToken: string | null;
}

/** What the HTTP endpoints read and act on: the replica process (ReplicaServer). */
export interface HttpReplica {
  condition(): ReplicaCondition;
  status(): ReplicaStatus;
  peerIds(): readonly number[];
  readonly membership: MembershipAdmin;
  readonly metrics: ReplicaMetricsExporter;
  /** Fault injection acts on the links (`blocked`, `delays`). */
  readonly mesh: PeerMesh;
  /** Paused by an operator: it ignores its peers and ticks. */
  paused(): boolean;
  /** Its finalized state now, for `POST /admin/backup`; a string says why it cannot give one. */
  backup(): BackupSnapshot | string;
  pause(paused: boolean): void;
}

/**
 * A replica's HTTP endpoints, on the port its WebSockets share: `/health` and `/ready` for probes
 * (no token), `/status`, `/metrics` and `/members` for operators (the monitor or admin token),
 * and `/admin/*` (the admin token): fault injection for tests, benchmarks and the visualizer, and
 * membership changes.
 */
export class ReplicaHttp {
  constructor(
    private readonly config: HttpConfig,
    private readonly replica: HttpReplica,
    private readonly log: Logger,
  ) {}

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = requestUrl(req.url);
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, {
        'content-type': 'application/json',
        // RFC 6750 §3: a 401 names the scheme the client should use.
        ...(code === 401 ? { 'www-authenticate': 'Bearer realm="creek"' } : {}),
      });
      res.end(JSON.stringify(body));
    };
    if (url === null)
      return json(400, { error: 'the request target must be a path, e.g. /health' });
    if (req.method === 'GET' && (url.pathname === '/health' || url.pathname === '/ready')) {
      const { status, body } = probeAnswer(
        url.pathname === '/health' ? 'health' : 'ready',
        this.replica.condition(),
        { replica: this.config.id, cluster: this.config.clusterId ?? null },
      );
      return json(status, body);
    }
    if (url.pathname === '/status' || url.pathname === '/metrics' || url.pathname === '/members') {
      // What the replica holds and does is for its operators: the monitor token (read-only, for a
      // Prometheus scrape config) or the admin token. Probes above need none.
      if (!presentsToken(req, [this.config.monitorToken ?? null, this.config.adminToken]))
        return json(401, {
          error:
            (this.config.monitorToken ?? null) === null && this.config.adminToken === null
              ? `${url.pathname} needs a token, and this replica has none: start it with --monitor-token-file (read-only) or --admin-token-file`
              : `${url.pathname} needs \`authorization: Bearer <monitor or admin token>\``,
        });
      if (req.method !== 'GET') return json(405, { error: `${url.pathname} answers GET only` });
      if (url.pathname === '/status') return json(200, this.replica.status());
      if (url.pathname === '/members') return json(200, this.replica.membership.view());
      void this.replica.metrics.scrape().then(
        (text) => {
          res.writeHead(200, { 'content-type': this.replica.metrics.registry.contentType });
          res.end(text);
        },
        // A replica stopping under a scrape (its storage closed) answers, not an unhandled rejection.
        (err: unknown) => json(503, { error: `metrics unavailable: ${String(err)}` }),
      );
      return;
    }
    if (url.pathname.startsWith('/admin/')) return this.onAdmin(req, res, url, json);
    json(404, { error: 'not found: try /health, /ready, /status, /metrics or /admin/*' });
  }

  /**
   * `creek backup`: the replica's finalized state, taken now in one piece (between two inputs,
   * so one consistent cut) and streamed as a backup file (backup-file.ts). A replica that is
   * learning, rebuilding, paused, halted or diverged does not vouch for its state: 503 and why.
   */
  private onBackup(res: ServerResponse, json: (code: number, body: unknown) => void): void {
    const t0 = performance.now();
    const snapshot = this.replica.backup();
    if (typeof snapshot === 'string') return json(503, { error: snapshot });
    // The cut is taken synchronously (the replica serves nothing meanwhile): say how long it took.
    const cutMs = Math.round(performance.now() - t0);
    const origin = {
      cluster: this.config.clusterId ?? null,
      replica: this.config.id,
      createdAt: new Date(),
    };
    this.log.info(
      { finalized: snapshot.finalized, keys: snapshot.state.length, cutMs },
      'backup: streaming the finalized state',
    );
    res.writeHead(200, {
      'content-type': 'application/x-ndjson',
      'x-creek-finalized': String(snapshot.finalized),
      'x-creek-cut-ms': String(cutMs),
    });
    // pipeline, not pipe: a client that goes away mid-stream ends the generator too, and the
    // snapshot it holds is let go at once. One chunk buffered (not Readable.from's 16): each is
    // some milliseconds of this thread's time, and clients' ops get their turn between two.
    const body = Readable.from(backupChunks(origin, snapshot), { highWaterMark: 1 });
    pipeline(body, res, (err) => {
      if (err !== undefined && err !== null)
        this.log.warn({ err: err.message }, 'backup: the stream ended early');
    });
  }

  /** Fault injection for tests, benchmarks and the visualizer; needs the admin token. */
  private onAdmin(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    json: (code: number, body: unknown) => void,
  ): void {
    if (!presentsToken(req, [this.config.adminToken])) {
      this.log.warn({ path: url.pathname }, 'admin request without a valid admin token');
      return json(401, { error: 'admin actions need `authorization: Bearer <admin token>`' });
    }
    if (req.method !== 'POST') return json(405, { error: 'admin actions are POST requests' });
    if (url.pathname.startsWith('/admin/members/')) {
      const action = url.pathname.slice('/admin/members/'.length);
      this.log.info({ action, query: url.search.slice(0, 200) }, 'membership change asked');
      void this.replica.membership.change(action, url.searchParams).then(
        (a) => json(a.status, a.body),
        (err: unknown) => json(500, { error: String(err) }),
      );
      return;
    }
    if (url.pathname === '/admin/backup') return this.onBackup(res, json);
    const peer = Number(url.searchParams.get('peer'));
    const knownPeer = peer !== this.config.id && this.replica.peerIds().includes(peer);
    switch (url.pathname) {
      case '/admin/block': {
        const direction = url.searchParams.get('direction') ?? 'both';
        if (!knownPeer || !['in', 'out', 'both'].includes(direction))
          return json(400, {
            error: 'block needs ?peer=<id of another replica>[&direction=in|out|both]',
          });
        if (direction !== 'out') this.replica.mesh.blocked.in.add(peer);
        if (direction !== 'in') this.replica.mesh.blocked.out.add(peer);
        break;
      }
      case '/admin/unblock':
        for (const set of [this.replica.mesh.blocked.in, this.replica.mesh.blocked.out]) {
          if (url.searchParams.has('peer')) set.delete(peer);
          else set.clear();
        }
        break;
      case '/admin/delay': {
        const ms = Number(url.searchParams.get('ms'));
        if (!knownPeer || !Number.isFinite(ms) || ms < 0)
          return json(400, { error: 'delay needs ?peer=<id>&ms=<non-negative number>' });
        this.replica.mesh.delays.set(peer, ms);
        break;
      }
      case '/admin/pause':
        this.replica.pause(true);
        break;
      case '/admin/resume':
        this.replica.pause(false);
        break;
      default:
        return json(404, {
          error:
            'admin actions: backup, block, unblock, delay, pause, resume, members/add, members/remove',
        });
    }
    this.log.info({ action: url.pathname, peer: url.searchParams.get('peer') }, 'admin action');
    json(200, {
      ok: true,
      blocked: { in: [...this.replica.mesh.blocked.in], out: [...this.replica.mesh.blocked.out] },
      delays: Object.fromEntries(this.replica.mesh.delays),
      paused: this.replica.paused(),
    });
  }
}
