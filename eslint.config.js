// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', 'docs/api/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain JavaScript run by Node: the `creek` binary, scripts and fixtures.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: Object.fromEntries(
        ['console', 'process', 'URL', 'setTimeout', 'clearTimeout'].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // The pure state machines: no clocks, randomness, I/O or Node built-ins (DESIGN.md, "the central rule").
    files: [
      'packages/app/src/**/*.ts',
      'packages/server/src/core/**/*.ts',
      'packages/server/src/cab/**/*.ts',
      'packages/server/src/gossip/**/*.ts',
      'packages/server/src/common/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'net', 'os', 'worker_threads', 'ws', 'better-sqlite3'],
              message: 'core/cab/gossip are pure: no I/O.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Date', message: 'core is pure: time comes in through tick(now).' },
        { name: 'setTimeout', message: 'core is pure: timers belong to the drivers.' },
        { name: 'setInterval', message: 'core is pure: timers belong to the drivers.' },
        { name: 'performance', message: 'core is pure: time comes in through tick(now).' },
        { name: 'process', message: 'core is pure.' },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Math',
          property: 'random',
          message: 'core is pure: randomness is seeded (tx.random()).',
        },
      ],
    },
  },
);
