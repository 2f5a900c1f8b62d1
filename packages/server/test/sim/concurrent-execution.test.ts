import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

/**
 * The replica core's concurrent execution (replica/concurrent-execution.test.ts) across seeded
 * simulated runs: slots, conflicts and mirror reads under every checker.
 */
describe('concurrent execution in the simulator', () => {
  it('every seed runs executions concurrently, and conflicts happen, with every checker passing', () => {
    const results = Array.from({ length: 16 }, (_, i) =>
      runSimulation({ seed: 7009 + i, replicas: 3 }),
    );
    expect(results.filter((r) => !r.ok).map((r) => `${r.seed}: ${r.violations[0]}`)).toEqual([]);
    expect(results.filter((r) => r.stats.aheadExecutions === 0).map((r) => r.seed)).toEqual([]);
    expect(results.reduce((s, r) => s + r.stats.aheadConflicts, 0)).toBeGreaterThan(100);
    expect(new Set(results.map((r) => r.parameters.execution.slots)).size).toBeGreaterThan(2);
  });

  it('seeds whose first executions read a mirror of the store pass every checker, stale reads included', () => {
    const results = Array.from({ length: 24 }, (_, i) =>
      runSimulation({ seed: 8001 + i, replicas: 3 }),
    );
    expect(results.filter((r) => !r.ok).map((r) => `${r.seed}: ${r.violations[0]}`)).toEqual([]);
    const mirrored = results.filter((r) => r.parameters.execution.mirror);
    expect(mirrored.length).toBeGreaterThan(5);
    expect(mirrored.every((r) => r.stats.mirrorExecutions > 0)).toBe(true);
    expect(mirrored.reduce((s, r) => s + r.stats.staleMirrorReads, 0)).toBeGreaterThan(0);
  });

  it("catches a result computed on a mirror and accepted without validating what the worker read (planted 'trust-mirror-reads')", () => {
    // The reads recorded as what the job's position sees when the result is back, not as what the
    // worker read: a result from a superseded version passes, and the state differs from the
    // serial execution of the committed order (b), and between replicas (divergence).
    const runs = plantedRuns([1, 2, 3, 4], { unsafeTrustMirrorReads: true });
    expectCaughtBy(runs, '(b)');
    expectCaughtBy(runs, '(divergence)');
  });
});
