import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface ServeOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
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
  const css = readFileSync(here('./page/style.css'), 'utf8');
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
<script type="module" src="/app.js"></script>
</body>
</html>
`;
  const headers = {
    'content-security-policy':
      "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:",
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
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
