import { describe, expect, it } from 'vitest';
import { NEMESES } from '../src/schedule.js';
import { runRobustness } from './run-cli.js';

interface Report {
  ok: boolean;
  summary: string;
  runs: {
    seed: number;
    ok: boolean;
    violations: string[];
    faults: string[];
    counts: Record<string, number>;
  }[];
}

/**
 * `npm run robustness` as CI runs it: one run of real replica processes with every nemesis (each
 * kind meets the cluster at least once: the schedule starts with one of each), its history
 * checked. The verdict must be clean. What the checker catches is check.test.ts's business; this
 * asserts the runner finds nothing on a cluster that keeps its guarantees, and that it did work:
 * ops of each level were acknowledged, and every fault kind was carried out.
 */
describe('npm run robustness on real processes', () => {
  it(
    'one run with every nemesis: linearizable, nothing acknowledged lost, converged',
    { timeout: 240_000 },
    async () => {
      const r = await runRobustness(['--seed', '7', '--duration-s', '75', '--json'], 230_000);
      const report = JSON.parse(r.stdout) as Report;
      const run = report.runs[0]!;
      expect(run.violations, r.stderr.slice(-4_000)).toEqual([]);
      expect(report.ok).toBe(true);
      expect(r.code).toBe(0);
      for (const kind of NEMESES)
        expect(
          run.faults.some((f) => f.startsWith(`${kind} `)),
          kind,
        ).toBe(true);
      expect(run.counts.strong).toBeGreaterThan(100);
      expect(run.counts.weak).toBeGreaterThan(100);
      expect(run.counts.objects).toBeGreaterThan(10);
      expect(run.counts.linearizable).toBe(run.counts.objects);
      expect(run.counts.acknowledgedLost).toBe(0);
    },
  );
});
