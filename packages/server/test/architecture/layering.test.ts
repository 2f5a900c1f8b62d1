import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script, without declarations
import { circles } from '../../../../scripts/check-cycles.mjs';

/**
 * The architecture's rules are lint rules (eslint.config.js, scripts/layers.js,
 * scripts/check-cycles.mjs): planted violations — a back-arrow import, a clock or a timer in a pure
 * layer, an import cycle — must fail them, and the code as it is must pass them (`npm run lint`).
 */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/** The rule ids ESLint reports for `code` as if it were the file at `path` (from the root). */
async function ruleIds(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return result!.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

describe('layering', () => {
  it('refuses an arrow back up: the core importing the host', async () => {
    const ids = await ruleIds(
      'packages/replica/src/core/planted.ts',
      `import { ReplicaHost } from '../host/replica-host.js';\nexport const h = ReplicaHost;\n`,
    );
    expect(ids).toContain('import-x/no-restricted-paths');
  });

  it('refuses the two drivers importing each other, and the SDK importing the server', async () => {
    expect(
      await ruleIds(
        'packages/server/src/sim/planted.ts',
        `import { SqliteStorage } from '../node/storage.js';\nexport const s = SqliteStorage;\n`,
      ),
    ).toContain('import-x/no-restricted-paths');
    expect(
      await ruleIds(
        'packages/client/src/planted.ts',
        `import { ReplicaHost } from '@creek/replica/host';\nexport const h = ReplicaHost;\n`,
      ),
    ).toContain('import-x/no-restricted-paths');
  });

  it('lets the in-memory cluster use the pure host, but not the runtime', async () => {
    const host = `import { ReplicaHost } from '@creek/replica/host';\nexport const h = ReplicaHost;\n`;
    expect(await ruleIds('packages/client/src/memory/planted.ts', host)).toEqual([]);
    expect(
      await ruleIds(
        'packages/client/src/memory/planted.ts',
        `import { LocalCluster } from '@creek/server/node';\nexport const c = LocalCluster;\n`,
      ),
    ).toContain('import-x/no-restricted-paths');
  });

  it('refuses a clock, a timer and randomness in the replica', async () => {
    const path = 'packages/replica/src/host/planted.ts';
    expect(await ruleIds(path, `export const t = Date.now();\n`)).toEqual([
      'no-restricted-globals',
    ]);
    expect(await ruleIds(path, `export const t = setTimeout(() => 1, 5);\n`)).toEqual([
      'no-restricted-globals',
    ]);
    expect(await ruleIds(path, `export const r = Math.random();\n`)).toEqual([
      'no-restricted-properties',
    ]);
    expect(
      await ruleIds(
        path,
        `import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n`,
      ),
    ).toEqual(['no-restricted-imports']);
  });
});

describe('import cycles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'creek-cycles-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a cycle closed by a type-only import, and none in a chain', () => {
    const a = join(dir, 'a.ts');
    const b = join(dir, 'b.ts');
    const c = join(dir, 'c.ts');
    writeFileSync(a, `import { B } from './b.js';\nexport const A = B + 1;\n`);
    writeFileSync(b, `import type { C } from './c.js';\nexport const B = 1;\nexport type X = C;\n`);
    writeFileSync(c, `export type C = number;\n`);
    expect(circles([a, b, c])).toEqual([]);
    writeFileSync(c, `import type { X } from './b.js';\nexport type C = X | number;\n`);
    expect(circles([a, b, c])).toEqual([[b, c]]);
  });
});
