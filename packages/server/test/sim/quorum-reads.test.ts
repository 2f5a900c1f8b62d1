import { describe, expect, it } from 'vitest';
import { drawRun } from '../../src/sim/parameters.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * Strong reads by quorum (cab/quorum-reads.ts) in the simulator: one seed in four reads by quorum,
 * and every checker judges those runs as any other (the serial execution at the position read,
 * linearizability on strong-only objects, no stable answer in a minority). A replica that takes
 * one member's frontier for a majority's is caught.
 */
describe('quorum reads in the simulator', () => {
  it('catch a replica in a minority that reads from one frontier (planted)', () => {
    // Seeds where a replica cut off into a minority serves its clients' strong reads.
    for (const seed of [14, 19, 40]) {
      const planted = runSimulation({
        seed,
        replicas: 3,
        faults: 'partition',
        unsafeQuorumReadSingleAnswer: true,
      });
      expect(planted.violations.join('\n'), `seed ${seed}`).toMatch(
        /got a stable response while its replica was in a minority|\(linearizability\)/,
      );
      expect(planted.parameters.quorumReads).toBe(true);
      const sound = runSimulation({ seed, replicas: 3, faults: 'partition', quorumReads: true });
      expect(sound.violations).toEqual([]);
    }
  });

  it('draws quorum reads for some seeds and not others, and a setting overrides the draw', () => {
    const drawn = (seed: number, quorumReads?: boolean): boolean =>
      drawRun(
        {
          seed,
          replicas: 3,
          faults: 'none',
          ...(quorumReads === undefined ? {} : { quorumReads }),
        },
        3,
        'none',
        1000,
      ).params.quorumReads;
    const seeds = Array.from({ length: 40 }, (_, seed) => drawn(seed));
    expect(seeds).toContain(true);
    expect(seeds).toContain(false);
    expect(seeds.map((_, seed) => drawn(seed, false))).not.toContain(true);
    expect(seeds.map((_, seed) => drawn(seed, true))).not.toContain(false);
  });
});
