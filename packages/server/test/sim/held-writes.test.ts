import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * A replica holds the writes of a turn that sends and answers nothing (ReplicaServer: they commit
 * with the next turn that does, or 10 ms later), so a crash can lose more of them than a commit
 * per turn would. The simulator's disk stands for it with writes that take up to 15 ms to become
 * durable (SimConfig.diskLatencyMs) and are lost in a crash until then; as in the runtime, nothing
 * leaves a replica before the writes issued before it are durable. Every checker must hold, and the
 * runs must have lost writes in crashes, or they showed nothing.
 */
describe('writes held up to 15 ms before they are durable', () => {
  it('every checker holds at 3 and 5 replicas under every fault, with writes lost in crashes', () => {
    let lostWrites = 0;
    let crashes = 0;
    for (const [replicas, seeds] of [
      [3, 16],
      [5, 6],
    ] as const) {
      for (let seed = 1; seed <= seeds; seed++) {
        const r = runSimulation({ seed, replicas, faults: 'all', diskLatencyMs: 15 });
        expect(r.parameters.diskLatencyMs).toBe(15);
        expect(
          r.violations,
          `seed ${seed}, ${replicas} replicas, diskLatencyMs 15 (runSimulation)`,
        ).toEqual([]);
        lostWrites += r.stats.lostWrites;
        crashes += r.stats.crashes;
      }
    }
    expect(crashes).toBeGreaterThan(10);
    expect(lostWrites).toBeGreaterThan(crashes);
  });

  it('the override moves no other draw of the seed', () => {
    const drawn = runSimulation({ seed: 7, replicas: 3, faults: 'none', workloadMs: 200 });
    const held = runSimulation({
      seed: 7,
      replicas: 3,
      faults: 'none',
      workloadMs: 200,
      diskLatencyMs: 15,
    });
    expect({ ...held.parameters, diskLatencyMs: 0 }).toEqual({
      ...drawn.parameters,
      diskLatencyMs: 0,
    });
  });
});
