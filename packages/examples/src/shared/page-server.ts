import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build, type BuildOptions } from 'esbuild';
import { devSignInHandler, type DevIdentity } from '@creek/server/node';

export interface PageOptions {
  readonly title: string;
  /**
   * The page's script (TypeScript or TSX: a React app), bundled for the browser with esbuild when
   * the server starts.
   */
  readonly entry: string;
  /**
   * Handed to the script as `window.CREEK_PAGE` (cluster URLs, token, settings). The script reads
   * it from there itself: importing this module into a page would pull Node's http into the bundle.
   */
  readonly config: Record<string, unknown>;
  /** Markup inside <body>; the script fills it in. Default: the `#root` a React app renders into. */
  readonly body?: string;
  readonly css?: string;
  readonly port?: number;
  readonly host?: string;
  /** The visualizer watching the page's cluster: the page links to it. */
  readonly visualizer?: string;
  /**
   * The cluster's dev identity provider: the server then answers `GET /dev/users` and
   * `GET /dev/sign-in?user=NAME` (a token for any dev user), same origin as the page, so the page
   * can offer "sign in as". For development only: whoever reaches the page signs in as anyone.
   */
  readonly signIn?: DevIdentity;
  /** The names the picker offers (`GET /dev/users`); default the dev identity's: alice, bob, admin. */
  readonly users?: readonly string[];
  /** The example's own routes: true when it answered the request (ticketing's `/receipt`). */
  readonly routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * How a page's script is bundled for the browser (page-bundles.test.ts bundles each page the same
 * way, and checks that no op's code gets in).
 */
export const PAGE_BUILD = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // The packages' sources, as everywhere in this repository (see vitest.config.ts).
  conditions: ['creek-source', 'module'],
  target: 'es2022',
  // React's automatic runtime: a .tsx page imports nothing to use JSX.
  jsx: 'automatic',
  // React's production build: the development one is 10× larger and warns in the console.
  define: { 'process.env.NODE_ENV': '"production"' },
  write: false,
  logLevel: 'silent',
} as const satisfies BuildOptions;

export interface ServedPage {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves an example's web page: one HTML document and one bundled script, built once at start.
 * The page talks to the cluster itself, over the browser's WebSocket, with the client SDK.
 */
export async function servePage(options: PageOptions): Promise<ServedPage> {
  const bundle = await build({ ...PAGE_BUILD, entryPoints: [options.entry], sourcemap: 'inline' });
  const script = bundle.outputFiles[0]!.text;
  // JSON in a <script> must not close the element early.
  const config = JSON.stringify(options.config).replace(/</g, '\\u003c');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>${BASE_CSS}${options.css ?? ''}</style>
</head>
<body>
${options.body ?? '<div id="root"></div>'}
${options.visualizer === undefined ? '' : `<p class="visualizer">Watch the cluster while you use this page: <a href="${escapeHtml(options.visualizer)}" target="_blank" rel="noopener">the Creek visualizer</a> (each replica's tentative and committed lists, its leader and links; cut a replica off and see what this page does).</p>`}
<script>window.CREEK_PAGE = ${config};</script>
<script type="module" src="/page.js"></script>
</body>
</html>
`;
  const signIn =
    options.signIn === undefined
      ? null
      : devSignInHandler(
          options.signIn,
          options.users === undefined ? {} : { users: options.users },
        );
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // The sign-in answers its own paths (and their wrong methods); everything else falls through.
    if (signIn?.(req, res) === true) return;
    if (options.routes?.(req, res) === true) return;
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    } else if (path === '/favicon.ico') {
      res.writeHead(204).end();
    } else if (path === '/page.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return listenPage(server, options);
}

/**
 * Starts a page's server on `port` (0: a free one) of `host` (default 127.0.0.1). Closing it ends
 * open connections too (a page's WebSockets go to the cluster, not here; a browser's keep-alive
 * would otherwise hold the close).
 */
export async function listenPage(
  server: Server,
  options: { readonly host?: string; readonly port?: number },
): Promise<ServedPage> {
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Shared by the three examples: the connection badge, and one style per phase of an op
 * (shared/ui/phase.ts) — queued (grey, dashed), sending, tentative (amber), stable (green),
 * refused by the app (a stable "no": red text on the stable frame) and error (red).
 */
const BASE_CSS = `
body { font: 15px/1.45 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1d2330; }
h1 { font-size: 1.4rem; } button { font: inherit; padding: .35rem .9rem; cursor: pointer; }
header { display: flex; align-items: baseline; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
.connection { font-size: .85rem; padding: .1rem .6rem; border-radius: 1rem; border: 1px solid; }
.connection-connected { color: #1f7a3a; } .connection-connecting { color: #8a6100; }
.connection-offline { color: #5a6270; border-style: dashed; background: #f1f2f4; }
.phase { border-left: 4px solid transparent; padding-left: .5rem; }
.phase-queued { border-left-color: #8b93a1; border-left-style: dashed; color: #5a6270; background: #f4f5f7; }
.phase-sending { border-left-color: #c6cbd3; color: #5a6270; }
.phase-tentative { border-left-color: #c98a00; color: #7a5600; background: #fff8e6; }
.phase-stable { border-left-color: #1f7a3a; color: #17572b; }
.phase-stable.refused { color: #b3261e; }
.phase-error { border-left-color: #b3261e; color: #b3261e; background: #fdecea; }
.tag { font-size: .75rem; text-transform: uppercase; letter-spacing: .03em; margin-left: .5rem; }
.notice { padding: .5rem .8rem; border-radius: 4px; background: #e9f5ec; color: #17572b; }
.notice.phase-queued { background: #f1f2f4; color: #5a6270; }
.hint, .muted { color: #5a6270; font-size: .9rem; }
.tentative { color: #8a6100; } .stable, .confirmed { color: #1f7a3a; } .revoked, .error { color: #b3261e; }
.visualizer { margin-top: 2rem; color: #5a6270; font-size: .9rem; }
.sign-in select { font: inherit; }
table { border-collapse: collapse; } td, th { padding: .2rem .6rem; text-align: left; border-bottom: 1px solid #ddd; }
`;
