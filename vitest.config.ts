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
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: processes },
      },
      {
        extends: true,
        test: { name: 'browser', include: browser },
      },
    ],
  },
});
