import type { ExecutionJob, ExecutionResult } from '../core/types.js';

/**
 * Runs the executions a replica asks for (its `execute` outputs) and hands back their results
 * (`replica.executed(result)`). The core never runs application code itself, so an executor that
 * runs jobs elsewhere — a worker-thread pool — can replace the inline one without touching it.
 */
export interface Executor {
  execute(job: ExecutionJob): ExecutionResult | Promise<ExecutionResult>;
}
