import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * Strong read-only ops answered by read index, without a log write (cab/read-index.ts): in every
 * simulated run their stable answers are checked against the serial execution of the committed
 * order at the position they read (checker (c)) and, on the objects only strong ops touch, by the
 * linearizability checker; in a minority partition they get no stable answer (the partition
 * checker). A leader that answers read indexes without confirming it still leads is caught.
 */
describe('strong reads by read index in the simulator', () => {
  it('catch a deposed leader that serves reads without confirming it leads (planted)', () => {
    // Seeds where the leader is cut off into a minority and its own clients read there (three of
    // the four in seeds 1–300; 269 is the other).
    const seeds = [40, 61, 246];
    for (const seed of seeds) {
      const planted = runSimulation({
        seed,
        replicas: 3,
        faults: 'partition',
        unsafeReadWithoutQuorum: true,
      });
      expect(planted.violations.join('\n'), `seed ${seed}`).toMatch(
        /strong (kv\.get|queue\.peek|queue\.size).* got a stable response while its replica was in a minority/,
      );
      expect(runSimulation({ seed, replicas: 3, faults: 'partition' }).violations).toEqual([]);
    }
  });

  it('are judged by the answer their client took when resubmitted (WAN profiles)', () => {
    // Seeds where a strong read was resubmitted to a second replica, whose copy answered first at
    // a read index far below the first copy's (the first leader took an election timeout, or a
    // replica was cut off): placed at the first copy's, the read made the committed order fail,
    // and the search gave up ("search limit exceeded"). 55 and 141 run without speculation; 30
    // runs the SDK's sessions, whose answer is the view their caller got.
    const runs = [
      { seed: 55, clients: 'model' },
      { seed: 141, clients: 'model' },
      { seed: 30, clients: 'sdk' },
    ] as const;
    for (const { seed, clients } of runs) {
      const result = runSimulation({ seed, replicas: 3, faults: 'all', network: 'mix', clients });
      expect(result.parameters.network.wan, `seed ${seed}`).not.toBeNull();
      expect(result.violations, `seed ${seed}`).toEqual([]);
    }
  });
});
