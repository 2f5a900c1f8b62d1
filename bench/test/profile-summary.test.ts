import { describe, expect, it } from 'vitest';
import { OTHER, summarize, type CategoryRule, type CpuProfile } from '../src/profile-summary.js';

/** A profile from a tree of frames: [name, url, children]; samples name node ids, 100 µs apart. */
function profile(samples: number[]): CpuProfile {
  const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 6, 7] },
      { id: 2, callFrame: frame('stillValid', 'file:///r/execution.ts'), children: [3] },
      { id: 3, callFrame: frame('visible', 'file:///r/version-store.ts'), children: [4] },
      { id: 4, callFrame: frame('get'), children: [] },
      { id: 5, callFrame: frame('pump', 'file:///r/execution.ts'), children: [] },
      { id: 6, callFrame: frame('(idle)'), children: [] },
      { id: 7, callFrame: frame('pumpAll', 'file:///r/execution.ts'), children: [5] },
    ],
    startTime: 0,
    endTime: 100 * samples.length,
    samples,
    timeDeltas: samples.map(() => 100),
  };
}

const RULES: CategoryRule[] = [
  { category: 'validating', fn: /^stillValid$/ },
  { category: 'core', url: /\/r\//, broad: true },
];

describe('summarize', () => {
  it('counts a sample under the innermost frame a rule names, broad rules last', () => {
    // `get` under `visible` under `stillValid`: `visible` is in the core's files, but only a broad
    // rule names it, so the specific rule further out decides.
    const s = summarize(profile([4, 4, 3, 5, 6, 6]), RULES);
    expect(s.categories).toEqual([
      { category: 'validating', us: 300 },
      { category: 'core', us: 100 },
    ]);
    expect(s.busyUs).toBe(400);
    expect(s.idleUs).toBe(200);
  });

  it('leaves stacks no rule names as other, and ranks functions by self time', () => {
    const s = summarize(profile([4, 4, 3, 5]), [{ category: 'validating', fn: /^stillValid$/ }], 2);
    expect(s.categories).toEqual([
      { category: 'validating', us: 300 },
      { category: OTHER, us: 100 },
    ]);
    expect(s.top).toEqual([
      { fn: 'get', at: '', us: 200 },
      { fn: 'visible', at: 'version-store.ts', us: 100 },
    ]);
  });
});
