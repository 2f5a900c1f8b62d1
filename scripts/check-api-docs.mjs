#!/usr/bin/env node
// Fails when docs/api (the committed API reference) is not what `npm run docs` makes of the
// sources today, or when TypeDoc warns (a broken {@link}, an exported type that refers to one that
// is not exported). Regenerates into a temporary folder and compares file by file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const COMMITTED = join(ROOT, 'docs/api');
const fresh = mkdtempSync(join(tmpdir(), 'creek-api-docs-'));

const files = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();

try {
  const run = spawnSync('npx', ['--no', '--', 'typedoc', '--out', fresh, '--logLevel', 'Warn'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    console.error(`api docs: typedoc failed\n${run.stdout}${run.stderr}`);
    process.exit(1);
  }
  const want = files(fresh);
  const have = files(COMMITTED);
  const missing = want.filter((f) => !have.includes(f));
  const extra = have.filter((f) => !want.includes(f));
  const changed = want.filter(
    (f) =>
      have.includes(f) && !readFileSync(join(fresh, f)).equals(readFileSync(join(COMMITTED, f))),
  );
  const stale = [
    ...missing.map((f) => `missing ${f}`),
    ...extra.map((f) => `extra ${f}`),
    ...changed.map((f) => `changed ${f}`),
  ];
  if (stale.length > 0) {
    console.error(
      `api docs: docs/api is out of date (${stale.length} files): run \`npm run docs\` and commit it\n  ${stale.slice(0, 20).join('\n  ')}`,
    );
    process.exit(1);
  }
  console.log(`api docs: docs/api is current (${want.length} files)`);
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
