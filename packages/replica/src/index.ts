/**
 * The Creek replica without I/O: the core (Creek Algorithm 1) and the inline executor, with the
 * app model re-exported from `@creek/app`; CAB, gossip and the host that wires them are
 * `@creek/replica/cab`, `/gossip` and `/host`. The simulator and the runtime (`@creek/server`)
 * drive it, and so does the in-memory cluster of `@creek/client/memory`.
 *
 * @module @creek/replica
 */
export * from './core/index.js';
export type { Executor } from './exec/executor.js';
export { InlineExecutor } from './exec/inline-executor.js';
