import { describe, expect, it } from 'vitest';
import { drawRun } from '../../src/sim/parameters.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * Strong reads by quorum (cab/quorum-reads.ts) in the simulator: runs that read by quorum (asked
 * for, as the soak's rotation does) are judged by every checker as any other (the serial execution at the position read,
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

  it('reads by quorum only when asked, so the pinned seeds of the suite run as they did', () => {
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
    const seeds = Array.from({ length: 20 }, (_, seed) => seed);
    expect(seeds.map((seed) => drawn(seed))).not.toContain(true);
    expect(seeds.map((seed) => drawn(seed, true))).not.toContain(false);
  });

  it('hold every checker on seeds with every fault, 3 and 5 replicas', () => {
    for (const [replicas, seeds] of [
      [3, [1, 2, 3, 4, 5, 6]],
      [5, [1, 2, 3]],
    ] as const)
      for (const seed of seeds) {
        const r = runSimulation({ seed, replicas, faults: 'all', quorumReads: true });
        expect(r.violations, `seed ${seed}, ${replicas} replicas`).toEqual([]);
      }
  });
});
