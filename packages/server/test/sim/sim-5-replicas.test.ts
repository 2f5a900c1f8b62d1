import { expect, it } from 'vitest';
import { failingSeeds } from './seeds.js';

it('150 seeds with 5 replicas keep every guarantee', () => {
  expect(failingSeeds(5, 10_001, 150)).toEqual([]);
});
