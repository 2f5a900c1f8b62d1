import type { Bought } from './app.js';

/**
 * The retailer's rule (Correctables §4.3, Listing 5): a purchase's preliminary view says which
 * ticket the local replica would hand out and how many would be left after it. While that leaves
 * more than `threshold` in stock, contention over the last tickets is far away, so the sale goes
 * ahead on the preliminary view and the final one completes in the background. At or below the
 * threshold (or when the preliminary view says sold out) the retailer waits for the final view,
 * which is atomic: no two customers get the same ticket and nobody gets a ticket that is not there.
 *
 * Pure, so the page, the load and the tests apply exactly the same rule.
 */
export function sellsOnPreliminary(
  preliminary: Bought | null,
  threshold: number,
): preliminary is Bought {
  return preliminary !== null && preliminary.remaining > threshold;
}

/**
 * How a purchase ended, comparing the view it was sold on with the final view:
 * - sold on the preliminary view: `confirmed` (the final view has the same ticket), or revoked by
 *   the final view, in one of two ways: `reissued` (another ticket: the customer gets that one
 *   instead) or `withdrawn` (none: sold out; the customer was told "reserved" and gets nothing);
 * - sold on the final view: `sold`, or `sold-out` (the customer is turned away; never told more).
 */
export type Outcome = 'confirmed' | 'reissued' | 'withdrawn' | 'sold' | 'sold-out';

export const REVOKED: readonly Outcome[] = ['reissued', 'withdrawn'];

export function outcomeOf(
  soldOn: 'preliminary' | 'final',
  preliminary: Bought | null | undefined,
  final: Bought | null,
): Outcome {
  if (soldOn === 'final') return final === null ? 'sold-out' : 'sold';
  if (final === null) return 'withdrawn';
  return final.ticket === preliminary?.ticket ? 'confirmed' : 'reissued';
}

/** Words for an outcome, as the page and the report print them. */
export const OUTCOME_LABEL: Record<Outcome, string> = {
  confirmed: 'confirmed',
  reissued: 'revoked: another ticket',
  withdrawn: 'revoked: sold out',
  sold: 'confirmed',
  'sold-out': 'sold out',
};
