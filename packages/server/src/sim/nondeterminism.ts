import { z } from 'zod';
import { defineApp, op, type App } from '@creek/app';
import { sessionKey } from '@creek/replica/core/session-dedupe.js';
import { takesOps, type SimProcess } from './process.js';
import type { RunState } from './run-state.js';
import { simInvariants, simOps, type GeneratedOp } from './workload.js';

/**
 * The planted nondeterministic op (SimConfig.nondeterministic): it writes which replica ran it,
 * as an app that reads its host name, an environment variable or a module-level counter would.
 * With `victim`, one replica writes 1 and every other 0 (a minority of one, with three replicas
 * or more); without, each writes its own id (no two agree: no majority).
 */
export const PLANTED_OP = 'stampReplica';
/** The planted op's keys: no other op of the workload reads or writes them. */
export const PLANTED_PREFIX = 'nd/';
/** The session of each replica's planted ops (its outcome records differ between replicas too). */
const PLANTED_SESSION = 'planted';
/** Every key the planted op's effects reach: its own, and its sessions' outcome records. */
export const PLANTED_KEY_PREFIXES = [PLANTED_PREFIX, sessionKey(PLANTED_SESSION)] as const;
/**
 * How long a run with the planted op goes on once quiescent: several anti-entropy rounds, so that
 * every replica compared its state at the last committed position with its peers'.
 */
export const PLANTED_GRACE_MS = 500;

/** The replica the checkers' reference interpreter runs the planted op as (none). */
const REFERENCE = -1;

/**
 * The simulator's app with the planted op, as the process of replica `replica` loads it; without
 * one, as the replicas' op tables and the checkers' reference interpreter see it (its writes and
 * answers mean nothing there: the checkers leave them out).
 */
export function plantedApp(replica = REFERENCE): App {
  return defineApp(
    {
      ...simOps,
      [PLANTED_OP]: op({
        args: z.object({
          key: z.string().startsWith(PLANTED_PREFIX),
          victim: z.number().int().nonnegative().nullable(),
        }),
        run(tx, { key, victim }) {
          const value = victim === null ? replica : replica === victim ? 1 : 0;
          tx.put(key, value);
          return value;
        },
      }),
    },
    { invariants: simInvariants },
  );
}

/** Invokes an op at a replica, in session `${session}${replica}` (SimClients.invokeAt). */
export type InvokeAt = (h: SimProcess, op: GeneratedOp, session: string) => void;

/**
 * When a strong read of a planted op's key is made, after the faults are healed and the workload
 * is over: well after the replicas compared their states, so that what they serve then must be a
 * majority's (checkDivergence).
 */
export const PLANTED_READS_AFTER_MS = 1000;

/**
 * The planted ops of a run: one or two, each at a replica that takes ops, and strong reads of
 * their keys at every replica that takes ops once the faults are healed (PLANTED_READS_AFTER_MS
 * after the workload). Every draw is the named stream 'nondeterministic''s, so the rest of the
 * seed stays as it was. Returns how many reads are still to be made (the run is not quiescent
 * before).
 */
export function schedulePlanted(run: RunState, invokeAt: InvokeAt): { pending: number } {
  const prng = run.prngs.named('nondeterministic');
  const count = prng.int(1, 2);
  const reads = { pending: 1 };
  // One victim for the run's planted ops, so that they split the replicas one way; or none, and
  // no two replicas agree.
  const victim = prng.chance(0.3) ? null : prng.int(0, run.config.replicas - 1);
  for (let i = 0; i < count; i++) {
    const at = prng.float(100, run.workloadMs * 0.7);
    const strong = prng.chance(0.5);
    const key = `${PLANTED_PREFIX}${i}`;
    run.events.push(at, () => {
      const up = run.procs.filter(takesOps);
      if (up.length === 0) return;
      run.trace(`planted: ${PLANTED_OP} ${key} (victim ${victim ?? 'none'})`);
      invokeAt(prng.pick(up), { op: PLANTED_OP, args: { key, victim }, strong }, PLANTED_SESSION);
    });
  }
  run.events.push(run.workloadMs + PLANTED_READS_AFTER_MS + prng.float(0, 500), () => {
    reads.pending = 0;
    for (const h of run.procs.filter(takesOps))
      for (let i = 0; i < count; i++)
        invokeAt(
          h,
          { op: 'kv.get', args: { key: `${PLANTED_PREFIX}${i}` }, strong: true },
          PLANTED_SESSION,
        );
  });
  return reads;
}

/**
 * `p` must learn from its peers (a new member, or a replica that lost its disk) and no member
 * can teach it: every other member that is up serves no stable answer (its state diverged without
 * a majority's), and gives no state (a copy of a state no majority holds would make it one). An
 * operator must choose which state is right first (docs/operations.md): in the simulator, which
 * has none, it stays out of the run's end, as a replica lost for good does.
 */
export function stuckByDivergence(p: SimProcess, procs: readonly SimProcess[]): boolean {
  if (!p.up || !p.host.learningFromPeers) return false;
  const members = p.host.status().membership.members;
  const teachers = procs.filter((q) => q !== p && q.up && members.includes(q.id));
  return teachers.length > 0 && teachers.every((q) => q.host.diverged !== null);
}
