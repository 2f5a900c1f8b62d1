import { describe, expect, it } from 'vitest';
import { defineApp } from '@creek/app';
import { overdrawApp } from '../../src/sim/invariant-reports.js';
import { PLANTED_BUGS } from '../../src/sim/planted-bugs.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { simOps } from '../../src/sim/workload.js';
import { expectCaughtBy, plantedRuns, seeds } from './planted.js';

/**
 * SimConfig.invariants: replicas check the app's invariants on their finalized state after each
 * op they finalize (ReplicaOptions.checkInvariants), and the run fails naming the invariant, the
 * op and the committed position of each one broken.
 */
describe('invariants checked on the finalized state', () => {
  it('hold in runs of the simulator app under every fault, and checking them draws nothing', () => {
    for (const seed of seeds(6)) {
      const plain = runSimulation({ seed, replicas: 3, faults: 'all' });
      const checked = runSimulation({ seed, replicas: 3, faults: 'all', invariants: true });
      expect(checked.violations, `seed ${seed}`).toEqual([]);
      // The same run: the same parameters, order and counts.
      expect(checked.parameters, `seed ${seed}`).toEqual(plain.parameters);
      expect(checked.committedOrder, `seed ${seed}`).toEqual(plain.committedOrder);
      expect(checked.stats, `seed ${seed}`).toEqual(plain.stats);
    }
  });

  it('catch the planted overdraft, naming the invariant, the op and the committed position', () => {
    // Seeds with at least two accounts (workload keys > 2): with one, a transfer is from an
    // account to itself and cannot overdraw it.
    const runs = plantedRuns(seeds(12), { faults: 'all', ...PLANTED_BUGS.overdraw.config });
    const accounts = seeds(12).filter(
      (seed) => runSimulation({ seed, replicas: 3 }).parameters.workload.keys > 2,
    );
    expect(accounts.length).toBeGreaterThanOrEqual(6);
    const withAccounts = runs.filter((r) => accounts.includes(r.seed));
    expectCaughtBy(withAccounts, "(invariant) 'no-overdraft'");
    for (const r of withAccounts) {
      const found = r.violations.find((v) => v.startsWith('(invariant)'))!;
      expect(found).toMatch(
        /^\(invariant\) 'no-overdraft' broken by the finalized state after transfer \d+\.\d+ at committed position \d+; reported by replicas? [\d, ]+, first at [\d.]+ ms$/,
      );
      // Nothing else is wrong with the run: the op is broken, not the replicas.
      expect(r.violations.filter((v) => !v.startsWith('(invariant)'))).toEqual([]);
    }
  });

  it('are not checked unless asked for', () => {
    // The overdrawing app, given as the run's app, without `invariants`: seed 3 overdraws.
    const r = runSimulation({ seed: 3, replicas: 3 }, overdrawApp());
    expect(r.violations).toEqual([]);
  });

  it('refuse a run whose app has none', () => {
    expect(() =>
      runSimulation({ seed: 1, replicas: 3, invariants: true }, defineApp(simOps)),
    ).toThrow(/no invariants to check/);
  });
});
