import { availableParallelism } from 'node:os';
import { defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests in four tiers, one Vitest project each: `vitest run` runs them all (CI), `--project`
 * one (`npm run test:unit`, `test:sim`, `test:processes`, `test:browser`). A file's tier follows
 * from its name or its folder, so the tiers never overlap and together hold every test file:
 *
 * - `processes`: `*.e2e.test.ts`, tests that start real processes (replicas, clusters, the command
 *   lines, benchmarks' servers and scripts);
 * - `browser`: `*.page.test.ts`, tests that drive Chromium (a cluster behind the page or not);
 * - `simulator`: `packages/server/test/sim/`, seeded simulated runs under the checkers, where a
 *   test that sweeps seeds belongs;
 * - `unit`: every other test — in process, no browser, no long sweeps: the inner loop
 *   (`npm run test:fast`).
 */
const roots = ['packages/*/test/**', 'bench/test/**', 'robustness/test/**'];
const everyTest = roots.map((r) => `${r}/*.test.ts`);
const processes = roots.map((r) => `${r}/*.e2e.test.ts`);
const browser = roots.map((r) => `${r}/*.page.test.ts`);
const simulator = ['packages/server/test/sim/**/*.test.ts'];

export default defineConfig({
  // Tests import the packages' TypeScript sources (the `creek-source` export condition), so an edit
  // is tested without a build. Real replica processes run the built `creek` binary: the global
  // setup brings dist/ up to date first (tsc -b, incremental).
  ssr: { resolve: { conditions: ['creek-source', ...defaultServerConditions] } },
  resolve: { conditions: ['creek-source', ...defaultServerConditions] },
  test: {
    globalSetup: ['./vitest.build.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 1 },
          include: everyTest,
          exclude: [...configDefaults.exclude, ...processes, ...browser, ...simulator],
        },
      },
      {
        extends: true,
        test: {
          name: 'simulator',
          include: simulator,
          exclude: [...configDefaults.exclude, ...processes, ...browser],
          // Seeded runs on simulated time: no wall clock to race, so they take every core first,
          // on their own (Vitest's default keeps one core free, which on a 2-core CI machine ran
          // them one file at a time). The other tiers follow, with the default, as before.
          sequence: { groupOrder: 0 },
          maxWorkers: Math.max(2, availableParallelism()),
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: processes, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: 'browser', include: browser, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
