/**
 * One instance of the app under `creek check` (app-instance.ts): a worker thread that loads the
 * app as a replica does, so it has its own module state and its own globals, and runs the ops it
 * is sent exactly as a replica's executor runs them (runOperation, under the execution guard).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toFrozenJson, type App, type JsonValue } from '@creek/app';
import { guardRefusals } from '@creek/replica/core/determinism-guard.js';
import { runOperation } from '@creek/replica/core/run-operation.js';
import type { SnapshotReader } from '@creek/replica/core/types.js';
import { loadApp } from '../exec/load-app.js';
import type { CheckReply, CheckRequest, Invocation, RunResult } from './check-messages.js';

const port = parentPort;
if (port === null) throw new Error('check-worker.js runs as a worker thread');
const { appPath } = workerData as { appPath: string };
const reply = (m: CheckReply): void => port.postMessage(m);

let app: App;
try {
  app = await loadApp(appPath);
} catch (err) {
  reply({ t: 'failed', error: err instanceof Error ? err.message : String(err) });
  throw err;
}

/** A snapshot over a map, as the replica's store reads: frozen values, scans sorted by key. */
function snapshotOf(store: Map<string, JsonValue>): SnapshotReader {
  return {
    get: (key) => store.get(key),
    scan: (prefix) =>
      [...store]
        .filter(([k]) => k.startsWith(prefix))
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
  };
}

let jobs = 0;
function run(invocation: Invocation, store: Map<string, JsonValue>): RunResult {
  const before = guardRefusals().count;
  const result = runOperation(app.lookup(invocation.op), {
    jobId: ++jobs,
    op: invocation.op,
    args: toFrozenJson(invocation.args),
    ts: invocation.ts,
    id: invocation.id,
    snapshot: snapshotOf(store),
  });
  const after = guardRefusals();
  return {
    outcome: result.outcome,
    writes: [...result.writes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    refused: after.count > before ? (after.last ?? null) : null,
  };
}

/** The state every run reads, until the next `build` or `adopt`. */
let current = new Map<string, JsonValue>();

port.on('message', (request: CheckRequest) => {
  if (request.t === 'build') {
    const store = new Map<string, JsonValue>();
    for (const invocation of request.ops) {
      const { outcome, writes } = run(invocation, store);
      if (!outcome.ok) continue; // a failed op writes nothing, as at a replica
      for (const [k, v] of writes) {
        if (v === undefined) store.delete(k);
        else store.set(k, v);
      }
    }
    current = store;
    reply({ t: 'built', seq: request.seq, state: [...store] });
  } else if (request.t === 'adopt') {
    current = new Map(request.state.map(([k, v]) => [k, toFrozenJson(v)]));
    reply({ t: 'adopted', seq: request.seq });
  } else reply({ t: 'ran', seq: request.seq, result: run(request.invocation, current) });
});
reply({ t: 'ready' });
