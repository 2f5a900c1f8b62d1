/**
 * An execution worker (worker-pool-executor.ts): loads the app, keeps a mirror of the replica's
 * version store, and runs the jobs it is sent on it, one at a time, reporting what each read.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { App } from '@creek/app';
import { opKey } from '@creek/replica/core/op-id.js';
import { runOperation } from '@creek/replica/core/run-operation.js';
import { pairHashesOf } from '@creek/replica/core/state-digest.js';
import { loadApp } from './load-app.js';
import type { WorkerReply, WorkerRequest } from '@creek/replica/exec/mirror-messages.js';
import { MirrorStore } from '@creek/replica/exec/mirror-store.js';

const port = parentPort;
if (port === null) throw new Error('execution-worker.js runs as a worker thread');
const { appPath } = workerData as { appPath: string | undefined };

const reply = (m: WorkerReply): void => port.postMessage(m);

let app: App;
try {
  app = await loadApp(appPath);
} catch (err) {
  reply({ t: 'failed', error: err instanceof Error ? err.message : String(err) });
  throw err;
}
const mirror = new MirrorStore();

port.on('message', (request: WorkerRequest) => {
  mirror.apply(request.updates);
  const job = request.job;
  const snapshot = mirror.reader(job.rank);
  const started = performance.now();
  const result = runOperation(app.lookup(job.op), {
    jobId: job.jobId,
    op: job.op,
    args: job.args,
    ts: job.ts,
    id: job.id,
    snapshot,
    ...(job.session === undefined ? {} : { session: job.session }),
    ...(job.user === undefined ? {} : { user: job.user }),
  });
  // What running it cost here, which is what it would cost the main thread inline.
  const micros = (performance.now() - started) * 1000;
  // The jobs queued behind it here read its writes, until the main thread's installation of them
  // comes back.
  if (job.id !== null) mirror.installOwn(opKey(job.id), job.jobId, job.rank, result.writes);
  reply({
    t: 'done',
    jobId: job.jobId,
    writes: result.writes,
    outcome: result.outcome,
    reads: snapshot.reads,
    micros,
    // Hashed here rather than on the main thread, which keeps the digest of the final state.
    pairHashes: pairHashesOf(result.writes),
  });
});
reply({ t: 'ready' });
