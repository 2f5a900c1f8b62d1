#!/usr/bin/env node
// Fails when files of a package's sources import each other in a circle, type-only imports
// included: a circle of types is still two files that cannot be read, moved or tested apart.
// (ESLint's import-x/no-cycle skips type imports, so this check is its own.) Only relative
// imports can close a circle: imports across packages go through package names, and the layer
// rules (scripts/layers.js) already keep those one-way.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The source folders checked, relative to the root. */
export const SOURCE_DIRS = [
  ...readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `packages/${e.name}/src`),
  'bench/src',
  'robustness/src',
];

/** Every .ts/.tsx file below `dir` (absolute paths). */
function sources(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The files `file` imports by a relative path (`./x.js` names `./x.ts` or `./x.tsx`). */
function relativeImports(file, known) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const out = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = resolve(dirname(file), fileName).replace(/\.js$/, '');
    const hit = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((f) => known.has(f));
    if (hit !== undefined) out.push(hit);
  }
  return out;
}

/** The import graph's strongly connected components of two or more files (Tarjan). */
export function circles(files) {
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, relativeImports(f, known)]));
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    for (let w; w !== v;) {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : SOURCE_DIRS;
  const files = dirs.flatMap((d) => sources(resolve(ROOT, d)));
  const found = circles(files);
  if (found.length > 0) {
    console.error(`import cycles (${found.length}): break each by moving what both sides share`);
    for (const c of found) console.error(`  ${c.map((f) => relative(ROOT, f)).join(' <-> ')}`);
    process.exit(1);
  }
  console.log(`import cycles: none in ${files.length} files`);
}
