import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { PAGE_BUILD } from '../src/shared/page-server.js';

/**
 * No op's `run` code reaches a browser: each example page, bundled as its server bundles it, holds
 * no module that defines ops (an app's `defineApp({...})`, an `op({...})`, the built-in ops).
 * Pages take their app's types with `import type`, which leaves nothing in the bundle; a page that
 * imported the app itself would ship every op's code to every visitor. esbuild's metafile says how
 * many bytes of each module reached the output, so the check does not depend on how the code is
 * printed.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SRC = join(ROOT, 'packages/examples/src');

/** A module that defines ops: it calls `op({` or `defineApp(`. */
const DEFINES_OPS = /\b(?:op|defineApp)\(\s*\{/;

/** The workspace modules of a bundle that reached its output and define ops, relative to ROOT. */
async function opModulesIn(options: BuildOptions): Promise<{ bytes: number; ops: string[] }> {
  const result = await build({ ...PAGE_BUILD, ...options, absWorkingDir: ROOT, metafile: true });
  const [output] = Object.values(result.metafile.outputs);
  if (output === undefined) throw new Error('esbuild wrote no output');
  const ops = Object.entries(output.inputs)
    .filter(([, i]) => i.bytesInOutput > 0)
    // Modules of other namespaces (`(disabled):…`, the stdin entry) are no files of the workspace.
    .map(([file]) => resolve(ROOT, file))
    .filter((file) => !file.includes('/node_modules/') && existsSync(file))
    .filter((file) => DEFINES_OPS.test(readFileSync(file, 'utf8')))
    .map((file) => relative(ROOT, file));
  return { bytes: output.bytes, ops };
}

const pages = readdirSync(SRC, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => join(SRC, e.name, 'page.tsx'))
  .filter((page) => existsSync(page));

describe('the examples’ browser bundles', () => {
  it('finds every example page', () => {
    expect(pages.map((p) => relative(SRC, p)).sort()).toEqual(
      expect.arrayContaining(['ads/page.tsx', 'bank/page.tsx', 'ticketing/page.tsx']),
    );
  });

  it.each(pages.map((p) => [relative(SRC, p), p]))(
    '%s holds no op code (its app comes in as a type)',
    async (_, page) => {
      const { bytes, ops } = await opModulesIn({ entryPoints: [page] });
      expect(bytes).toBeGreaterThan(0);
      expect(ops).toEqual([]);
    },
  );

  it('catches a page that imports its app’s value, and lets `import type` through', async () => {
    const entry = (contents: string): BuildOptions => ({
      stdin: { contents, resolveDir: SRC, loader: 'ts', sourcefile: 'planted-page.ts' },
    });
    const value = await opModulesIn(
      entry("import app from './bank/app.js';\nconsole.log(app.names());\n"),
    );
    expect(value.ops).toContain('packages/examples/src/bank/app.ts');
    const type = await opModulesIn(
      entry(
        "import type app from './bank/app.js';\nconst names: (keyof (typeof app)['definitions'])[] = [];\nconsole.log(names);\n",
      ),
    );
    expect(type.ops).toEqual([]);
    // The built-in ops are op code too: a page that pulls in defineApp gets them.
    const builtins = await opModulesIn(
      entry("import { defineApp } from '@creek/app';\nconsole.log(defineApp({}).names());\n"),
    );
    expect(builtins.ops).toContain('packages/app/src/builtins.ts');
  });
});
