import { runSimulation, type SimResult } from '../../src/sim/simulation.js';

/** Runs a range of seeds and returns a readable line per failure, with the command that replays it. */
export function failingSeeds(replicas: number, first: number, count: number): string[] {
  const failures: string[] = [];
  for (let seed = first; seed < first + count; seed++) {
    let result: SimResult;
    try {
      result = runSimulation({ seed, replicas });
    } catch (err) {
      failures.push(
        `seed ${seed}: crashed: ${(err as Error).message} — npm run sim -- --seed ${seed} --replicas ${replicas}`,
      );
      continue;
    }
    if (!result.ok) {
      failures.push(
        `seed ${seed}: ${result.violations[0]} — npm run sim -- --seed ${seed} --replicas ${replicas} --verbose`,
      );
    }
  }
  return failures;
}
