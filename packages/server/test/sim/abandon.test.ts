import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';

describe('abandoned ops in the simulator', () => {
  it('seed 180: an abandon committed ahead of its op, whose answer was lost in a crash, keeps the op from running', () => {
    // Found by `npm run sim -- --seeds 2000 --replicas 3`: checker (f) took the probe's missing
    // increment for a lost op, since the abandon's client never heard the answer. (f) now reads
    // the committed order: an abandon ahead of every copy of the op means it never applies.
    const r = runSimulation({ seed: 180, replicas: 3, faults: 'all' });
    expect(r.violations).toEqual([]);
    expect(r.stats.abandons).toBeGreaterThan(0);
  });
});
