import type { ExecutionJob, ExecutionResult } from '../core/types.js';

/**
 * Runs the executions a replica asks for (its `execute` outputs) and hands back their results
 * (`replica.executed(result)`). The core never runs application code itself, so an executor that
 * runs jobs elsewhere — a worker-thread pool, the simulator's concurrent slots — can replace the
 * inline one without touching it.
 *
 * `execute` either returns the result at once, or returns `undefined` and hands the result later
 * to the host (a `{ kind: 'executed' }` step of ReplicaHost); several jobs may then be running at
 * once (the replica's `executionSlots`). A deferred job reads its snapshot when it runs; whatever it read is validated
 * before its result counts (§4.4), so it may run at any time before it finishes.
 */
export interface Executor {
  execute(job: ExecutionJob): ExecutionResult | undefined;
}
