import { describe, expect, it } from 'vitest';
import { newLiveReplica } from '../src/page/live-model.js';
import { median, Sampler } from '../src/page/samples.js';

const counts = (f: number, e: number, s: number, c: number, r: number) => ({
  finalized: f,
  executionsOfFinalized: e,
  speculated: s,
  speculatedCorrectly: c,
  rollbacks: r,
});

describe('the live charts’ samples', () => {
  it('median: nearest rank, null when empty', () => {
    expect(median([])).toBeNull();
    expect(median([5])).toBe(5);
    expect(median([9, 1, 5, 3])).toBe(3);
  });

  it('take per-second differences of the replicas’ counters, and leave gaps where nothing happened', () => {
    const rs = [newLiveReplica(0), newLiveReplica(1)];
    const sampler = new Sampler();
    rs[0]!.committed = 10;
    rs[0]!.counts = counts(10, 12, 8, 6, 2);
    rs[1]!.committed = 10;
    rs[1]!.counts = counts(10, 10, 0, 0, 0);
    const first = sampler.sample(1, rs, []);
    expect(first.committed).toEqual([null, null]); // no earlier reading
    expect(first.executionRatio).toBeNull();
    rs[0]!.committed = 25;
    rs[0]!.counts = counts(20, 24, 12, 9, 5);
    rs[1]!.committed = 10;
    rs[1]!.counts = counts(20, 30, 0, 0, 0);
    const second = sampler.sample(2, rs, [
      { at: 1.5, ms: 2, level: 'tentative' },
      { at: 1.6, ms: 4, level: 'tentative' },
      { at: 1.7, ms: 9, level: 'stable' },
    ]);
    expect(second.committed).toEqual([15, 0]);
    // (12 + 20) executions for (10 + 10) finalized ops; 3 of 4 speculations right; 3 rollbacks.
    expect(second.executionRatio).toBeCloseTo(1.6);
    expect(second.accuracy).toBeCloseTo(0.75);
    expect(second.rollbacks).toBe(3);
    expect(second.tentativeMs).toBe(2);
    expect(second.stableMs).toBe(9);
    // A second with no answers and no finalized op has gaps, not zeros.
    const third = sampler.sample(3, rs, []);
    expect(third.tentativeMs).toBeNull();
    expect(third.executionRatio).toBeNull();
  });
});
