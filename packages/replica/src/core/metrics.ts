import type { SpeculationCounts } from '@creek/protocol';
/**
 * Counters every replica keeps from the start (Creek §6): the execution ratio (executions per
 * finalized op) and speculation accuracy (the share of ops whose first, tentative response equalled
 * the final result).
 */
export class ReplicaMetrics {
  invoked = { weak: 0, strong: 0, readOnly: 0, rejected: 0 };
  /** Executions of ordered ops (first runs and re-executions). */
  executions = 0;
  /** Executions found invalid after a reorder, whose versions were withdrawn. */
  rollbacks = 0;
  /** Executions started beyond the validation frontier, concurrently with earlier ones. */
  aheadExecutions = 0;
  /** Of those, the ones found invalid at validation (a conflict): discarded and re-executed. */
  aheadConflicts = 0;
  /** Commits that moved a strong op ahead of tentative ops outside its causal context. */
  reorderingCommits = 0;
  finalized = 0;
  executionsOfFinalized = 0;
  /** Local ops whose first response was tentative, and how many of those equalled the final result. */
  speculated = 0;
  speculatedCorrectly = 0;
  /**
   * `speculated` and `speculatedCorrectly` per op name (Map order: first seen first), so an app can
   * see which ops' tentative answers are often corrected. Op names are the app's (an unknown one is
   * refused before it runs); past BY_OP_NAMES of them, the rest are counted under OTHER_OPS.
   */
  readonly byOp = new Map<string, { speculated: number; speculatedCorrectly: number }>();
  noopsIssued = 0;
  /** Other origins' strong ops this replica CAB-cast on their behalf (`cabAdopt`). */
  adopted = 0;
  /**
   * Closes of dead origins this replica issued, closes that took effect here (the first of each
   * origin), and the ops they dropped here (core/closing-origins.ts).
   */
  closesIssued = 0;
  closedOrigins = 0;
  droppedByClose = 0;
  /** Invariants found broken on the finalized state (ReplicaOptions.checkInvariants). */
  invariantsBroken = 0;

  /**
   * The counts behind the execution ratio and speculation accuracy, and rollbacks: what a viewer
   * takes differences of over an interval of its own (the event stream's status, a replay frame).
   */
  speculationCounts(): SpeculationCounts {
    return {
      finalized: this.finalized,
      executionsOfFinalized: this.executionsOfFinalized,
      speculated: this.speculated,
      speculatedCorrectly: this.speculatedCorrectly,
      rollbacks: this.rollbacks,
    };
  }

  /** An op answered tentatively is final: counts it, and whether its first answer held. */
  countSpeculation(op: string, correct: boolean): void {
    this.speculated++;
    if (correct) this.speculatedCorrectly++;
    let entry = this.byOp.get(op);
    if (entry === undefined) {
      const name = this.byOp.size < BY_OP_NAMES ? op : OTHER_OPS;
      entry = this.byOp.get(name) ?? { speculated: 0, speculatedCorrectly: 0 };
      this.byOp.set(name, entry);
    }
    entry.speculated++;
    if (correct) entry.speculatedCorrectly++;
  }

  /** `byOp` as plain data, sorted by op name. */
  speculationByOp(): Record<string, { speculated: number; speculatedCorrectly: number }> {
    const out: Record<string, { speculated: number; speculatedCorrectly: number }> = {};
    for (const name of [...this.byOp.keys()].sort()) out[name] = { ...this.byOp.get(name)! };
    return out;
  }

  executionRatio(): number {
    return this.finalized === 0 ? 1 : this.executionsOfFinalized / this.finalized;
  }

  accuracy(): number {
    return this.speculated === 0 ? 1 : this.speculatedCorrectly / this.speculated;
  }
}

/** How many op names ReplicaMetrics.byOp keeps apart. */
export const BY_OP_NAMES = 256;
/** The name the op names past BY_OP_NAMES are counted under. */
export const OTHER_OPS = '(other)';

/** ReplicaMetrics.speculationCounts: the protocol's shape (HostStatus.metrics holds them too). */
export type { SpeculationCounts };
