export * from './core/index.js';
export type { Executor } from './exec/executor.js';
export { InlineExecutor } from './exec/inline-executor.js';
