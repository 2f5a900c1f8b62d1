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
  noopsIssued = 0;
  /** Other origins' strong ops this replica CAB-cast on their behalf (`cabAdopt`). */
  adopted = 0;

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

  executionRatio(): number {
    return this.finalized === 0 ? 1 : this.executionsOfFinalized / this.finalized;
  }

  accuracy(): number {
    return this.speculated === 0 ? 1 : this.speculatedCorrectly / this.speculated;
  }
}

/** ReplicaMetrics.speculationCounts: the protocol's shape (HostStatus.metrics holds them too). */
export type { SpeculationCounts };
