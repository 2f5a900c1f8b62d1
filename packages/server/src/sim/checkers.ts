import type { App } from '@creek/app';
import { checkStableResponses } from './stable-answers.js';
import type { Planted } from './checked-ops.js';
import { checkLiveness, type LivenessRun } from './liveness-checker.js';
import { checkConvergence, checkExactlyOnce } from './convergence-checkers.js';
import { checkCommittedPrefixes, checkProgramOrder } from './order-checkers.js';
import { checkMinorityPartitions } from './partition-checker.js';
import type { RunRecord } from './run-record.js';
import { checkLinearizability } from './strong-linearizability.js';
import { checkTentativeResponses } from './tentative-answers.js';

/**
 * The guarantees every simulated run must keep (DESIGN.md, "Guarantees, and how we know"). Each
 * checker returns the violations it found, as sentences that name the ops involved.
 */
export function checkRun(
  record: RunRecord,
  app: App,
  opts: {
    quiescent: boolean;
    speculative?: boolean;
    /** The longest a replica cut off into a minority may go on holding speculation (ms). */
    holdBoundMs?: number;
    /** How long a response may wait for the replica's disk (ms; default 10). */
    diskWaitMs?: number;
    /**
     * The planted nondeterministic op and its keys' prefix (sim/nondeterminism.ts): replicas'
     * states differ there by design, so the checkers that hold answers and states to a serial
     * execution leave them out (checkDivergence judges them).
     */
    planted?: Planted;
    /** What the liveness checker judges (sim/liveness-checker.ts); absent: not judged. */
    liveness?: LivenessRun;
  },
): string[] {
  const planted = opts.planted ?? null;
  const checks: (() => string[])[] = [
    () => checkCommittedPrefixes(record),
    () => checkProgramOrder(record),
    () => checkStableResponses(record, app, planted),
    () => checkTentativeResponses(record, app, planted),
    () =>
      checkMinorityPartitions(
        record,
        opts.speculative ?? true,
        opts.holdBoundMs ?? Number.POSITIVE_INFINITY,
        opts.diskWaitMs,
      ),
    () => checkLinearizability(record, app, planted),
  ];
  const liveness = opts.liveness;
  if (liveness !== undefined) checks.push(() => checkLiveness(record.invocations, liveness));
  if (opts.quiescent) {
    checks.push(() => checkConvergence(record, app, opts.speculative ?? true, planted));
    checks.push(() => checkExactlyOnce(record));
  }
  return checks.flatMap((check) => {
    try {
      return check();
    } catch (err) {
      // E.g. a committed op whose Req the record lacks: a checker that cannot read the run fails
      // it, and says so, rather than passing it.
      return [`checker failed: ${(err as Error).message}`];
    }
  });
}
