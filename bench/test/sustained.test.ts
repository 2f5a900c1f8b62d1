import { describe, expect, it } from 'vitest';
import { acrossRounds, sustainedThroughput, type LadderWindow } from '../src/sustained.js';

const RULE = { p99Factor: 10, keepUp: 0.85 };

/** A window that kept up, with these p99s (ms). */
function ok(offered: number, weakP99 = 2, paymentP99 = 5): LadderWindow {
  return { offered, throughput: offered * 0.99, weakP99, paymentP99, errors: 0, saturated: null };
}

describe('sustainedThroughput', () => {
  it('is the throughput of the highest window that kept up within 10× the low-load p99', () => {
    const v = sustainedThroughput([ok(100), ok(150, 3), ok(225, 15), ok(338, 25)], RULE);
    expect(v.weakBound).toBe(20);
    expect(v.paymentBound).toBe(50);
    expect(v.sustained).toBeCloseTo(225 * 0.99);
    expect(v.offered).toBe(225);
    expect(v.reasons).toEqual([null, null, null, 'weak p99 25.0 ms > 20.0 ms']);
  });

  it('one stalled window below the top does not decide: a higher one that held counts', () => {
    const stalled = { ...ok(225), throughput: 150 };
    const v = sustainedThroughput([ok(100), ok(150), stalled, ok(338, 4)], RULE);
    expect(v.offered).toBe(338);
    expect(v.reasons[2]).toBe('67 % of the offered rate completed');
  });

  it('errors, a cut-short window and a slow Payment each fail a window', () => {
    const v = sustainedThroughput(
      [
        ok(100),
        { ...ok(150), errors: 2 },
        { ...ok(225), saturated: 'a backlog of 900 transactions' },
        ok(338, 2, 60),
      ],
      RULE,
    );
    expect(v.offered).toBe(100);
    expect(v.reasons).toEqual([
      null,
      '2 errors',
      'a backlog of 900 transactions',
      'Payment p99 60.0 ms > 50.0 ms',
    ]);
  });

  it('the low-load p99 is the lowest among windows that kept up, not a stalled first window', () => {
    const firstStalled = { ...ok(100, 1), throughput: 10 };
    const v = sustainedThroughput([firstStalled, ok(150, 3), ok(225, 29)], RULE);
    expect(v.weakBound).toBe(30);
    expect(v.offered).toBe(225);
  });

  it('a transaction kind absent from the ladder (NaN p99) bounds nothing', () => {
    const v = sustainedThroughput([ok(100, 2, NaN), ok(150, 4, NaN)], RULE);
    expect(v.paymentBound).toBeNaN();
    expect(v.offered).toBe(150);
  });

  it('a fixed bound replaces the relative one, the same for every ladder', () => {
    // 10× this ladder's low-load p99 (2 ms) would stop it at 150; a 100 ms bound does not.
    const ladder = [ok(100), ok(150), ok(225, 40), ok(338, 120)];
    expect(sustainedThroughput(ladder, RULE).offered).toBe(150);
    const v = sustainedThroughput(ladder, { ...RULE, p99BoundMs: 100 });
    expect(v.weakBound).toBe(100);
    expect(v.paymentBound).toBe(100);
    expect(v.offered).toBe(225);
    expect(v.reasons[3]).toBe('weak p99 120.0 ms > 100.0 ms');
  });

  it('nothing sustained: null', () => {
    const v = sustainedThroughput([{ ...ok(100), errors: 1 }], RULE);
    expect(v.sustained).toBeNull();
    expect(v.offered).toBeNull();
    expect(sustainedThroughput([], RULE).sustained).toBeNull();
  });
});

describe('acrossRounds', () => {
  it('the median and the spread; a round with nothing sustained counts 0', () => {
    expect(acrossRounds([900, 1300, 1000])).toEqual({ median: 1000, min: 900, max: 1300 });
    expect(acrossRounds([900, null, 1000])).toEqual({ median: 900, min: 0, max: 1000 });
    expect(acrossRounds([]).median).toBeNaN();
  });
});
