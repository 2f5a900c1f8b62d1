import { describe, expect, it } from 'vitest';
import { drawPreferredLeader } from '../../src/sim/leader-placement.js';
import { PLANTED_BUGS } from '../../src/sim/planted-bugs.js';
import { Prng } from '../../src/sim/prng.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns, seeds } from './planted.js';

/**
 * Leader placement under the simulator (cab/leader-transfer.ts, sim/leader-placement.ts): with a
 * preferred leader, leadership ends up there once the run is calm, and never goes back and forth;
 * the leadership checker catches a leader that takes leadership back after handing it over.
 */
describe('leader placement in the simulator', () => {
  // Seeds 1–30 with the planted bug's config (preferred leader 1, crashes): the checker fired on
  // 13 when this test was written, and on none without the bug; these are six of them, where
  // replica 1 is not lost for good. The others: crashes at other moments, or 50 ms delays, where
  // the checker judges nothing (LeadershipTrack.judged).
  const CAUGHT = [1, 8, 9, 12, 14, 17];

  it('with crashes, the preferred leader leads at the end and every checker passes', () => {
    for (const seed of CAUGHT) {
      const r = runSimulation({ seed, replicas: 3, faults: 'crash', preferredLeader: 1 });
      expect(r.violations, `seed ${seed}`).toEqual([]);
      expect(r.stats.leadership, `seed ${seed}`).toMatchObject({
        preferred: 1,
        agreed: true,
        finalLeader: 1,
      });
    }
  });

  it('without faults, 5 replicas: leadership moves once, to the preferred member, and stays', () => {
    for (const seed of [1, 2, 4]) {
      const r = runSimulation({ seed, replicas: 5, faults: 'none', preferredLeader: 3 });
      expect(r.violations, `seed ${seed}`).toEqual([]);
      // Node 0 wins the first election, then hands over to 3: two leaders in the whole run.
      expect(r.stats.leadership, `seed ${seed}`).toMatchObject({ changes: 2, finalLeader: 3 });
    }
  });

  it('with leader placement, a share of seeds draws a preferred leader from a stream of its own, some disagreeing', () => {
    const draws = seeds(600).map((seed) =>
      drawPreferredLeader(Prng.named(seed, 'preferred-leader'), 3),
    );
    const placed = draws.filter((d) => d !== null);
    // About one seed in three, and one of those in six with a value per replica.
    expect(placed.length).toBeGreaterThan(150);
    expect(placed.length).toBeLessThan(250);
    expect(placed.filter((d) => d.perReplica !== null).length).toBeGreaterThan(10);
    for (const d of placed) {
      expect(d.member).toBeGreaterThanOrEqual(0);
      expect(d.member).toBeLessThan(3);
    }
    // A run with leader placement uses the seed's draw, as drawn again; without, none.
    expect(
      runSimulation({ seed: 1, replicas: 3, faults: 'none', workloadMs: 200 }).parameters
        .preferredLeader,
    ).toBeNull();
    const seed = draws.findIndex((d) => d !== null) + 1;
    expect(
      runSimulation({ seed, replicas: 3, faults: 'none', workloadMs: 200, leaderPlacement: true })
        .parameters.preferredLeader,
    ).toEqual(draws[seed - 1]);
  });

  it('planted: a deposed leader that runs again at once takes leadership back (leadership checker)', () => {
    expectCaughtBy(
      plantedRuns(CAUGHT, PLANTED_BUGS['run-when-deposed'].config),
      'leadership: went back and forth',
    );
  });
});
