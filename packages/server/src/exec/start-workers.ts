import { availableParallelism } from 'node:os';
import type { App } from '@creek/app';
import type { ExecutionResult } from '@creek/replica/core/types.js';
import type { Logger } from 'pino';
import { workersForCores } from './worker-choice.js';
import { WorkerPoolExecutor } from './worker-pool-executor.js';

/**
 * The execution workers of `creek start --workers` (a count, or `auto`): null when there are none,
 * and ops run on the main thread.
 */
export async function startWorkers(
  setting: number | 'auto',
  appPath: string | undefined,
  app: App,
  log: Logger,
  onResult: (result: ExecutionResult) => void,
): Promise<WorkerPoolExecutor | null> {
  const auto = setting === 'auto' ? workersForCores(availableParallelism()) : null;
  const workers = auto?.workers ?? (setting === 'auto' ? 0 : setting);
  if (auto !== null) log.info({ workers }, `--workers auto: ${auto.why}`);
  if (workers === 0) return null;
  return WorkerPoolExecutor.start({
    appPath,
    app,
    workers,
    ...(auto === null ? {} : { auto: { why: auto.why } }),
    onWorkersOff: (reason) => log.warn({ reason }, 'execution workers turned off'),
    onResult,
    onWorkerLost: (err) =>
      log.error({ err: err.message }, 'an execution worker failed; its ops run on the main thread'),
  });
}
