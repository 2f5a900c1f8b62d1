import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HybridLogicalClock, hlcToMillis } from '@creek/replica/core/hlc.js';

describe('HybridLogicalClock', () => {
  it('starts at the initial value', () => {
    expect(new HybridLogicalClock().current()).toBe(0);
    expect(new HybridLogicalClock(42).current()).toBe(42);
  });

  it('follows physical time, in microseconds', () => {
    const clock = new HybridLogicalClock();
    expect(clock.next(1_000)).toBe(1_000_000);
    expect(clock.next(2_000)).toBe(2_000_000);
    expect(clock.next(2_000.5)).toBe(2_000_500);
    expect(clock.current()).toBe(2_000_500);
  });

  it('issues distinct increasing timestamps within one millisecond', () => {
    const clock = new HybridLogicalClock();
    const a = clock.next(5_000);
    const b = clock.next(5_000);
    const c = clock.next(5_000);
    expect([a, b, c]).toEqual([5_000_000, 5_000_001, 5_000_002]);
  });

  it('stays monotonic when the physical clock goes backwards', () => {
    const clock = new HybridLogicalClock();
    const t1 = clock.next(2_000);
    const t2 = clock.next(1_000);
    const t3 = clock.next(1_500);
    expect(t1).toBe(2_000_000);
    expect(t2).toBe(2_000_001);
    expect(t3).toBe(2_000_002);
    // Once physical time catches up, it takes over again.
    expect(clock.next(3_000)).toBe(3_000_000);
  });

  it('observe() moves the clock past a remote timestamp', () => {
    const clock = new HybridLogicalClock();
    clock.next(1_000);
    clock.observe(9_000_000);
    expect(clock.current()).toBe(9_000_000);
    const t = clock.next(1_001);
    expect(t).toBeGreaterThan(9_000_000);
    expect(t).toBe(9_000_001);
  });

  it('observe() of an older timestamp changes nothing', () => {
    const clock = new HybridLogicalClock();
    clock.next(5_000);
    clock.observe(1);
    expect(clock.current()).toBe(5_000_000);
    expect(clock.next(5_000)).toBe(5_000_001);
  });

  it('physical time ahead of observed timestamps wins', () => {
    const clock = new HybridLogicalClock();
    clock.observe(3_000_000);
    expect(clock.next(10_000)).toBe(10_000_000);
  });

  it('for any interleaving of next/observe, next() strictly increases past every observed value', () => {
    const command = fc.oneof(
      fc.record({ kind: fc.constant('next' as const), nowMs: fc.integer({ min: 0, max: 1e9 }) }),
      fc.record({
        kind: fc.constant('next' as const),
        nowMs: fc.double({ min: 0, max: 1e9, noNaN: true }),
      }),
      fc.record({
        kind: fc.constant('observe' as const),
        remote: fc.integer({ min: 0, max: 1e12 }),
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.array(command, { maxLength: 60 }),
        (initial, commands) => {
          const clock = new HybridLogicalClock(initial);
          let lastIssued = -Infinity;
          let highestSeen = initial;
          for (const c of commands) {
            if (c.kind === 'observe') {
              clock.observe(c.remote);
              highestSeen = Math.max(highestSeen, c.remote);
              expect(clock.current()).toBe(Math.max(highestSeen, lastIssued));
            } else {
              const t = clock.next(c.nowMs);
              expect(Number.isInteger(t)).toBe(true);
              expect(t).toBeGreaterThan(lastIssued);
              expect(t).toBeGreaterThan(highestSeen);
              expect(t).toBeGreaterThanOrEqual(Math.floor(c.nowMs * 1000));
              expect(clock.current()).toBe(t);
              lastIssued = t;
            }
          }
        },
      ),
    );
  });
});

describe('hlcToMillis', () => {
  it('returns the millisecond part of a timestamp', () => {
    expect(hlcToMillis(0)).toBe(0);
    expect(hlcToMillis(999)).toBe(0);
    expect(hlcToMillis(1_000)).toBe(1);
    expect(hlcToMillis(1_700_000_000_123_456)).toBe(1_700_000_000_123);
  });

  it('inverts next() when the clock is not ahead of physical time', () => {
    const clock = new HybridLogicalClock();
    expect(hlcToMillis(clock.next(1_700_000_000_123))).toBe(1_700_000_000_123);
    // Logical increments within a millisecond stay within that millisecond.
    expect(hlcToMillis(clock.next(1_700_000_000_123))).toBe(1_700_000_000_123);
  });
});
