import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenPage, type ServedPage } from '../shared/page-server.js';

/**
 * Serves the todo page as it is written, with no build step for it: index.html, page.js (read
 * from this folder at each request, so an edit shows on reload), the SDK's browser bundle that the
 * page's import map names, and the page's settings. Sign-in is the caller's: a handler that
 * answers `/dev/users` and `/dev/sign-in?user=NAME` (the dev identity's) and returns false for
 * any other path.
 */
export interface TodoPageOptions {
  /** The cluster's client URLs, and its client token (every copy of the app holds it). */
  readonly urls: readonly string[];
  readonly token: string;
  readonly signIn: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** After this long (ms) with no server answering, the page's client is offline and queues writes. */
  readonly offlineAfterMs?: number;
  readonly port?: number;
  readonly host?: string;
}

const FILES = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
} as const;

export async function serveTodoPage(options: TodoPageOptions): Promise<ServedPage> {
  const sdk = await browserBundle();
  const settings = JSON.stringify({
    urls: options.urls,
    token: options.token,
    offlineAfterMs: options.offlineAfterMs ?? 3_000,
  });
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (type: string, body: string): void =>
      void res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (req.method !== 'GET') res.writeHead(405, { allow: 'GET' }).end();
    else if (path === '/' || path === '/page.js') {
      const { file, type } = FILES[path];
      send(type, readFileSync(new URL(file, import.meta.url), 'utf8'));
    } else if (path === '/creek-client.js') send('text/javascript; charset=utf-8', sdk);
    else if (path === '/config.json') send('application/json', settings);
    else if (path === '/favicon.ico') res.writeHead(204).end();
    else if (!options.signIn(req, res))
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  return listenPage(server, options);
}

/**
 * @creek/client's browser build (packages/client/scripts/build-browser.ts, what
 * `npm run build:browser` writes), made in memory at start so it is never stale. The script lies
 * outside this package's tsconfig, so it is loaded at run time, typed here.
 */
async function browserBundle(): Promise<string> {
  const script = (await import(
    new URL('../../../client/scripts/build-browser.ts', import.meta.url).href
  )) as {
    bundleForBrowser(minify?: boolean): Promise<{ code: string }>;
    checkBundle(bundle: unknown): string[];
  };
  const bundle = await script.bundleForBrowser(true);
  const problems = script.checkBundle(bundle);
  if (problems.length > 0) throw new Error(`the SDK's browser bundle: ${problems.join('; ')}`);
  return bundle.code;
}
