import { expect } from 'vitest';
import { runSimulation, type SimConfig, type SimResult } from '../../src/sim/simulation.js';

/** What one seed's run did under a planted bug: its violations, or the exception that ended it. */
export interface PlantedRun {
  readonly seed: number;
  readonly violations: readonly string[];
  /** The message of an exception that ended the run (a replica's invariant, or a crash). */
  readonly threw: string | null;
}

/** Runs each seed with `config` (and whatever bug the caller planted with vi.spyOn). */
export function plantedRuns(seeds: readonly number[], config: Partial<SimConfig>): PlantedRun[] {
  return seeds.map((seed) => {
    try {
      const r = runSimulation({ seed, replicas: 3, ...config });
      return { seed, violations: r.violations, threw: null };
    } catch (err) {
      return { seed, violations: [], threw: (err as Error).message };
    }
  });
}

/**
 * The named checker caught the planted bug on every run: a violation starting with `checker` (its
 * tag, e.g. '(a)' or 'op id reused'), and no run ended by an exception or by a checker that
 * itself failed, so a checker that stopped working cannot hide behind a crash or another checker.
 */
export function expectCaughtBy(runs: readonly PlantedRun[], checker: string): void {
  expect(
    runs.filter((r) => r.threw !== null).map((r) => `seed ${r.seed} threw: ${r.threw}`),
    'runs that ended in an exception',
  ).toEqual([]);
  expect(
    runs.flatMap((r) =>
      r.violations.filter((v) => v.startsWith('checker failed')).map((v) => `seed ${r.seed}: ${v}`),
    ),
    'checkers that failed',
  ).toEqual([]);
  expect(
    runs.filter((r) => !r.violations.some((v) => v.startsWith(checker))).map((r) => r.seed),
    `seeds where ${checker} did not fire`,
  ).toEqual([]);
}

/** The seeds 1..n. */
export function seeds(n: number, from = 1): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

/**
 * Seed `seed` of the contexts sweep as `npm run sim -- --replicas 5 --clients sdk --contexts
 * --shared-contexts` runs it (every fault, the WAN mix): a seed that sweep found failing becomes
 * a test through this, so that the test runs exactly the sweep's run.
 */
export function contextSweepRun(seed: number): SimResult {
  return runSimulation({
    seed,
    replicas: 5,
    faults: 'all',
    clients: 'sdk',
    contexts: true,
    sharedContexts: true,
    network: 'mix',
  });
}
