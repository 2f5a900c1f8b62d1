import type { Invariant, StateReader } from '@creek/app';
import { guarded } from './determinism-guard.js';
import type { OpId } from './op-id.js';

/**
 * An app invariant (AppOptions.invariants) that the finalized state broke
 * (ReplicaOptions.checkInvariants): the state right after the op finalized at `position`.
 *
 * The finalized state is the serial execution of the committed order, weak ops included at their
 * final position, so a violation there is not a weak op that should have been strong (its
 * tentative answer may have been wrong; the state is recomputed): it is an op that breaks the
 * invariant even run in order, an invariant that is wrong, or a replica whose finalized state is
 * not that serial execution.
 */
export interface InvariantViolation {
  readonly invariant: string;
  /** Committed ops up to and including the op (the first op's is 1). */
  readonly position: number;
  readonly id: OpId;
  readonly op: string;
  /** What the invariant threw, if it threw rather than returned false. */
  readonly error: string | null;
}

/**
 * The invariants `read`'s state breaks, with what each threw, if it threw. They run under the
 * execution guard, as an op's `run` does: an invariant must be deterministic too, or replicas
 * would report different violations of one state.
 */
export function brokenInvariants(
  invariants: Readonly<Record<string, Invariant>>,
  read: StateReader,
): { invariant: string; error: string | null }[] {
  const broken: { invariant: string; error: string | null }[] = [];
  for (const [invariant, holds] of Object.entries(invariants)) {
    try {
      if (guarded(() => holds(read)) !== true) broken.push({ invariant, error: null });
    } catch (err) {
      broken.push({ invariant, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return broken;
}
