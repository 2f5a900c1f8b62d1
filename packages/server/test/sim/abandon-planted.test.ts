import { describe, expect, it, vi } from 'vitest';
import type * as SessionDedupe from '@creek/replica/core/session-dedupe.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

/**
 * A planted bug in `creek.abandon`: it answers "abandoned" without writing the record that keeps
 * the op from running later, so an op its client was told will never take effect still can. The
 * checkers must catch it: the reference interpreter, which implements the rule on its own, answers
 * the abandon otherwise (c), and an abandoned exactly-once probe is found applied (f).
 */
vi.mock('@creek/replica/core/session-dedupe.js', async (importOriginal) => {
  const real = await importOriginal<typeof SessionDedupe>();
  return {
    ...real,
    abandon: () => ({ writes: [], outcome: { ok: true, value: { abandoned: true } } }),
  };
});

describe('the simulator catches a planted bug in creek.abandon', () => {
  it('an abandon that does not stop the op is caught on seeds where clients abandon ops', () => {
    // Seeds whose runs (3 replicas, every fault) have clients abandoning ops: 21 of seeds 1–100,
    // with (c) on 19 of them and (f) on 4.
    for (const seed of [8, 16, 36, 45])
      expect(runSimulation({ seed, replicas: 3, faults: 'all' }).stats.abandons).toBeGreaterThan(0);
    // (c) on every one of them, and (f) on seeds 16 and 36, whose abandoned ops were exactly-once
    // probes.
    expectCaughtBy(plantedRuns([8, 16, 36, 45], { faults: 'all' }), '(c)');
    expectCaughtBy(plantedRuns([16, 36], { faults: 'all' }), '(f)');
  });
});
