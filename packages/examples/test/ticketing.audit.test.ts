import { describe, expect, it } from 'vitest';
import { ticketName, type Bought } from '../src/ticketing/app.js';
import { audit, type RecordedSale } from '../src/ticketing/audit.js';
import { parseTicketingFlags } from '../src/ticketing/flags.js';
import { outcomeOf, sellsOnPreliminary } from '../src/ticketing/policy.js';
import type { Purchase } from '../src/ticketing/purchase.js';

/** The rule, the outcome classes and the audit, without a cluster: each failure it must catch. */

const bought = (n: number, remaining: number): Bought => ({
  ticket: ticketName(n),
  position: n,
  remaining,
});

function sale(
  customer: string,
  preliminary: Bought | null | undefined,
  final: Bought | null,
  threshold = 1,
): Purchase {
  const soldOn =
    preliminary !== undefined && sellsOnPreliminary(preliminary, threshold)
      ? 'preliminary'
      : 'final';
  return {
    retailer: 0,
    customer,
    soldOn,
    preliminary,
    final,
    outcome: outcomeOf(soldOn, preliminary, final),
    saleMs: 1,
    finalMs: 2,
  };
}

/** Three tickets: c1 sold early and confirmed, c2 early but reissued, c3 on the final view. */
const good = (): { purchases: Purchase[]; recorded: RecordedSale[] } => ({
  purchases: [
    sale('c1', bought(0, 2), bought(0, 2)),
    sale('c2', bought(0, 2), bought(1, 1)),
    sale('c3', bought(1, 1), bought(2, 0)),
    sale('c4', null, null),
  ],
  recorded: [
    { ticket: 'T0001', customer: 'c1' },
    { ticket: 'T0002', customer: 'c2' },
    { ticket: 'T0003', customer: 'c3' },
  ],
});

const check = (
  purchases: Purchase[],
  recorded: RecordedSale[],
  left = 0,
): ReturnType<typeof audit> =>
  audit({ first: 0, stocked: 3, threshold: 1, purchases, recorded, left });

describe('the threshold rule (§4.3)', () => {
  it('sells on the preliminary view only while it leaves more than the threshold', () => {
    expect(sellsOnPreliminary(bought(0, 21), 20)).toBe(true);
    expect(sellsOnPreliminary(bought(0, 20), 20)).toBe(false);
    expect(sellsOnPreliminary(null, 0)).toBe(false);
  });

  it('classifies what the final view did to a sale', () => {
    expect(outcomeOf('preliminary', bought(3, 9), bought(3, 9))).toBe('confirmed');
    expect(outcomeOf('preliminary', bought(3, 9), bought(4, 8))).toBe('reissued');
    expect(outcomeOf('preliminary', bought(3, 9), null)).toBe('withdrawn');
    expect(outcomeOf('final', bought(3, 0), bought(4, 0))).toBe('sold');
    expect(outcomeOf('final', null, null)).toBe('sold-out');
  });
});

describe('audit', () => {
  it('passes a sale where every ticket went to exactly one customer', () => {
    const { purchases, recorded } = good();
    const a = check(purchases, recorded);
    expect(a.problems).toEqual([]);
    expect(a.ok).toBe(true);
    expect(a.outcomes).toEqual({ confirmed: 1, reissued: 1, withdrawn: 0, sold: 1, 'sold-out': 1 });
  });

  it('catches a ticket in two customers’ final views', () => {
    const { purchases, recorded } = good();
    purchases[2] = sale('c3', bought(1, 1), bought(1, 1));
    const a = check(purchases, recorded);
    expect(a.ok).toBe(false);
    expect(a.soldTwice).toEqual(['T0002']);
  });

  it('catches an oversell and a ticket that was never stocked', () => {
    const { purchases, recorded } = good();
    purchases.push(sale('c5', bought(3, 0), bought(3, 0)));
    recorded.push({ ticket: 'T0004', customer: 'c5' });
    const a = check(purchases, recorded);
    expect(a.ok).toBe(false);
    expect(a.problems.join('\n')).toMatch(/oversold: 4 sold of 3/);
    expect(a.unknown).toEqual(['T0004']);
  });

  it('catches a lost ticket and one left in stock', () => {
    const { purchases, recorded } = good();
    expect(check(purchases.slice(1), recorded.slice(1)).lost).toBe(1);
    const left = check(purchases.slice(1), recorded.slice(1), 1);
    expect(left.lost).toBe(0);
    expect(left.ok).toBe(false);
    expect(left.problems.join('\n')).toMatch(/1 left in stock/);
  });

  it('catches a final view that disagrees with the state, and a sale against the rule', () => {
    const { purchases, recorded } = good();
    recorded[0] = { ticket: 'T0001', customer: 'someone else' };
    expect(check(purchases, recorded).disagreements).toHaveLength(1);

    const early = { ...sale('c3', bought(1, 1), bought(2, 0)), soldOn: 'preliminary' as const };
    const breach = check([...good().purchases.slice(0, 2), early], good().recorded);
    expect(breach.ruleBreaches).toHaveLength(1);
    expect(breach.ok).toBe(false);
  });
});

describe('flags', () => {
  it('defaults to the paper’s setting and names bad flags', () => {
    expect(parseTicketingFlags([])).toMatchObject({
      tickets: 500,
      retailers: 4,
      threshold: 20,
      runs: 5,
      delay: 0,
    });
    expect(parseTicketingFlags(['--tickets', '100', '--serve'])).toMatchObject({
      tickets: 100,
      serve: 0,
    });
    expect(() => parseTicketingFlags(['--retailers', '0'])).toThrow(/--retailers/);
    expect(() => parseTicketingFlags(['--sellers', '2'])).toThrow(/sellers/);
  });
});
