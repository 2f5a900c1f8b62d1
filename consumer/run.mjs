#!/usr/bin/env node
// The consumer test: Creek installed as a user installs it, outside this repository.
//
//   npm run test:consumer            # node consumer/run.mjs [--keep]
//
// 1. Packs @creek/app, @creek/protocol, @creek/client, @creek/server and @creek/react (npm pack) into a fresh
//    temporary folder and prints each tarball's size and files.
// 2. (a) A Node project there installs the tarballs (their third-party dependencies from the
//    registry), starts a 3-replica cluster with its installed `creek` binary and its own app.js,
//    and runs a plain-JavaScript ESM script with plain `node` that invokes weak, strong and
//    two-view ops on it. `creek --version` works, `--app app.ts` without tsx says to install it,
//    and the server's declarations type-check in it under strict options (server-side.ts).
//    (b) A client-only TypeScript project (no @creek/server) type-checks `connect<typeof app>()`
//    with tsc --noEmit under strict + exactOptionalPropertyTypes + skipLibCheck: false, where
//    @ts-expect-error lines must fire for an unknown op name and wrong argument types; the same
//    for @creek/react's hooks (`createCreekHooks<typeof app>()`, hooks.ts).
//    (c) The same project bundles a page with Vite; Chromium loads it and it talks to the cluster.
// Exits 0 only when every part passed; the last line says which did.
//
// Plain JavaScript on purpose: it runs before anything of the repository is trusted, with node.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const PACKAGES = [
  '@creek/app',
  '@creek/protocol',
  '@creek/client',
  '@creek/replica',
  '@creek/server',
  '@creek/react',
];
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const KEEP = process.argv.includes('--keep');
const unknown = process.argv.slice(2).filter((a) => a !== '--keep');
if (unknown.length > 0) {
  console.error(`consumer: unknown argument ${unknown[0]}; usage: node consumer/run.mjs [--keep]`);
  process.exit(2);
}

const started = Date.now();
const log = (line) => console.log(`consumer: ${line}`);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Runs a command to its end; throws with its output when it fails (or `expect` says so). */
function run(command, args, options = {}) {
  const t = Date.now();
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  const ok =
    options.expectStatus === undefined ? r.status === 0 : r.status === options.expectStatus;
  if (!ok)
    throw new Error(
      `${command} ${args.join(' ')} exited ${r.status ?? r.signal} in ${options.cwd ?? ROOT}\n${r.stdout}\n${r.stderr}`,
    );
  return { stdout: r.stdout, stderr: r.stderr, took: seconds(t) };
}

const work = mkdtempSync(join(tmpdir(), 'creek-consumer-'));
if (work.startsWith(ROOT)) throw new Error(`the consumer folder ${work} is inside the repository`);
const cleanups = [];
const results = {};

try {
  // ---- 1. pack ---------------------------------------------------------------------------------
  log(`building and packing into ${work}`);
  run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  const packed = JSON.parse(
    run(
      'npm',
      ['pack', '--json', '--pack-destination', tarballs, ...PACKAGES.flatMap((p) => ['-w', p])],
      { cwd: ROOT },
    ).stdout,
  );
  const tgz = {};
  for (const p of packed) {
    tgz[p.name] = join(tarballs, p.filename);
    log(
      `${p.filename}: ${kb(p.size)} packed, ${kb(p.unpackedSize)} unpacked, ${p.entryCount} files`,
    );
    for (const line of fileTree(p.files.map((f) => f.path))) console.log(`    ${line}`);
    const stray = p.files.filter((f) =>
      /(^|\/)(test|scripts)\/|tsconfig|\.tsbuildinfo$/.test(f.path),
    );
    if (stray.length > 0) throw new Error(`${p.name} ships ${stray.map((f) => f.path).join(', ')}`);
  }
  /**
   * A consumer project: the template folder copied into `work`, with a package.json that installs
   * the app, protocol and client tarballs, `extra` tarballs, Zod, and `dev` from the registry.
   */
  const project = (name, extra, dev) => {
    const dir = join(work, name);
    cpSync(join(HERE, name), dir, { recursive: true });
    const creek = ['@creek/app', '@creek/protocol', '@creek/client', ...extra];
    writeJson(join(dir, 'package.json'), {
      name: `creek-consumer-${name}`,
      private: true,
      type: 'module',
      dependencies: {
        ...Object.fromEntries(creek.map((p) => [p, `file:${tgz[p]}`])),
        zod: '^4.0.0',
      },
      devDependencies: dev,
    });
    return dir;
  };

  // ---- 2a. a Node project: the creek binary, its own app.js, a plain ESM script ----------------
  const nodeProject = project('node-project', ['@creek/replica', '@creek/server'], {
    typescript: '~5.9.3',
    '@types/node': '^20.19.0',
  });
  log('(a) npm install in the Node project (better-sqlite3 may compile here)');
  log(`(a) installed in ${npmInstall(nodeProject)}`);
  if (existsSync(join(nodeProject, 'node_modules', 'tsx')))
    throw new Error('tsx was installed with @creek/server; it must stay an optional peer');

  const version = run('npx', ['--no', '--', 'creek', '--version'], {
    cwd: nodeProject,
  }).stdout.trim();
  const expected = JSON.parse(readFileSync(join(ROOT, 'packages/server/package.json'))).version;
  if (version !== expected) throw new Error(`creek --version printed ${version}, not ${expected}`);
  const noTsx = run('npx', ['--no', '--', 'creek', 'dev', '--app', 'app.ts'], {
    cwd: nodeProject,
    expectStatus: 1,
  });
  if (!noTsx.stderr.includes('needs tsx'))
    throw new Error(`--app app.ts without tsx said: ${noTsx.stderr}`);
  log(
    `(a) npx creek --version: ${version}; --app app.ts without tsx: "${firstLine(noTsx.stderr)}"`,
  );

  const serverTsc = run('npx', ['--no', '--', 'tsc', '--noEmit', '-p', 'tsconfig.json'], {
    cwd: nodeProject,
  });
  log(
    `(a) tsc --noEmit of server-side.ts (@creek/server, /host, /node; strict, skipLibCheck: false): clean in ${serverTsc.took}`,
  );

  const cluster = await startCluster(nodeProject);
  cleanups.push(() => cluster.stop());
  log(`(a) 3 replicas ready in ${cluster.took}: ${cluster.urls.join(' ')}`);
  const script = run('node', ['use-cluster.mjs'], {
    cwd: nodeProject,
    env: { ...process.env, CREEK_URLS: cluster.urls.join(','), CREEK_TOKEN: cluster.token },
    timeout: 60_000,
  });
  log(`(a) node use-cluster.mjs: ${script.stdout.trim()}`);
  results.a = 'ok';

  // ---- 2b. a client-only TypeScript project ----------------------------------------------------
  const clientProject = project('client-project', ['@creek/react'], {
    typescript: '~5.9.3',
    vite: '^8.0.0',
    react: '^19.0.0',
    '@types/react': '^19.0.0',
  });
  log('(b) npm install in the client-only project');
  log(`(b) installed in ${npmInstall(clientProject)}`);
  for (const absent of ['@creek/server', 'better-sqlite3', '@types/node', '@types/ws'])
    if (existsSync(join(clientProject, 'node_modules', absent)))
      throw new Error(`the client-only project got ${absent}`);
  const tsc = run('npx', ['--no', '--', 'tsc', '--noEmit', '-p', 'tsconfig.json'], {
    cwd: clientProject,
  });
  log(
    `(b) tsc --noEmit (strict, exactOptionalPropertyTypes, skipLibCheck: false, no @types/node): clean in ${tsc.took}; 6 @ts-expect-error lines fired (client and React hooks)`,
  );
  results.b = 'ok';

  // ---- 2c. a Vite bundle in Chromium -----------------------------------------------------------
  const vite = run('npx', ['--no', '--', 'vite', 'build'], { cwd: clientProject });
  const bundle = join(clientProject, 'web-dist');
  const js = listFiles(bundle).filter((f) => f.endsWith('.js'));
  const size = js.reduce((n, f) => n + readFileSync(join(bundle, f)).length, 0);
  log(`(c) vite build in ${vite.took}: ${js.join(', ')} (${kb(size)})`);
  const page = await serveStatic(bundle);
  cleanups.push(() => page.close());
  const shown = await driveChromium(
    `${page.url}/index.html?urls=${encodeURIComponent(cluster.urls.join(','))}&token=${cluster.token}`,
  );
  const pageResult = JSON.parse(shown);
  if (pageResult.final !== 7 || pageResult.read !== 7 || pageResult.views.at(-1) !== 'strong:7')
    throw new Error(`the page showed ${shown}`);
  log(`(c) Chromium ran the page: ${shown}`);
  results.c = 'ok';

  // ---- 2d. the in-memory cluster without the server --------------------------------------------
  const memoryProject = project('memory-project', ['@creek/replica'], {});
  log('(d) npm install in the in-memory project (client and replica, no server)');
  log(`(d) installed in ${npmInstall(memoryProject)}`);
  for (const absent of ['@creek/server', 'better-sqlite3', 'pino', 'prom-client'])
    if (existsSync(join(memoryProject, 'node_modules', absent)))
      throw new Error(`the in-memory project got ${absent}`);
  const memory = run('node', ['memory.mjs'], { cwd: memoryProject, timeout: 60_000 });
  if (memory.stdout.trim() !== 'tentative:2 stable:2')
    throw new Error(`memory.mjs printed ${memory.stdout}`);
  log(`(d) node memory.mjs, 3 replicas in one process: ${memory.stdout.trim()}`);
  results.d = 'ok';
} catch (err) {
  console.error(`consumer: FAILED: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
  if (KEEP) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

const verdict = ['a', 'b', 'c', 'd'].map((p) => `(${p}) ${results[p] ?? 'FAILED'}`).join(', ');
log(`${verdict} in ${seconds(started)}`);
process.exit(Object.keys(results).length === 4 ? 0 : 1);

// ---- helpers -----------------------------------------------------------------------------------

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** The first line a command printed itself (npm's own warnings left out). */
function firstLine(text) {
  return text.split('\n').find((l) => l.trim() !== '' && !l.startsWith('npm ')) ?? '';
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** `npm install` from the registry, with the tarballs; returns how long it took. */
function npmInstall(cwd) {
  return run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd }).took;
}

/** Paths grouped by folder, one line per folder: `dist/node/: a.js a.d.ts …`. */
function fileTree(paths) {
  const byDir = new Map();
  for (const p of [...paths].sort()) {
    const dir = p.includes('/') ? `${p.slice(0, p.lastIndexOf('/'))}/` : './';
    if (!byDir.has(dir)) byDir.set(dir, []);
    byDir.get(dir).push(p.slice(dir === './' ? 0 : dir.length));
  }
  return [...byDir].map(([dir, names]) => `${dir} (${names.length}): ${names.join(' ')}`);
}

function listFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** A port N with N, N+1 and N+2 free on 127.0.0.1, for `creek dev --port N`. */
async function freeBasePort() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const held = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await listenOn(base + i));
      return base;
    } catch {
      // taken: try another
    } finally {
      await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
    }
  }
  throw new Error('found no three consecutive free ports');
}

function listenOn(port) {
  return new Promise((resolveListen, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveListen(server));
  });
}

/** `npx creek dev` with 3 replicas on free ports; resolves once it says it is ready. */
async function startCluster(cwd) {
  const t = Date.now();
  const port = String(await freeBasePort());
  // The installed binary itself (what `npx creek` found above), so that SIGINT reaches it directly.
  const child = spawn(
    join(cwd, 'node_modules', '.bin', 'creek'),
    ['dev', '--app', 'app.js', '--replicas', '3', '--port', port, '--data', '.creek'],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
  const stop = async () => {
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      return;
    }
    const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    if (code !== 0) log(`creek dev exited ${code} after SIGINT\n${stderr}`);
  };
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`creek dev did not get ready in 60 s\n${stdout}\n${stderr}`));
    }, 60_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`creek dev exited ${code} before it was ready\n${stdout}\n${stderr}`));
    });
    child.stdout.on('data', () => {
      if (!stdout.includes('Press Ctrl-C')) return;
      clearTimeout(timer);
      const urls = [...stdout.matchAll(/replica \d+: (ws:\/\/\S+\/client)/g)].map((m) => m[1]);
      const token = /client token: (\S+)/.exec(stdout)?.[1];
      if (urls.length !== 3 || token === undefined)
        reject(new Error(`could not read the URLs and token from:\n${stdout}`));
      else resolveReady({ urls, token, stop, took: seconds(t) });
    });
  });
}

/** Serves a built folder on 127.0.0.1 (what any static host would do). */
function serveStatic(root) {
  const server = createServer((req, res) => {
    const path = join(root, new URL(req.url, 'http://x').pathname);
    if (!path.startsWith(root) || !existsSync(path) || extname(path) === '') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
    res.end(readFileSync(path));
  });
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}

/** Loads the page in headless Chromium (Debian's, through the repository's playwright-core). */
async function driveChromium(url) {
  const { chromium } = await import('playwright-core');
  const executablePath =
    process.env.CHROMIUM_PATH ||
    ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync);
  if (executablePath === undefined)
    throw new Error('part (c) needs Chromium: apt-get install chromium, or set CHROMIUM_PATH');
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForSelector('#out[data-done]', { timeout: 30_000 });
    const done = await page.getAttribute('#out', 'data-done');
    const text = await page.textContent('#out');
    if (done !== 'ok' || errors.length > 0)
      throw new Error(`the page failed: ${text} ${errors.join('; ')}`);
    return text;
  } finally {
    await browser.close();
  }
}
