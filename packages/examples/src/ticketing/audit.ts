import { ticketName } from './app.js';
import { sellsOnPreliminary, type Outcome } from './policy.js';
import type { Purchase } from './purchase.js';

/** A sale as the final state records it (`tickets.sales`). */
export interface RecordedSale {
  readonly ticket: string;
  readonly customer: string;
}

/** What the final state and the customers' final views say about one sale of `stocked` tickets. */
export interface Audit {
  readonly stocked: number;
  /** Customers whose final view holds a ticket: more than `stocked` would be an oversell. */
  readonly sold: number;
  /** Sales in the final state, and tickets still in stock there. */
  readonly recorded: number;
  readonly left: number;
  /** Tickets in the final views of two or more customers, or recorded twice. */
  readonly soldTwice: readonly string[];
  /** How many stocked tickets are neither sold nor in stock. */
  readonly lost: number;
  /** Tickets sold that were never stocked. */
  readonly unknown: readonly string[];
  /** Customers whose final view disagrees with the recorded sale of their ticket. */
  readonly disagreements: readonly string[];
  /** Purchases sold on a view the threshold rule does not allow (§4.3). */
  readonly ruleBreaches: readonly string[];
  readonly outcomes: Readonly<Record<Outcome, number>>;
  /** Every stocked ticket sold exactly once, as both the state and the final views say. */
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/**
 * Checks a finished sale: stocked tickets `first … first + stocked - 1`; the customers' purchases
 * with their final views; and the final state read with a strong (linearizable) read after every
 * purchase had its final view.
 */
export function audit(input: {
  readonly first: number;
  readonly stocked: number;
  readonly threshold: number;
  readonly purchases: readonly Purchase[];
  readonly recorded: readonly RecordedSale[];
  readonly left: number;
}): Audit {
  const { first, stocked, threshold, purchases, recorded, left } = input;
  const expected = new Set(Array.from({ length: stocked }, (_, i) => ticketName(first + i)));

  const holder = new Map<string, string>();
  const soldTwice = new Set<string>();
  const outcomes: Record<Outcome, number> = {
    confirmed: 0,
    reissued: 0,
    withdrawn: 0,
    sold: 0,
    'sold-out': 0,
  };
  const ruleBreaches: string[] = [];
  for (const p of purchases) {
    outcomes[p.outcome]++;
    const allowed = p.preliminary !== undefined && sellsOnPreliminary(p.preliminary, threshold);
    if ((p.soldOn === 'preliminary') !== allowed)
      ruleBreaches.push(
        `${p.customer}: sold on the ${p.soldOn} view, preliminary ${JSON.stringify(p.preliminary)}`,
      );
    if (p.final === null) continue;
    if (holder.has(p.final.ticket)) soldTwice.add(p.final.ticket);
    holder.set(p.final.ticket, p.customer);
  }

  const recordedBy = new Map<string, string>();
  for (const s of recorded) {
    if (recordedBy.has(s.ticket)) soldTwice.add(s.ticket);
    recordedBy.set(s.ticket, s.customer);
  }
  const disagreements: string[] = [];
  for (const [ticket, customer] of holder) {
    const r = recordedBy.get(ticket);
    if (r !== customer)
      disagreements.push(`${ticket}: final view says ${customer}, state says ${r ?? 'unsold'}`);
  }
  for (const [ticket, customer] of recordedBy)
    if (!holder.has(ticket)) disagreements.push(`${ticket}: state says ${customer}, no final view`);

  const sold = [...holder.keys()];
  const unknown = [...new Set([...sold, ...recordedBy.keys()])].filter((t) => !expected.has(t));
  // Whatever was stocked and not sold must still be in stock, or it was lost.
  const unsold = [...expected].filter((t) => !recordedBy.has(t));
  const lost = Math.max(0, unsold.length - left);

  const problems: string[] = [];
  if (sold.length > stocked) problems.push(`oversold: ${sold.length} sold of ${stocked}`);
  if (soldTwice.size > 0) problems.push(`sold twice: ${[...soldTwice].join(', ')}`);
  if (lost > 0) problems.push(`lost: ${lost} tickets (unsold: ${unsold.slice(0, 10).join(', ')})`);
  // Every retailer stopped on a final "sold out", and the stock is not refilled during a sale.
  if (left > 0) problems.push(`${left} left in stock after the final views said "sold out"`);
  if (unknown.length > 0) problems.push(`never stocked: ${unknown.join(', ')}`);
  if (disagreements.length > 0) problems.push(...disagreements.slice(0, 10));
  if (ruleBreaches.length > 0) problems.push(...ruleBreaches.slice(0, 10));
  return {
    stocked,
    sold: sold.length,
    recorded: recordedBy.size,
    left,
    soldTwice: [...soldTwice],
    lost,
    unknown,
    disagreements,
    ruleBreaches,
    outcomes,
    ok: problems.length === 0 && sold.length === stocked && recordedBy.size === stocked,
    problems,
  };
}
