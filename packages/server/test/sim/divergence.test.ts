import { describe, expect, it } from 'vitest';
import { PLANTED_BUGS } from '../../src/sim/planted-bugs.js';
import { runSimulation, type FaultMode, type SimResult } from '../../src/sim/simulation.js';

/**
 * A nondeterministic op must never diverge replicas silently: with an op planted in the run that
 * writes which replica ran it (sim/nondeterminism.ts), the replicas catch the divergence, name the
 * op, stop the side without a majority's state, and serve no contradicting stable answers; the
 * checker that says so (sim/divergence-check.ts) fails when the comparison is planted off.
 */
function runs(
  seeds: number,
  replicas: number,
  faults: FaultMode,
  bug?: keyof typeof PLANTED_BUGS,
): SimResult[] {
  return Array.from({ length: seeds }, (_, i) =>
    runSimulation({
      seed: i + 1,
      replicas,
      faults,
      nondeterministic: true,
      ...(bug === undefined ? {} : PLANTED_BUGS[bug].config),
    }),
  );
}

describe('a planted nondeterministic op', () => {
  it.each([
    [3, 'none', 12],
    [3, 'all', 12],
    [5, 'all', 6],
  ] as const)('is caught and contained with %i replicas, faults %s', (replicas, faults, seeds) => {
    const results = runs(seeds, replicas, faults);
    for (const r of results) expect(r.violations, `seed ${r.seed}`).toEqual([]);
    // Not vacuous: the op ran and left replicas differing, and was caught, in most runs.
    const caught = results.filter((r) => (r.stats.divergence?.caughtAfterMs ?? null) !== null);
    expect(caught.length).toBeGreaterThan(seeds / 2);
    // Well within the bound once the op is committed everywhere (faults may delay it).
    if (faults === 'none')
      for (const r of caught) expect(r.stats.divergence!.caughtAfterMs).toBeLessThan(1000);
  });

  it('goes unnoticed with the comparison planted off, and the checker says so', () => {
    const results = runs(8, 3, 'none', 'skip-divergence-check');
    for (const r of results) {
      if (r.stats.divergence!.differed === 0) continue;
      expect(r.ok, `seed ${r.seed}`).toBe(false);
      expect(r.violations.join('\n')).toMatch(/\(divergence\).*knows of no divergence/);
    }
    expect(results.filter((r) => r.stats.divergence!.differed > 0).length).toBeGreaterThan(4);
  });
});
