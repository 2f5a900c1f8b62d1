import { describe, expect, it } from 'vitest';
import { PLANTED_BUGS } from '../../src/sim/planted-bugs.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

/**
 * A dead origin's strong ops are cast on its behalf (core/liveness.ts, adoption). A strong op's
 * causal context holds its origin's previous strong op only once that one is delivered, so
 * adopting them one delivery at a time took a consensus round trip per op: on WAN links a dead
 * origin's backlog of a hundred strong ops outlasted the run's settling time. Chained adoption
 * casts each behind the one adopted before it.
 */
describe('adopting a dead origin’s strong ops', () => {
  it('commits a dead origin’s backlog of strong ops across regions before the run settles', () => {
    // 5 replicas, the WAN mix: replica 1 is lost for good with about 150 strong ops of its own on
    // its peers' tentative lists (us-eu stretched ×3.07). Adopted one delivery at a time, 140 of
    // them were still tentative 20 s after the faults ended.
    for (const seed of [494]) {
      const r = runSimulation({ seed, replicas: 5, network: 'mix' });
      expect(r.parameters.network.wan, `seed ${seed} runs on a WAN profile`).toBeDefined();
      expect(r.stats.lost, `seed ${seed} loses a replica for good`).toBe(1);
      expect(r.violations, `npm run sim -- --seed ${seed} --replicas 5`).toEqual([]);
      expect(r.stats.adopted).toBeGreaterThan(50);
    }
  });

  it('catches a chained adoption cast without its predecessor (planted)', () => {
    // Planted: CAB takes the origin's last delivered strong op as the predecessor of an op adopted
    // behind one not delivered yet, so the origin's chain is cast out of order and its ops never
    // commit: the run does not settle.
    const seeds = [2, 4, 5, 20, 23, 25];
    expectCaughtBy(
      plantedRuns(seeds, PLANTED_BUGS['adopt-unchained'].config),
      'liveness: not quiescent',
    );
    for (const seed of seeds)
      expect(
        runSimulation({ seed, replicas: 3, faults: 'crash' }).violations,
        `npm run sim -- --seed ${seed} --faults crash`,
      ).toEqual([]);
  });
});
