import { describe, expect, it } from 'vitest';
import { RememberedOps } from '@creek/replica/host/remembered-ops.js';

describe('RememberedOps: the client ops a replica remembers to answer a retry', () => {
  it('keeps the newest ones up to its capacity, forgetting the oldest first', () => {
    const ops = new RememberedOps<number>(3);
    for (let i = 1; i <= 5; i++) ops.remember(`s/${i}`, i);
    expect([1, 2, 3, 4, 5].map((i) => ops.get(`s/${i}`))).toEqual([undefined, undefined, 3, 4, 5]);
  });

  it('a key remembered again keeps its newest op, and is forgotten once, when its oldest slot is reused', () => {
    const ops = new RememberedOps<string>(2);
    ops.remember('a', 'first');
    ops.remember('a', 'again');
    expect(ops.get('a')).toBe('again');
    ops.remember('b', 'b');
    expect(ops.get('a')).toBeUndefined();
    expect(ops.get('b')).toBe('b');
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new RememberedOps(bad)).toThrow(/positive integer/);
  });
});
