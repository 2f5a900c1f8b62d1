import { expect, it } from 'vitest';
import { failingSeeds } from './seeds.js';

it('150 seeds with 3 replicas keep every guarantee', () => {
  expect(failingSeeds(3, 1, 150)).toEqual([]);
});
