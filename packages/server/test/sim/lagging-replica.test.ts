import { describe, expect, it } from 'vitest';
import { catchUpGrowth, type CatchUpWork } from '../../src/sim/catch-up.js';
import { runSimulation, type SimConfig } from '../../src/sim/simulation.js';

/**
 * A replica cut off for most of the workload, then healed (faults 'lag'): it catches up on nearly
 * everything at once. The same seed with a lag four times longer must cost no more work per op
 * (catchUpGrowth), or a replica a few thousand ops behind stays busy for minutes. The hold
 * threshold is set low (64 ops instead of 1024) so that lags the simulator can afford are many
 * times it; the mechanism is the one the runtime uses.
 *
 * Seeds whose runs have contention enough for a re-executed tail to show: with the hold removed
 * (`unsafeSpeculateWhileBehind`), their executions per op grow with the lag, and the checker says so.
 * And the hold must not cost availability: cut off again while it catches up ('lag-cut'), the
 * replica answers its clients once the catch-up stalls (the minority-partition checker bounds it).
 */
// (Seeds 3 and 5 served until membership changes moved the runs' timing: seed 3's re-executed
// tail no longer shows, and seed 5's long run, like seed 12's, gave the linearizability checker a
// history it could not decide within its search limit — it does now, settling unanswered ops by the
// committed order, and both pass.)
const SEEDS = [4, 9, 11];
const SHORT_MS = 1_500;
const LONG_MS = 6_000;

function catchUp(config: Omit<SimConfig, 'replicas' | 'faults'>): CatchUpWork {
  const r = runSimulation({ ...config, replicas: 3, faults: 'lag', catchUpHold: 64 });
  expect(r.violations, `seed ${config.seed}`).toEqual([]);
  expect(r.stats.catchUp, `seed ${config.seed}: the lagging replica was measured`).not.toBeNull();
  return r.stats.catchUp!;
}

describe('a replica that fell behind catches up', () => {
  it('with work per op that does not grow with the lag', () => {
    for (const seed of SEEDS) {
      const short = catchUp({ seed, workloadMs: SHORT_MS });
      const long = catchUp({ seed, workloadMs: LONG_MS });
      expect(catchUpGrowth(short, long), `seed ${seed}`).toEqual([]);
    }
  });

  it('and the checker sees it grow when the tentative tail runs with every batch (planted)', () => {
    for (const seed of SEEDS) {
      const unsafe = { seed, unsafeSpeculateWhileBehind: true };
      const short = catchUp({ ...unsafe, workloadMs: SHORT_MS });
      const long = catchUp({ ...unsafe, workloadMs: LONG_MS });
      expect(catchUpGrowth(short, long).join('\n'), `seed ${seed}`).toMatch(
        /catch-up: executions per op grew/,
      );
    }
  });

  it('cut off again mid-catch-up, it stops holding speculation and answers its clients', () => {
    for (const seed of [1, 2, 4]) {
      const r = runSimulation({
        seed,
        replicas: 3,
        faults: 'lag-cut',
        workloadMs: LONG_MS,
        catchUpHold: 64,
      });
      expect(r.violations, `seed ${seed}`).toEqual([]);
    }
  });

  it('and the minority checker sees a replica that goes on holding (planted)', () => {
    for (const seed of [1, 2, 4]) {
      const r = runSimulation({
        seed,
        replicas: 3,
        faults: 'lag-cut',
        workloadMs: LONG_MS,
        catchUpHold: 64,
        unsafeHoldWhileCutOff: true,
      });
      expect(r.violations.join('\n'), `seed ${seed}`).toMatch(
        /\(partition\) replica \d held speculation 200 ms into a minority partition/,
      );
    }
  });

  it('a catch-up measure that did not lag three times longer is refused, not passed', () => {
    const w = { replica: 0, ops: 100, executions: 100, lackChecks: 10, messages: 30, perOp: 1.4 };
    expect(catchUpGrowth(w, { ...w, ops: 200 })).toEqual([
      'catch-up: the long lag (200 ops) is not 3 times the short one (100)',
    ]);
    expect(catchUpGrowth(w, { ...w, ops: 400, executions: 400 })).toEqual([]);
    expect(catchUpGrowth(w, { ...w, ops: 400, lackChecks: 400 })[0]).toMatch(
      /lackChecks per op grew from 0.10 \(lag 100 ops\) to 1.00 \(lag 400 ops\)/,
    );
  });
});
