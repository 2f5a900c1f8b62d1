#!/usr/bin/env node
// The docs cannot drift from the code: `npm run docs:verify` fails when they do.
//
// 1. Types. Every ```ts and ```tsx block of README.md, docs/**/*.md (not docs/api, which
//    `npm run docs:check` covers) and packages/*/README.md is written to a file under
//    .docs-check/types/ and type-checked with `tsc --noEmit` under the repository's strict options,
//    against the packages' sources (`@creek/*` resolve as they do in the repository's own code).
//    Each block is a module of its own. A block whose first line is a comment naming a file
//    (`// hello/app.ts`) is written under that name, so the other blocks of the same page can
//    import it (`import type app from './app.js'`); two blocks of one page may not share a name.
//    A block that cannot stand alone is skipped only when the line before its fence says why:
//    `<!-- docs-check: skip (the reason) -->`. Keep those rare.
// 2. The CLI. Every flag a page passes to `creek dev`, `creek dev token`, `creek start`,
//    `creek member` or `creek check` in a shell block, and every flag in the first column of a
//    settings table (of the command the text before the table last names), must be one the
//    command's `--help` lists.
// 3. Excerpts. A ```js block whose first line names a file of the repository
//    (`// packages/examples/src/todo/app.js`) must be that file, line for line; with
//    `(excerpt)` after the name, each run of lines between `// …` lines must be a run of the
//    file's lines, in the file's order.
// 4. The quickstart, for real. docs/getting-started.md's first app (the blocks named
//    hello/app.ts and hello/client.ts) is written to
//    .docs-check/quickstart/, `creek dev --app hello/app.ts --data .creek/hello` starts a local
//    cluster on it (the page's `npm run creek -- dev`, run from that folder, on free ports instead
//    of 7100), the client runs as the page runs it (`npx tsx hello/client.ts`, pointed at those
//    ports), and what it prints must be the page's output block (the ```text block after
//    `<!-- docs-check: output of hello/client.ts -->`). Then the cluster is stopped as Ctrl-C
//    stops it.
// 5. README.md's first app (the todo example), for real: its commands are run from the root as
//    the page gives them (`creek dev --app packages/examples/src/todo/app.js`, `creek dev token
//    --user alice`, then the example's client.js with that token), on a fresh data directory and
//    free ports instead of .creek/todo and 7100, and what the client prints must be the page's
//    output block (after `<!-- docs-check: output of todo/client.js -->`).
//
// Usage: node scripts/check-docs.mjs [--only types|excerpts|flags|quickstart|first-app] [--keep]
//   --keep leaves .docs-check/ in place to look at.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = join(ROOT, '.docs-check');
const require = createRequire(import.meta.url);
const TSC = require.resolve('typescript/bin/tsc');
const CREEK = join(ROOT, 'packages/server/bin/creek.js');

const GETTING_STARTED = 'docs/getting-started.md';
const QUICKSTART_FILES = ['hello/app.ts', 'hello/client.ts'];
/** The commands the page tells a reader to run; this script runs their equivalents. */
const QUICKSTART_COMMANDS = [
  'npm run creek -- dev --app hello/app.ts --data .creek/hello',
  'npx tsx hello/client.ts',
];
/** The client URL the page's client uses: the check points it at the ports it started on. */
const QUICKSTART_URL = 'ws://127.0.0.1:7100/client';

const FIRST_APP_PAGE = 'README.md';
const FIRST_APP = 'packages/examples/src/todo/app.js';
const FIRST_APP_CLIENT = 'packages/examples/src/todo/client.js';
/** The data directory the page's commands name: the check gives each a fresh one instead. */
const FIRST_APP_DATA = '.creek/todo';
/** The commands the page gives, in order; this script runs their equivalents. */
const FIRST_APP_COMMANDS = [
  `npm run creek -- dev --app ${FIRST_APP} --data ${FIRST_APP_DATA}`,
  `export TODO_USER_TOKEN=$(npm run -s creek -- dev token --user alice --data ${FIRST_APP_DATA})`,
  `node ${FIRST_APP_CLIENT} --data ${FIRST_APP_DATA} add "buy milk"`,
];

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const keep = args.includes('--keep');
const CHECKS = ['types', 'excerpts', 'flags', 'quickstart', 'first-app'];
if (only !== undefined && !CHECKS.includes(only)) {
  console.error(`usage: node scripts/check-docs.mjs [--only ${CHECKS.join('|')}] [--keep]`);
  process.exit(2);
}

/** The pages whose TypeScript blocks are checked, relative to the root. */
function pages() {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .filter((p) => !p.startsWith(join('docs', 'api', '/')));
  const packages = readdirSync(join(ROOT, 'packages'))
    .map((p) => join('packages', p, 'README.md'))
    .filter((p) => existsSync(join(ROOT, p)));
  return ['README.md', ...docs.sort(), ...packages.sort()];
}

/**
 * The fenced blocks of a markdown page: language, text (the fence's indentation removed), the
 * line of its first text line and the indentation, its file name if its first line names one, and
 * the directive on the line before its fence, if any.
 */
function blocks(page) {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})([\w-]*)(?:\s.*)?$/.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      if (lines[j].trim() === fence) break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const directive = k >= 0 ? /<!--\s*docs-check:\s*(.*?)\s*-->/.exec(lines[k])?.[1] : undefined;
    const name = /^\/\/ ([\w./-]+\.tsx?)(\s|$)/.exec(body[0] ?? '')?.[1];
    out.push({ lang, text: body.join('\n'), line: i + 2, indent: indent.length, name, directive });
    i = j;
  }
  return out;
}

const problems = [];
const problem = (where, message) => problems.push(`${where}: ${message}`);

/** Writes each page's TypeScript blocks under .docs-check/types/; where each file came from. */
function writeTypeBlocks() {
  const dir = join(WORK, 'types');
  const origin = new Map();
  let count = 0;
  let skipped = 0;
  for (const page of pages()) {
    const folder = join(dir, page.replace(/\.md$/, ''));
    const names = new Set();
    for (const b of blocks(page)) {
      if (b.lang !== 'ts' && b.lang !== 'tsx') continue;
      if (b.directive !== undefined) {
        const skip = /^skip\b\s*(.*)$/.exec(b.directive);
        if (skip === null) problem(`${page}:${b.line}`, `unknown directive '${b.directive}'`);
        else if (skip[1].replace(/[()—–-]/g, '').trim() === '')
          problem(
            `${page}:${b.line}`,
            'a skipped block must say why: <!-- docs-check: skip (why) -->',
          );
        else {
          skipped++;
          continue;
        }
      }
      const name = b.name ?? `block-${b.line}.${b.lang}`;
      if (names.has(name)) {
        problem(`${page}:${b.line}`, `a second block named ${name} on this page`);
        continue;
      }
      names.add(name);
      const file = join(folder, name);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${b.text}\n`);
      origin.set(file, { page, line: b.line, indent: b.indent });
      count++;
    }
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: '../../tsconfig.base.json',
        compilerOptions: {
          composite: false,
          declaration: false,
          declarationMap: false,
          sourceMap: false,
          noEmit: true,
          lib: ['ES2023', 'DOM', 'DOM.Iterable'],
          types: ['node'],
          jsx: 'react-jsx',
        },
        include: ['**/*.ts', '**/*.tsx'],
      },
      null,
      2,
    ),
  );
  return { dir, origin, count, skipped };
}

function checkTypes() {
  const { dir, origin, count, skipped } = writeTypeBlocks();
  const run = spawnSync(
    process.execPath,
    [TSC, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  const output = `${run.stdout}${run.stderr}`.trim();
  for (const line of output.split('\n').filter((l) => l !== '')) {
    // tsc names files relative to the working directory: map a block's file back to its page.
    const m = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
    const from = m === null ? undefined : origin.get(join(ROOT, m[1]));
    if (from === undefined) problem('tsc', line);
    else
      problem(`${from.page}:${from.line + Number(m[2]) - 1}:${from.indent + Number(m[3])}`, m[4]);
  }
  if (run.status !== 0 && output === '') problem('tsc', `exited with status ${run.status}`);
  console.log(
    `docs: ${count} TypeScript blocks type-checked${skipped > 0 ? ` (${skipped} marked as not standalone)` : ''}`,
  );
}

/** A line that stands for lines an excerpt leaves out. */
const GAP = /^\s*\/\/ …\s*$/;

/** Each ```js block that names a repository file is that file, or (excerpt) runs of its lines. */
function checkExcerpts() {
  let count = 0;
  for (const page of pages()) {
    for (const b of blocks(page)) {
      if (b.lang !== 'js') continue;
      const named = /^\/\/ ([\w./-]+\.m?js)( \(excerpt\))?\s*$/.exec(b.text.split('\n')[0] ?? '');
      if (named === null) continue;
      const [, file, excerpt] = named;
      const where = `${page}:${b.line}`;
      if (!existsSync(join(ROOT, file))) {
        problem(where, `names ${file}, which is not in the repository`);
        continue;
      }
      count++;
      const lines = readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '').split('\n');
      const shown = b.text.split('\n').slice(1);
      if (excerpt === undefined) {
        if (shown.join('\n') !== lines.join('\n'))
          problem(
            where,
            `differs from ${file} (say "(excerpt)" after the name to show part of it)`,
          );
        continue;
      }
      // Each run between gaps, found in the file after the run before it.
      const runs = [[]];
      for (const line of shown) {
        if (GAP.test(line)) runs.push([]);
        else runs.at(-1).push(line);
      }
      let from = 0;
      for (const run of runs.filter((r) => r.length > 0)) {
        let at = -1;
        for (let i = from; i + run.length <= lines.length && at < 0; i++)
          if (run.every((line, k) => lines[i + k] === line)) at = i;
        if (at < 0) {
          problem(
            where,
            `this excerpt of ${file} is not in it (in this order): the run starting "${run[0].trim()}"`,
          );
          break;
        }
        from = at + run.length;
      }
    }
  }
  console.log(`docs: ${count} JavaScript blocks compared with the files they name`);
}

/** The packages' dist/, which `creek` and a plain client run: up to date, as npm ci leaves it. */
function build() {
  const run = spawnSync(
    process.execPath,
    [TSC, '-b', 'packages/app', 'packages/protocol', 'packages/server', 'packages/client'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (run.status !== 0) throw new Error('building the packages (tsc -b) failed');
}

/** The flags each `creek` command takes, from its `--help`. */
function creekFlags() {
  const flags = new Map();
  for (const command of ['dev', 'dev token', 'start', 'member', 'check']) {
    const help = spawnSync(process.execPath, [CREEK, ...command.split(' '), '--help'], {
      encoding: 'utf8',
    });
    if (help.status !== 0) throw new Error(`creek ${command} --help failed:\n${help.stderr}`);
    const names = [...help.stdout.matchAll(/^ {2}--([a-z][a-z-]*)/gm)].map((m) => m[1]);
    flags.set(command, new Set(names));
  }
  return flags;
}

/** A `creek` command a page names; `creek dev token` is a command of its own, with its own flags. */
const COMMAND = /\bcreek(?:\.js)?\s+(?:--\s+)?(dev token|dev|start|member|check)\b/;

function checkFlags() {
  const flags = creekFlags();
  let count = 0;
  const check = (where, command, text) => {
    for (const [, name] of text.matchAll(/(?:^|[\s`[])--([a-z][a-z-]*)/g)) {
      count++;
      if (!flags.get(command).has(name))
        problem(
          where,
          `creek ${command} has no --${name} (creek ${command} --help lists its flags)`,
        );
    }
  };
  for (const page of pages()) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    let named; // the creek command the text last named, for the tables after it
    let fence = null;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const open = /^\s*(`{3,})(\w*)/.exec(line);
      if (fence === null && open !== null) {
        fence = { marks: open[1], shell: open[2] === 'sh' };
        continue;
      }
      if (fence !== null) {
        if (line.trim() === fence.marks) fence = null;
        else if (fence.shell) {
          // One command: a line and the lines its trailing backslashes continue onto.
          let text = line;
          const at = i;
          while (text.trimEnd().endsWith('\\') && i + 1 < lines.length) text += ` ${lines[++i]}`;
          const command = COMMAND.exec(text.replace(/#.*$/, ''))?.[1];
          if (command !== undefined) check(`${page}:${at + 1}`, command, text.replace(/#.*$/, ''));
        }
        continue;
      }
      if (/^\|\s*`--/.test(line)) {
        if (named !== undefined) check(`${page}:${i + 1}`, named, line.split('|')[1]);
        continue;
      }
      const mentioned = [...line.matchAll(new RegExp(COMMAND.source, 'g'))].at(-1)?.[1];
      if (mentioned !== undefined) named = mentioned;
    }
  }
  console.log(`docs: ${count} creek flags checked against the commands' --help`);
}

/** A port p such that p, p+1 and p+2 are free on 127.0.0.1 (a 3-replica `creek dev`). */
async function freePorts() {
  const free = (port) =>
    new Promise((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await free(base)) && (await free(base + 1)) && (await free(base + 2))) return base;
  }
  throw new Error('no three free consecutive ports found');
}

/** Resolves once `child` printed `text` on stdout; rejects if it exits first or time runs out. */
function waitForOutput(child, text, ms, log) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${text}' within ${ms / 1000} s`)), ms);
    child.stdout.on('data', (d) => {
      log.push(String(d));
      if (log.join('').includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on('data', (d) => log.push(String(d)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${signal ?? code}) before printing '${text}'`));
    });
  });
}

/** Runs a command to its end (with `env` added to this one's); its exit status and output. */
function runToEnd(command, commandArgs, cwd, ms, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Stops `creek dev` as Ctrl-C does (it stops its replicas), or kills its process group. */
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGINT');
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

async function checkQuickstart() {
  const guide = blocks(GETTING_STARTED);
  const text = readFileSync(join(ROOT, GETTING_STARTED), 'utf8');
  for (const command of QUICKSTART_COMMANDS)
    if (!text.includes(command))
      problem(
        GETTING_STARTED,
        `no longer says \`${command}\`: update it or this check (${relative(ROOT, fileURLToPath(import.meta.url))})`,
      );
  const files = new Map();
  for (const name of QUICKSTART_FILES) {
    const b = guide.find((x) => x.name === name);
    if (b === undefined)
      problem(GETTING_STARTED, `has no block named ${name} (its first line: // ${name})`);
    else files.set(name, b.text);
  }
  const expected = guide.find(
    (b) => b.directive === 'output of hello/client.ts' && b.lang === 'text',
  );
  if (expected === undefined)
    problem(
      GETTING_STARTED,
      'has no ```text block after <!-- docs-check: output of hello/client.ts -->',
    );
  if (files.size !== QUICKSTART_FILES.length || expected === undefined) return;
  const client = files.get('hello/client.ts');
  if (!client.includes(QUICKSTART_URL)) {
    problem(GETTING_STARTED, `hello/client.ts no longer connects to ${QUICKSTART_URL}`);
    return;
  }

  const dir = join(WORK, 'quickstart');
  const port = await freePorts();
  mkdirSync(join(dir, 'hello'), { recursive: true });
  writeFileSync(join(dir, 'hello/app.ts'), `${files.get('hello/app.ts')}\n`);
  writeFileSync(
    join(dir, 'hello/client.ts'),
    `${client.replaceAll(QUICKSTART_URL, `ws://127.0.0.1:${port}/client`)}\n`,
  );
  const started = Date.now();
  const dev = spawn(
    process.execPath,
    [CREEK, ...['dev', '--app', 'hello/app.ts', '--data', '.creek/hello', '--port', String(port)]],
    { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const devLog = [];
  try {
    await waitForOutput(dev, 'Press Ctrl-C to stop.', 60_000, devLog);
    const run = await runToEnd(
      process.execPath,
      ['--import', 'tsx', 'hello/client.ts'],
      dir,
      30_000,
    );
    const got = run.stdout.trim();
    const want = expected.text.trim();
    if (run.code !== 0)
      problem(
        GETTING_STARTED,
        `hello/client.ts exited with ${run.signal ?? run.code}:\n${run.stdout}${run.stderr}`,
      );
    else if (got !== want)
      problem(GETTING_STARTED, `hello/client.ts printed\n${got}\n  where the page shows\n${want}`);
    else
      console.log(
        `docs: the quickstart ran (creek dev --app hello/app.ts, then hello/client.ts) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
  } catch (err) {
    problem(GETTING_STARTED, `creek dev --app hello/app.ts: ${err.message}\n${devLog.join('')}`);
  } finally {
    await stop(dev);
  }
}

async function checkFirstApp() {
  const text = readFileSync(join(ROOT, FIRST_APP_PAGE), 'utf8');
  for (const command of FIRST_APP_COMMANDS)
    if (!text.includes(command))
      problem(
        FIRST_APP_PAGE,
        `no longer says \`${command}\`: update it or this check (${relative(ROOT, fileURLToPath(import.meta.url))})`,
      );
  const expected = blocks(FIRST_APP_PAGE).find(
    (b) => b.directive === 'output of todo/client.js' && b.lang === 'text',
  );
  if (expected === undefined) {
    problem(
      FIRST_APP_PAGE,
      'has no ```text block after <!-- docs-check: output of todo/client.js -->',
    );
    return;
  }
  const data = join(WORK, 'first-app');
  const port = await freePorts();
  const started = Date.now();
  const dev = spawn(
    process.execPath,
    [CREEK, 'dev', '--app', FIRST_APP, '--data', data, '--port', String(port)],
    { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const devLog = [];
  try {
    await waitForOutput(dev, 'Press Ctrl-C to stop.', 60_000, devLog);
    const token = await runToEnd(
      process.execPath,
      [CREEK, 'dev', 'token', '--user', 'alice', '--data', data],
      ROOT,
      30_000,
    );
    if (token.code !== 0) {
      problem(
        FIRST_APP_PAGE,
        `creek dev token exited with ${token.signal ?? token.code}:\n${token.stderr}`,
      );
      return;
    }
    const urls = [0, 1, 2].map((i) => `ws://127.0.0.1:${port + i}/client`).join(',');
    const run = await runToEnd(
      process.execPath,
      [FIRST_APP_CLIENT, '--data', data, '--urls', urls, 'add', 'buy milk'],
      ROOT,
      30_000,
      { TODO_USER_TOKEN: token.stdout.trim() },
    );
    const got = run.stdout.trim();
    const want = expected.text.trim();
    if (run.code !== 0)
      problem(
        FIRST_APP_PAGE,
        `${FIRST_APP_CLIENT} exited with ${run.signal ?? run.code}:\n${run.stdout}${run.stderr}`,
      );
    else if (got !== want)
      problem(
        FIRST_APP_PAGE,
        `${FIRST_APP_CLIENT} printed\n${got}\n  where the page shows\n${want}`,
      );
    else
      console.log(
        `docs: README's first app ran (creek dev --app ${FIRST_APP}, creek dev token, client.js) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
  } catch (err) {
    problem(FIRST_APP_PAGE, `creek dev --app ${FIRST_APP}: ${err.message}\n${devLog.join('')}`);
  } finally {
    await stop(dev);
  }
}

rmSync(WORK, { recursive: true, force: true });
try {
  if (only === undefined || only === 'types') checkTypes();
  if (only === undefined || only === 'excerpts') checkExcerpts();
  if (only !== 'types' && only !== 'excerpts') build();
  if (only === undefined || only === 'flags') checkFlags();
  if (only === undefined || only === 'quickstart') await checkQuickstart();
  if (only === undefined || only === 'first-app') await checkFirstApp();
} finally {
  if (!keep) rmSync(WORK, { recursive: true, force: true });
}
if (problems.length > 0) {
  console.error(`docs: ${problems.length} problem(s): the docs have drifted from the code\n`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log('docs: current');
