import type { App } from '@creek/app';
import { runOperation } from '../core/run-operation.js';
import type { ExecutionJob, ExecutionResult } from '../core/types.js';
import type { Executor } from './executor.js';

/** Runs each job at once on the calling thread: the executor of the simulator and of tests. */
export class InlineExecutor implements Executor {
  constructor(private readonly app: App) {}

  execute(job: ExecutionJob): ExecutionResult {
    return runOperation(this.app.lookup(job.op), job);
  }
}
