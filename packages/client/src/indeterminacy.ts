/**
 * The fate of an op whose outcome was unknown ({@link Indeterminate}): `committed` — it is in the
 * cluster's committed order and took effect there as its code decided (`outcome` is its result at
 * that place, when the cluster told it: a strong op's stable answer, or what an abandon found); or
 * `abandoned` — it never took effect and never will.
 */
export type Fate =
  | {
      readonly fate: 'committed';
      readonly outcome:
        | { readonly ok: true; readonly value: unknown }
        | { readonly ok: false; readonly error: string }
        | null;
    }
  | { readonly fate: 'abandoned' };

/**
 * An op that may have taken effect, or may still (indeterminate, as Jepsen calls it): the client
 * that invoked it can find out which, or make sure it never does.
 */
export interface Indeterminate {
  /**
   * Waits for the op's fate. The client keeps resubmitting the op (applied once) until a replica
   * says it is committed, so this resolves `committed` once the cluster can be reached, unless an
   * `abandon()` resolves first.
   */
  settled(): Promise<Fate>;
  /**
   * Makes sure the op never takes effect if it has not already: the client stops resubmitting it
   * and asks the cluster to abandon it (a strong `creek.abandon`). Resolves `abandoned` (it never
   * will take effect, whatever copies of it are still on their way) or `committed` (it took effect
   * first). Rejects with the abandon's own error if the cluster could not be asked; call it again.
   */
  abandon(): Promise<Fate>;
}

/**
 * What is known of each CreekError's op: whether it may have taken effect, and the handle on it.
 * Kept here rather than in the error (no `#private` fields, which React Native's engine does not
 * run everywhere), and set only by the client itself: these functions are not exported to apps
 * (the two types above are, through errors.ts).
 */
const known = new WeakMap<Error, { may: boolean; handle: Indeterminate | null }>();

export function indeterminacyOf(e: Error): { may: boolean; handle: Indeterminate | null } {
  return known.get(e) ?? { may: false, handle: null };
}

/**
 * The binding, which knows what became of the op, says so: whether it may have taken effect, and
 * the handle on it (kept only when it may). Called before the caller's promise handlers run.
 */
export function settleIndeterminacy(
  e: Error,
  mayHaveTakenEffect: boolean,
  handle: Indeterminate | null = null,
): void {
  known.set(e, { may: mayHaveTakenEffect, handle: mayHaveTakenEffect ? handle : null });
}
