import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the packages' TypeScript sources (the `creek-source` export condition), so an edit
  // is tested without a build. Real replica processes run the built `creek` binary: the global
  // setup brings dist/ up to date first (tsc -b, incremental).
  ssr: { resolve: { conditions: ['creek-source', ...defaultServerConditions] } },
  resolve: { conditions: ['creek-source', ...defaultServerConditions] },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    globalSetup: ['./vitest.build.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
