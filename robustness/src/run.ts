import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { connect } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { checkHistory, type Counts } from './check.js';
import type { History } from './history.js';
import { Nemesis, sleep } from './nemesis.js';
import { schedule, type NemesisKind } from './schedule.js';
import { LIST_KEYS, listKey, QUEUES, queueName, Workload } from './workload.js';

const APP = fileURLToPath(new URL('./app.ts', import.meta.url));
/** How long the cluster has to serve again after a fault, and to converge at the end. */
const RECOVER_MS = 60_000;
const SETTLE_MS = 60_000;
/** Log lines kept per replica, for the record of a failed run. */
const LOG_LINES = 2_000;

export interface RunOptions {
  readonly seed: number;
  readonly durationS: number;
  readonly replicas: number;
  readonly nemesis: readonly NemesisKind[];
  /** Write the run's record even when it is clean. */
  readonly keep: boolean;
  readonly log: (line: string) => void;
}

export interface RunResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violations: readonly string[];
  readonly counts: Counts;
  /** The faults carried out, in words. */
  readonly faults: readonly string[];
  /** Writes the clients still did not know committed after the settling time (a liveness sign). */
  readonly unconfirmed: number;
  /** Where the run's history and replica logs were written (a failed run's, or any with keep). */
  readonly savedTo: string | null;
  readonly seconds: number;
}

/**
 * One run: a cluster of real processes, the load (workload.ts) for `durationS` while the nemesis
 * works through its seeded schedule, then everything healed, the clients' open ops left to
 * settle, the final state read by strong reads, the history checked (check.ts), and the replicas
 * required to converge (equal state digests) and not to have crashed.
 */
export async function runOnce(o: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const now = (): number => performance.now() - started;
  const logs = new Map<number, string[]>();
  const crashes: string[] = [];
  let nemesis: Nemesis | null = null;
  const cluster = await LocalCluster.start({
    replicas: o.replicas,
    app: APP,
    logLevel: 'warn',
    onLog: (replica, line) => {
      const l = logs.get(replica) ?? [];
      l.push(line);
      if (l.length > LOG_LINES) l.shift();
      logs.set(replica, l);
    },
    onExit: (replica, code, signal) => {
      if (nemesis?.expectedExit(replica) === true) return;
      crashes.push(
        `replica ${replica} exited by itself (${signal ?? `status ${code}`}) at ${(now() / 1000).toFixed(1)} s`,
      );
    },
  });
  // Interrupted (Ctrl-C, a timeout's SIGTERM): the replicas go too, not left running orphaned.
  const interrupted = (signal: NodeJS.Signals): void => {
    cluster.killAll();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const violations: string[] = [];
  const load = new Workload(cluster, o.seed, now);
  let history: History | null = null;
  let unconfirmed = 0;
  try {
    nemesis = new Nemesis(cluster, now, o.log);
    load.start();
    const end = o.durationS * 1000;
    const steps = schedule(o.seed, o.nemesis, o.replicas, end);
    for (const [n, step] of steps.entries()) {
      // Every kind once, however slow the machine: the first round runs past the end if it must.
      const firstRound = n < o.nemesis.length;
      if (now() >= end && !firstRound) break;
      try {
        await nemesis.apply(step, firstRound ? step.faultMs : end - now());
      } catch (err) {
        violations.push(
          `nemesis: a fault could not be carried out or undone: ${clip((err as Error).message)}`,
        );
        await nemesis.healAll();
        break;
      }
      try {
        await nemesis.healthy(RECOVER_MS);
      } catch (err) {
        violations.push(
          `liveness: the cluster did not serve again within ${RECOVER_MS / 1000} s of the fault: ${clip((err as Error).message)}`,
        );
        break;
      }
      await sleep(Math.min(step.quietMs, Math.max(0, end - now())));
    }
    o.log(`load stops at ${(now() / 1000).toFixed(1)} s; ${load.ops.length} ops so far`);
    await load.stop();
    const open = await load.settle(SETTLE_MS);
    unconfirmed = open;
    if (open > 0)
      o.log(
        `${open} writes still not known committed after ${SETTLE_MS / 1000} s; their fate is read from the final state`,
      );
    load.close();
    try {
      await cluster.converged(RECOVER_MS);
    } catch (err) {
      violations.push(
        `convergence: the live replicas did not reach equal state digests: ${clip((err as Error).message)}`,
      );
    }
    await readFinalState(cluster, load);
    history = { ops: load.ops, lost: nemesis.lost };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cluster.stop(2_000);
  }
  if (history === null || nemesis === null)
    throw new Error('unreachable: the run ended without a history');
  // Written before the check, so that a check that never ends still leaves the run to look at.
  const dir = save(o.seed, history, nemesis.done, logs);
  const checkFrom = performance.now();
  const verdict = checkHistory(history);
  o.log(`history checked in ${((performance.now() - checkFrom) / 1000).toFixed(1)} s`);
  violations.push(...crashes.map((c) => `crash: ${c}`), ...verdict.violations);
  const ok = violations.length === 0;
  writeFileSync(join(dir, 'violations.txt'), violations.join('\n') + '\n');
  if (ok && !o.keep) rmSync(dir, { recursive: true, force: true });
  const savedTo = ok && !o.keep ? null : dir;
  return {
    seed: o.seed,
    ok,
    violations,
    counts: verdict.counts,
    faults: nemesis.done.map((d) => d.what),
    unconfirmed,
    savedTo,
    seconds: Math.round(now() / 1000),
  };
}

/**
 * The final state, read through a fresh client once the cluster has settled: each list by a
 * strong read, each queue drained by strong dequeues until it is empty. These ops are part of the
 * history (marked final), so the linearizability check covers them too.
 */
async function readFinalState(cluster: LocalCluster, load: Workload): Promise<void> {
  const client = connect({ urls: cluster.urls, token: cluster.token, nearest: false });
  try {
    let n = 0;
    const until = async (what: string, done: () => Promise<boolean>): Promise<void> => {
      for (let tries = 0; tries < 20; tries++) if (await done()) return;
      throw new Error(`the final state could not be read: ${what} failed 20 times`);
    };
    for (let k = 0; k < LIST_KEYS; k++)
      await until(`the strong read of ${listKey(k)}`, async () => {
        const r = await load.invoke(
          client,
          `final/${n++}`,
          'read',
          'list.read',
          { key: listKey(k) },
          false,
          undefined,
          true,
        );
        return r.outcome?.type === 'ok';
      });
    for (let q = 0; q < QUEUES; q++) {
      let empty = false;
      while (!empty)
        await until(`a dequeue of the drain of ${queueName(q)}`, async () => {
          const r = await load.invoke(
            client,
            `final/${n++}`,
            'dequeue',
            'queue.dequeue',
            { queue: queueName(q) },
            false,
            undefined,
            true,
          );
          if (r.outcome?.type !== 'ok') return false;
          empty = r.outcome.value === null;
          return true;
        });
    }
  } finally {
    client.close();
  }
}

/** Writes a run's record where it can be read: the history, the faults, the replicas' logs. */
function save(
  seed: number,
  history: History,
  faults: readonly { at: number; what: string }[],
  logs: ReadonlyMap<number, string[]>,
): string {
  const dir = mkdtempSync(join(tmpdir(), `creek-robustness-seed-${seed}-`));
  // One op a line, so that grep finds an op's whole record.
  const head = JSON.stringify({ seed, faults, lost: history.lost });
  const ops = history.ops.map((op) => JSON.stringify(op)).join(',\n');
  writeFileSync(join(dir, 'history.json'), `${head.slice(0, -1)},"ops":[\n${ops}\n]}\n`);
  for (const [replica, lines] of logs)
    writeFileSync(join(dir, `replica-${replica}.log`), lines.join('\n') + '\n');
  return dir;
}

function clip(s: string, max = 600): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}
