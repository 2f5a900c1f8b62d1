import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * The SMR baseline as `creek start --speculation off` runs it (SimConfig.smr): no replica
 * speculates and every update is ordered on arrival. Its runs are judged by every checker, and
 * none speculates (replica/no-speculation.test.ts shows the ordering on arrival itself).
 */
describe('the SMR baseline in the simulator', () => {
  it('keeps every guarantee with every fault, 3 and 5 replicas', () => {
    for (const [replicas, seeds] of [
      [3, [1, 2, 3, 4, 5, 6]],
      [5, [1, 2]],
    ] as const)
      for (const seed of seeds) {
        const r = runSimulation({ seed, replicas, faults: 'all', smr: true });
        expect(r.parameters.execution.speculative).toBe(false);
        expect(r.violations, `seed ${seed}, ${replicas} replicas`).toEqual([]);
        expect(r.stats.speculated).toBe(0);
      }
  });
});
