import { describe, expect, it } from 'vitest';
import { median, quantile, quantileOfSorted } from '../src/stats.js';

describe('benchmark statistics', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('quantiles by nearest rank', () => {
    expect(quantileOfSorted(hundred, 0.5)).toBe(50);
    expect(quantileOfSorted(hundred, 0.99)).toBe(99);
    expect(quantileOfSorted(hundred, 1)).toBe(100);
    expect(quantileOfSorted(hundred, 0)).toBe(1);
    expect(quantileOfSorted(new Float64Array([3, 7]), 0.5)).toBe(3);
    expect(quantileOfSorted([], 0.5)).toBeNaN();
  });

  it('sorts unsorted values first, without changing them', () => {
    const values = [5, 1, 4, 2, 3];
    expect(quantile(values, 0.8)).toBe(4);
    expect(values).toEqual([5, 1, 4, 2, 3]);
  });

  it('median: the middle, or the upper middle of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(3);
  });
});
