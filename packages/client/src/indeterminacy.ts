import type { CreekError, Indeterminate } from './errors.js';

/**
 * What is known of each error's op: whether it may have taken effect, and the handle on it. Kept
 * here rather than in the error (no `#private` fields, which React Native's engine does not run
 * everywhere), and set only by the client itself: this module is not exported to apps.
 */
const known = new WeakMap<CreekError, { may: boolean; handle: Indeterminate | null }>();

export function indeterminacyOf(e: CreekError): { may: boolean; handle: Indeterminate | null } {
  return known.get(e) ?? { may: false, handle: null };
}

/**
 * The binding, which knows what became of the op, says so: whether it may have taken effect, and
 * the handle on it (kept only when it may). Called before the caller's promise handlers run.
 */
export function settleIndeterminacy(
  e: CreekError,
  mayHaveTakenEffect: boolean,
  handle: Indeterminate | null = null,
): void {
  known.set(e, { may: mayHaveTakenEffect, handle: mayHaveTakenEffect ? handle : null });
}
