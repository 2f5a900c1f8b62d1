// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { layerZones } from './scripts/layers.js';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', 'docs/api/**', '.docs-check/**'] },
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
    // The examples' plain JavaScript (a page the browser loads as it is, a Node client) is
    // type-checked by tsc (checkJs in packages/examples/tsconfig.json), which knows the DOM's and
    // Node's globals; no-undef would only repeat it, without those lists.
    files: ['packages/examples/src/**/*.js'],
    rules: { 'no-undef': 'off' },
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
    // The architecture of DESIGN.md, enforced on the sources: which folder and package may import
    // which (scripts/layers.js; import cycles are scripts/check-cycles.mjs's). Imports are resolved
    // as TypeScript resolves them inside the repository (`@creek/*` to the packages' sources, the
    // `creek-source` condition), so an import through a package name counts as a relative one.
    files: ['packages/*/src/**/*.{ts,tsx}', 'bench/src/**/*.ts', 'robustness/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: 'tsconfig.json',
          conditionNames: ['creek-source', 'types', 'import', 'node', 'default'],
        }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
    },
  },
  {
    // The pure state machines and the host that wires them (@creek/replica), and the app model:
    // no clocks, randomness, I/O or Node built-ins (DESIGN.md, "the central rule"). Time comes in with each input, randomness is
    // seeded, and every effect leaves as an output the drivers act on.
    files: ['packages/app/src/**/*.ts', 'packages/replica/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'net', 'os', 'worker_threads', 'ws', 'better-sqlite3'],
              message: 'the replica is pure: no I/O.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Date', message: 'the state machines are pure: time comes in through tick(now).' },
        {
          name: 'setTimeout',
          message: 'the state machines are pure: timers belong to the drivers.',
        },
        {
          name: 'setInterval',
          message: 'the state machines are pure: timers belong to the drivers.',
        },
        {
          name: 'setImmediate',
          message: 'the state machines are pure: timers belong to the drivers.',
        },
        {
          name: 'performance',
          message: 'the state machines are pure: time comes in through tick(now).',
        },
        { name: 'process', message: 'the state machines are pure.' },
        { name: 'crypto', message: 'the state machines are pure: randomness is seeded.' },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Math',
          property: 'random',
          message: 'the state machines are pure: randomness is seeded (tx.random()).',
        },
      ],
    },
  },
  {
    // The client's session is pure too (DESIGN.md, "the host"): its socket driver
    // (creek-binding.ts) owns sockets, timers, the clock, randomness and storage, so that a
    // simulator can drive the same session over its own network and clock.
    files: ['packages/client/src/session/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'net', 'os', 'ws', '../creek-binding.js', '../socket.js'],
              message: 'the client session is pure: no I/O, and no arrow back to its driver.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['Date', 'performance'].map((name) => ({
          name,
          message: 'the client session is pure: time comes in through its `now`.',
        })),
        ...['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask'].map((name) => ({
          name,
          message:
            'the client session is pure: it asks its driver for timers (`reconnect`, `tick`).',
        })),
        ...['WebSocket', 'crypto', 'process', 'indexedDB', 'AbortSignal'].map((name) => ({
          name,
          message: 'the client session is pure: its driver owns sockets, randomness and storage.',
        })),
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Math',
          property: 'random',
          message: 'the client session is pure: randomness comes from its driver.',
        },
      ],
    },
  },
);
