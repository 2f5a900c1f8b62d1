/**
 * The Creek replica's core and the app model: `@creek/replica`, re-exported so that
 * `import { defineApp, op, Replica } from '@creek/server'` keeps working. The runtime is
 * `@creek/server/node`, the simulator `@creek/server/sim`.
 *
 * @module @creek/server
 */
export * from '@creek/replica';
