import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { LiveProfile } from './page/live-model.js';

export interface ServeOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** A running cluster to show live (otherwise the page runs simulations only). */
  readonly live?: LiveCluster;
}

/** A cluster to watch: its replicas' client URLs (ws://host:port/client) and its tokens. */
export interface LiveCluster {
  readonly urls: readonly string[];
  /** The client token, for the workload panel's clients (null: the cluster takes none). */
  readonly token: string | null;
  /** The admin token: the page watches /events with it, and this server acts on /admin. */
  readonly adminToken: string;
  /**
   * When this process runs the replicas (`--dev`), the page may also kill and restart them: what
   * does it, by replica index.
   */
  readonly supervisor?: Supervisor;
  /**
   * When this process runs the replicas with a dev identity provider (`--dev`): its /dev/users and
   * /dev/sign-in (devSignInHandler), served here so the page's workload signs in as a dev user.
   * Never otherwise: whoever reaches it signs in as anyone.
   */
  readonly signIn?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The network profile whose delays the replicas' links carry (`--dev --profile`). */
  readonly profile?: LiveProfile;
}

/** Kills and restarts the replicas' processes (a LocalCluster does). */
export interface Supervisor {
  kill(replica: number): void;
  restart(replica: number): void;
  running(replica: number): boolean;
}

/** Admin actions the page may ask for, through this server (it holds the admin token). */
const ADMIN_ACTIONS = new Set(['block', 'unblock', 'pause', 'resume', 'delay']);
/** Actions on the replicas' processes, when this server supervises them. */
const PROCESS_ACTIONS = new Set(['kill', 'restart']);

/** A replica's HTTP base and events URL from its client URL. */
function endpoints(client: string): { http: string; events: string } {
  const u = new URL(client);
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new Error(`a replica URL is ws://host:port/client (or wss://), not ${client}`);
  const http = `${u.protocol === 'wss:' ? 'https' : 'http'}://${u.host}`;
  return { http, events: `${u.protocol}//${u.host}/events` };
}

export interface ServedVisualizer {
  /** The page, e.g. http://127.0.0.1:7300/ (append `?seed=42&replicas=5&faults=all` for a run). */
  readonly url: string;
  close(): Promise<void>;
}

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Serves the visualizer: one HTML document and one script, bundled for the browser with esbuild
 * when the server starts (the simulator included: it runs in the page). Nothing is fetched from
 * anywhere else, at build or at run time; the page's Content-Security-Policy says so.
 */
export async function serveVisualizer(options: ServeOptions = {}): Promise<ServedVisualizer> {
  const bundle = await build({
    entryPoints: [here('./page/main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // The packages' sources, as everywhere in this repository (see vitest.config.ts).
    conditions: ['creek-source', 'module'],
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  // The chart library's own stylesheet (its legends and cursor), then the page's.
  const chartsCss = readFileSync(
    createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'),
    'utf8',
  );
  const css = chartsCss + readFileSync(here('./page/style.css'), 'utf8');
  const live = options.live;
  const replicas = (live?.urls ?? []).map((client, id) => ({ id, client, ...endpoints(client) }));
  // JSON in a <script> must not close the element early; a JSON block is data, not code, so the
  // CSP's script-src 'self' does not stop it (and the token stays out of the URL bar).
  const liveJson =
    live === undefined
      ? ''
      : `<script type="application/json" id="live-config">${JSON.stringify({
          replicas: replicas.map(({ id, client, events }) => ({ id, client, events })),
          token: live.token,
          adminToken: live.adminToken,
          supervised: live.supervisor !== undefined,
          signIn: live.signIn !== undefined,
          ...(live.profile === undefined ? {} : { profile: live.profile }),
        }).replace(/</g, '\\u003c')}</script>`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Creek visualizer</title>
<style>${css}</style>
</head>
<body data-state="loading">
<div id="app"></div>
${liveJson}
<script type="module" src="/app.js"></script>
</body>
</html>
`;
  // Live mode talks to the replicas' WebSockets (ws: and wss:) and to this server's /api/admin.
  const connect = live === undefined ? '' : ` connect-src 'self' ws: wss:;`;
  const headers = {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:;${connect}`,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/api/admin') return void proxyAdmin(req.url ?? '', req.method ?? '', res);
    if (live?.signIn?.(req, res) === true) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...headers, allow: 'GET, HEAD', 'content-type': 'text/plain' });
      return res.end('the visualizer serves GET requests only\n');
    }
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' });
      return res.end(req.method === 'HEAD' ? undefined : html);
    }
    if (path === '/app.js') {
      res.writeHead(200, { ...headers, 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(req.method === 'HEAD' ? undefined : script);
    }
    res.writeHead(404, { ...headers, 'content-type': 'text/plain' });
    res.end('not found: the visualizer is at /\n');
  });
  /**
   * POST /api/admin?replica=i&action=block&peer=j: the action on replica i's /admin, with the
   * admin token this server holds. Only the actions the page offers, only its replicas.
   */
  async function proxyAdmin(url: string, method: string, res: ServerResponse): Promise<void> {
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, { ...headers, 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (live === undefined) return json(404, { error: 'this visualizer watches no cluster' });
    if (method !== 'POST') return json(405, { error: 'admin actions are POST requests' });
    const q = new URL(url, 'http://visualizer').searchParams;
    const replica = replicas[Number(q.get('replica'))];
    const action = q.get('action') ?? '';
    if (replica === undefined || !/^\d+$/.test(q.get('replica') ?? ''))
      return json(400, { error: `replica must be 0 to ${replicas.length - 1}` });
    if (PROCESS_ACTIONS.has(action)) {
      const supervisor = live.supervisor;
      if (supervisor === undefined)
        return json(400, {
          error: `${action}: this visualizer does not run the replicas (start it with --dev to kill and restart them)`,
        });
      if (action === 'kill') {
        if (!supervisor.running(replica.id))
          return json(409, { error: `replica ${replica.id} is not running` });
        supervisor.kill(replica.id);
      } else {
        if (supervisor.running(replica.id))
          return json(409, { error: `replica ${replica.id} is already running` });
        supervisor.restart(replica.id);
      }
      return json(200, { ok: true, replica: replica.id, action });
    }
    if (!ADMIN_ACTIONS.has(action))
      return json(400, {
        error: `action must be one of ${[...ADMIN_ACTIONS, ...PROCESS_ACTIONS].join(', ')}`,
      });
    const forward = new URLSearchParams();
    for (const k of ['peer', 'ms', 'direction']) {
      const v = q.get(k);
      if (v !== null) forward.set(k, v);
    }
    try {
      const r = await fetch(
        `${replica.http}/admin/${action}${forward.size === 0 ? '' : `?${forward.toString()}`}`,
        { method: 'POST', headers: { authorization: `Bearer ${live.adminToken}` } },
      );
      json(r.status, await r.json().catch(() => ({ error: `replica answered ${r.status}` })));
    } catch (err) {
      json(502, { error: `replica ${replica.id} did not answer: ${(err as Error).message}` });
    }
  }

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
