/**
 * The browser build of @creek/client: one minified ES module with no Node polyfills.
 *
 *   npm run build:browser      # writes packages/client/dist/browser/creek-client.js, prints sizes
 *
 * esbuild bundles src/index.ts for `platform: 'browser'`. Nothing from Node may come in:
 *
 *  - `ws`: the binding uses the global WebSocket wherever there is one and imports `ws` only when
 *    there is none (Node before 22). package.json's `"browser": { "ws": false }` tells esbuild,
 *    webpack, Vite and Rollup that a browser build needs no `ws`, so the import becomes an empty
 *    module here and in any app that bundles the SDK itself. (`external: ['ws']` would instead
 *    leave a bare `import("ws")` in the output, which only this build would know is dead.)
 *  - `@creek/server`: client.ts imports only types from it; they are erased, so no server code
 *    should appear — checked below, with every other input, from esbuild's metafile.
 *
 * One size fix lives here: `import { z } from 'zod'` keeps Zod's whole namespace object, and with
 * it `z.locales`, every one of Zod's ~40 translations of its error messages (about 260 KB
 * minified). The client never reads them, and Zod registers English itself, so the plugin below
 * hands Zod's internal locales index a module with only `en`. (With `import * as z from 'zod'` in
 * packages/protocol esbuild drops them and far more on its own, and the plugin then has nothing
 * left to do.)
 *
 * The build fails when a check fails (see `checkBundle`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile, type Plugin } from 'esbuild';

const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
export const ENTRY = join(PACKAGE, 'src/index.ts');
export const OUTFILE = join(PACKAGE, 'dist/browser/creek-client.js');
const SERVER = join(PACKAGE, '../server/');

export interface BrowserBundle {
  /** The bundle's text. */
  readonly code: string;
  readonly metafile: Metafile;
  readonly minified: boolean;
}

/** Zod's locales index, for the client build: English only (see the header). */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? {
            path: join(dirname(args.importer), dirname(args.path), 'en-only.js'),
            namespace: 'zod-en',
          }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/** Bundles src/index.ts for browsers, in memory. */
export async function bundleForBrowser(minify = true): Promise<BrowserBundle> {
  const result = await build({
    absWorkingDir: PACKAGE, // metafile paths are relative to it, wherever this runs from
    entryPoints: [ENTRY],
    outfile: OUTFILE,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // The packages' sources, as everywhere in this repository (see vitest.config.ts).
    conditions: ['creek-source', 'module'],
    target: 'es2022',
    minify,
    write: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [zodEnglishOnly],
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile, minified: minify };
}

const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
/** Code that must never reach a browser bundle (module specifiers survive minification). */
const SERVER_MARKERS = ['better-sqlite3', 'prom-client', 'pino', '@creek/server'];

/** What is wrong with a bundle: Node modules, `ws`, server code, unbundled imports. Empty if none. */
export function checkBundle(bundle: BrowserBundle): string[] {
  const problems: string[] = [];
  for (const [path, output] of Object.entries(bundle.metafile.outputs)) {
    for (const im of output.imports)
      problems.push(`${path} still imports '${im.path}' (${im.kind}); a browser cannot load it`);
  }
  for (const path of Object.keys(bundle.metafile.inputs)) {
    // Inputs mapped away by a "browser": { x: false } field are listed as "(disabled):…", empty.
    if (path.startsWith('(disabled):')) continue;
    if (/(^|[\\/])node_modules[\\/]ws[\\/]/.test(path)) problems.push(`the ws package: ${path}`);
    const abs = resolve(PACKAGE, path.replace(/^[\w-]+:/, ''));
    if (abs.startsWith(SERVER) || /[\\/]@creek[\\/]server[\\/]/.test(abs))
      problems.push(`server code: ${path}`);
    if (NODE_BUILTINS.has(path)) problems.push(`a Node built-in: ${path}`);
    const locale = /[\\/]zod[\\/]v4[\\/]locales[\\/]([^\\/]+)$/.exec(path)?.[1];
    if (locale !== undefined && locale !== 'en.js' && !path.startsWith('zod-en:'))
      problems.push(`a Zod locale the client never uses: ${path} (did Zod's layout change?)`);
  }
  for (const m of bundle.code.matchAll(/\b(?:require|import)\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g))
    problems.push(`the code loads '${m[1]}' at run time`);
  for (const m of bundle.code.matchAll(/\bfrom\s*["'`]([^"'`]+)["'`]/g))
    problems.push(`the code imports '${m[1]}'`);
  if (/["'`]node:[a-z_/]+["'`]/.test(bundle.code)) problems.push('a "node:" specifier in the code');
  // esbuild's stand-in for a require() it could not bundle (its CommonJS wrapper is fine).
  if (/\btypeof require\b/.test(bundle.code))
    problems.push("esbuild's require() shim is in the code");
  for (const marker of SERVER_MARKERS)
    if (bundle.code.includes(marker)) problems.push(`'${marker}' appears in the code`);
  return problems;
}

export interface BundleSizes {
  /** Bundled, not minified. */
  readonly raw: number;
  readonly minified: number;
  /** The minified bundle, gzip level 9. */
  readonly gzip: number;
}

export function sizesOf(raw: BrowserBundle, minified: BrowserBundle): BundleSizes {
  const bytes = Buffer.from(minified.code, 'utf8');
  return {
    raw: Buffer.byteLength(raw.code, 'utf8'),
    minified: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
  };
}

/** Bytes of the minified output by package (src, protocol, zod, rxjs, …), largest first. */
export function breakdown(bundle: BrowserBundle): [string, number][] {
  const by = new Map<string, number>();
  for (const output of Object.values(bundle.metafile.outputs))
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name =
        /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(path)?.[1] ??
        (/(^|[\\/])protocol[\\/]/.test(path) ? '@creek/protocol' : '@creek/client');
      const pkg = path.startsWith('(disabled):') ? `${name} (disabled, empty)` : name;
      by.set(pkg, (by.get(pkg) ?? 0) + bytesInOutput);
    }
  return [...by].sort((a, b) => b[1] - a[1]);
}

const kb = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

async function main(): Promise<void> {
  const [raw, minified] = await Promise.all([bundleForBrowser(false), bundleForBrowser(true)]);
  const problems = [...checkBundle(raw), ...checkBundle(minified)];
  if (problems.length > 0) {
    process.stderr.write(
      `build:browser: the bundle is not browser-only:\n  ${[...new Set(problems)].join('\n  ')}\n`,
    );
    process.exit(1);
  }
  mkdirSync(dirname(OUTFILE), { recursive: true });
  writeFileSync(OUTFILE, minified.code);
  const s = sizesOf(raw, minified);
  process.stdout.write(
    `wrote ${OUTFILE}\n` +
      `  raw (bundled):  ${s.raw} bytes (${kb(s.raw)})\n` +
      `  minified:       ${s.minified} bytes (${kb(s.minified)})\n` +
      `  minified+gzip:  ${s.gzip} bytes (${kb(s.gzip)})\n` +
      `  minified by package: ${breakdown(minified)
        .map(([p, n]) => `${p} ${kb(n)}`)
        .join(', ')}\n` +
      `  checked: no Node built-ins, no ws, no server code, no imports left\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main();
