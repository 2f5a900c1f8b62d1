import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

/** Set once the packages are built in this Vitest process. */
const BUILT = Symbol.for('creek.vitest.built');

/**
 * Vitest's global setup: builds the published packages (tsc -b of their sources, incremental), so
 * that the real processes tests start (`creek` replicas, clusters) run the code under test. Costs
 * about a second when dist/ is up to date.
 *
 * Every test project (vitest.config.ts) runs the global setup it inherits, one after another in
 * the same process: the first builds, the others find it done.
 */
export default function build(): void {
  const state = globalThis as { [BUILT]?: true };
  if (state[BUILT]) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const projects = [
    'packages/app',
    'packages/protocol',
    'packages/replica',
    'packages/server',
    'packages/client',
  ];
  const run = spawnSync(process.execPath, [tsc, '-b', ...projects], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`tsc -b ${projects.join(' ')} failed (${run.status})`);
  state[BUILT] = true;
}
