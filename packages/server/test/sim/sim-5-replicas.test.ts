import { expect, it } from 'vitest';
import { failingSeeds } from './seeds.js';

// A correctness sweep, not a timing bound: on a loaded 2-core machine it has taken over 4 minutes.
it('150 seeds with 5 replicas keep every guarantee', { timeout: 600_000 }, () => {
  expect(failingSeeds(5, 10_001, 150)).toEqual([]);
});
