#!/usr/bin/env node
// The consumer test: Creek installed as a user installs it, outside this repository.
//
//   npm run test:consumer            # node consumer/run.mjs [--keep]
//
// 1. Runs the install commands of docs/getting-started.md as written (doc-commands.mjs reads them
//    from the page; only ~/creek-packages becomes a fresh temporary folder): `npm pack` of every
//    published package there, then each project's `npm install` of the tarballs the page names,
//    and nothing else of Creek. It prints each tarball's size and files, and fails if the page
//    packs fewer packages than the repository publishes, or a tarball ships tests or scripts.
// 2. (a) A Node project (the page's replica project) starts a 3-replica cluster with its installed
//    `creek` binary and its own app.js (the page's `npx creek dev --app app.js`, on free ports),
//    and runs a plain-JavaScript ESM script with plain `node` that invokes weak, strong and
//    two-view ops on it. `creek --version` works, `--app app.ts` without tsx says to install it,
//    and the server's declarations type-check in it under strict options (server-side.ts).
//    (b) A client-only TypeScript project (the page's client project, with React) type-checks
//    `connect<typeof app>()` with tsc --noEmit under strict + exactOptionalPropertyTypes +
//    skipLibCheck: false, where @ts-expect-error lines must fire for an unknown op name, wrong
//    argument types and a watch of an op that writes; the same for @creek/react's hooks
//    (`createCreekHooks<typeof app>()`, hooks.ts).
//    (c) The same project bundles a page with Vite (the app comes in with `import type`: no op's
//    code may reach the bundle); Chromium loads it and it talks to the cluster.
//    (d) A client project with the in-memory cluster (the page's last line) runs one in-process.
// Exits 0 only when every part passed; the last line says which did. Each project also gets the
// tools its checks need (TypeScript, types, Vite), in a separate `npm install --save-dev`.
//
// Plain JavaScript on purpose: it runs before anything of the repository is trusted, with node.
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GUIDE, installCommands, localized } from './doc-commands.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
/** What the repository publishes: every package under packages/ that is not private. */
const PUBLISHED = readdirSync(join(ROOT, 'packages'))
  .map((dir) => join(ROOT, 'packages', dir, 'package.json'))
  .filter(existsSync)
  .map((file) => JSON.parse(readFileSync(file, 'utf8')))
  .filter((p) => p.private !== true)
  .map((p) => p.name)
  .sort();
/** The marker in consumer/client-project/app.ts's op code, which the page's bundle must not hold. */
const OP_CODE_MARKER = 'counter.add adds a whole number other than 0';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const KEEP = process.argv.includes('--keep');
/** npm's settings for the test's own installs: they change what npm prints, not what it installs. */
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];
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
  // ---- 1. pack, as the page says -------------------------------------------------------------
  const commands = installCommands(ROOT);
  // The page's clone ran `npm ci`, which builds the packages: here they are built as it would.
  log(`building, then running ${GUIDE}'s pack commands with ~/creek-packages in ${work}`);
  run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  const packs = join(work, 'creek-packages');
  for (const command of commands.pack) shell(command, ROOT, packs);
  const tgz = {};
  for (const file of readdirSync(packs)
    .filter((f) => f.endsWith('.tgz'))
    .sort()) {
    const path = join(packs, file);
    const manifest = JSON.parse(
      run('tar', ['-xzOf', path, 'package/package.json'], { cwd: packs }).stdout,
    );
    const files = run('tar', ['-tzf', path], { cwd: packs })
      .stdout.split('\n')
      .filter((f) => f !== '' && !f.endsWith('/'))
      .map((f) => f.replace(/^package\//, ''));
    tgz[manifest.name] = path;
    log(`${file}: ${kb(statSync(path).size)} packed, ${files.length} files`);
    for (const line of fileTree(files)) console.log(`    ${line}`);
    const stray = files.filter((f) => /(^|\/)(test|scripts)\/|tsconfig|\.tsbuildinfo$/.test(f));
    if (stray.length > 0) throw new Error(`${manifest.name} ships ${stray.join(', ')}`);
  }
  const packed = Object.keys(tgz).sort();
  if (packed.join() !== PUBLISHED.join())
    throw new Error(
      `${GUIDE}'s pack commands made ${packed.join(', ')}; the repository publishes ${PUBLISHED.join(', ')}`,
    );

  /**
   * A consumer project: the template folder copied into `work` with a bare package.json, then the
   * page's install commands for it, run as written, then the test's own `tools` (dev only).
   * Afterwards node_modules/@creek must hold exactly `creek`: what the page says the project uses.
   */
  const project = (name, installs, creek, tools) => {
    const dir = join(work, name);
    cpSync(join(HERE, name), dir, { recursive: true });
    writeJson(join(dir, 'package.json'), {
      name: `creek-consumer-${name}`,
      private: true,
      type: 'module',
    });
    const t = Date.now();
    for (const command of installs) shell(command, dir, packs);
    run('npm', ['install', '--save-dev', ...NPM_QUIET, ...tools], { cwd: dir });
    const installed = readdirSync(join(dir, 'node_modules', '@creek'))
      .map((p) => `@creek/${p}`)
      .sort();
    if (installed.join() !== [...creek].sort().join())
      throw new Error(
        `${name} got ${installed.join(', ')} from the page's commands, not ${creek.join(', ')}`,
      );
    return { dir, took: seconds(t) };
  };

  // ---- 2a. a Node project: the creek binary, its own app.js, a plain ESM script ----------------
  log(
    `(a) the replica project: ${commands.replica.length} commands of ${GUIDE} (better-sqlite3 may compile)`,
  );
  const dev = commands.replica.filter((c) => c.startsWith('npx creek dev '));
  if (dev.length !== 1)
    throw new Error(`${GUIDE}'s replica project must start one \`npx creek dev\``);
  const replica = project(
    'node-project',
    commands.replica.filter((c) => !dev.includes(c)),
    ['@creek/app', '@creek/protocol', '@creek/replica', '@creek/client', '@creek/server'],
    ['typescript@~5.9.3', '@types/node@^20.19.0'],
  );
  const nodeProject = replica.dir;
  log(`(a) installed in ${replica.took}`);
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

  const cluster = await startCluster(nodeProject, dev[0].split(/\s+/).slice(2));
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
  log(`(b) the client project with React: the commands of ${GUIDE}`);
  const client = project(
    'client-project',
    [...commands.client, ...commands.react],
    ['@creek/app', '@creek/protocol', '@creek/client', '@creek/react'],
    ['typescript@~5.9.3', 'vite@^8.0.0', '@types/react@^19.0.0'],
  );
  const clientProject = client.dir;
  log(`(b) installed in ${client.took}`);
  for (const absent of ['@creek/server', 'better-sqlite3', '@types/node', '@types/ws'])
    if (existsSync(join(clientProject, 'node_modules', absent)))
      throw new Error(`the client-only project got ${absent}`);
  const tsc = run('npx', ['--no', '--', 'tsc', '--noEmit', '-p', 'tsconfig.json'], {
    cwd: clientProject,
  });
  log(
    `(b) tsc --noEmit (strict, exactOptionalPropertyTypes, skipLibCheck: false, no @types/node): clean in ${tsc.took}; 8 @ts-expect-error lines fired (client and React hooks)`,
  );
  results.b = 'ok';

  // ---- 2c. a Vite bundle in Chromium -----------------------------------------------------------
  const vite = run('npx', ['--no', '--', 'vite', 'build'], { cwd: clientProject });
  const bundle = join(clientProject, 'web-dist');
  const js = listFiles(bundle).filter((f) => f.endsWith('.js'));
  const size = js.reduce((n, f) => n + readFileSync(join(bundle, f)).length, 0);
  log(`(c) vite build in ${vite.took}: ${js.join(', ')} (${kb(size)})`);
  for (const f of js)
    if (readFileSync(join(bundle, f), 'utf8').includes(OP_CODE_MARKER))
      throw new Error(
        `the page's bundle ${f} holds the app's op code: import the app with import type`,
      );
  log('(c) no op code in the bundle: the page imports the app with import type');
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
  log(`(d) a client project with the in-memory cluster: the commands of ${GUIDE}`);
  const memoryInstall = project(
    'memory-project',
    [...commands.client, ...commands.memory],
    ['@creek/app', '@creek/protocol', '@creek/client', '@creek/replica'],
    [],
  );
  const memoryProject = memoryInstall.dir;
  log(`(d) installed in ${memoryInstall.took}`);
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

/** One of the page's commands, as written but for ~/creek-packages, in `cwd` (POSIX sh). */
function shell(command, cwd, packs) {
  const line = localized(command, packs);
  console.log(`    $ ${line}`);
  return run('sh', ['-c', line], {
    cwd,
    env: {
      ...process.env,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_loglevel: 'error',
      npm_config_update_notifier: 'false',
    },
  });
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

/**
 * The page's `npx creek dev ...` (its arguments in `args`) on free ports, with its data in .creek;
 * resolves once it says it is ready, with its 3 replicas' URLs.
 */
async function startCluster(cwd, args) {
  const t = Date.now();
  const port = String(await freeBasePort());
  // The installed binary itself (what `npx creek` found above), so that SIGINT reaches it directly.
  const child = spawn(
    join(cwd, 'node_modules', '.bin', 'creek'),
    [...args, '--port', port, '--data', '.creek'],
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
