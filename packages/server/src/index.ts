/**
 * The Creek replica core (Creek Algorithm 1) and the app model, re-exported from `@creek/app`.
 *
 * @module @creek/server
 */
export * from './core/index.js';
export type { Executor } from './exec/executor.js';
export { InlineExecutor } from './exec/inline-executor.js';
