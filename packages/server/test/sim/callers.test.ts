import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ExecutionJob } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { CallerSightings } from '../../src/sim/callers.js';
import { runSimulation, type SimConfig } from '../../src/sim/simulation.js';

/**
 * Every simulated run has users: each client session is one user's (or anonymous), drawn from a
 * stream of its own, and every op carries its caller. Checker (u) holds every replica, every
 * execution and every re-execution of an op to the one caller its client invoked it as; these
 * tests show it passes on correct replicas and catches replicas that lose the caller.
 */
afterEach(() => vi.restoreAllMocks());

const SEEDS = [1, 2, 3, 4, 5, 6];

function callerViolations(config: Omit<SimConfig, 'seed'>, seeds = SEEDS): string[] {
  return seeds.flatMap((seed) =>
    runSimulation({ seed, ...config }).violations.filter((v) => v.startsWith('(u)')),
  );
}

describe('the caller of every op (tx.user) in the simulator', () => {
  it('is the same everywhere on correct replicas, and most ops have a signed-in one', () => {
    const callers = new Map<string, number>();
    const saw = CallerSightings.prototype.saw;
    vi.spyOn(CallerSightings.prototype, 'saw').mockImplementation(function (
      this: CallerSightings,
      ...args: Parameters<CallerSightings['saw']>
    ) {
      const who = args[4] === 'anonymous' ? 'anonymous' : 'signed in';
      callers.set(who, (callers.get(who) ?? 0) + 1);
      saw.apply(this, args);
    });
    const runs = SEEDS.map((seed) => runSimulation({ seed, replicas: 3, faults: 'all' }));
    expect(runs.flatMap((r) => r.violations)).toEqual([]);
    expect(callers.get('signed in') ?? 0).toBeGreaterThan(callers.get('anonymous') ?? 0);
  });

  it('catches replicas that drop the caller of the ops gossip brings them', () => {
    const v = callerViolations({ replicas: 3, faults: 'none', unsafeDropGossipedUsers: true });
    expect(v.length).toBeGreaterThan(0);
    expect(v[0]).toMatch(/has two callers: .* as anonymous/);
  });

  it('catches an executor that loses the caller when it runs an op again', () => {
    const execute = InlineExecutor.prototype.execute;
    vi.spyOn(InlineExecutor.prototype, 'execute').mockImplementation(function (
      this: InlineExecutor,
      job: ExecutionJob,
    ) {
      if (job.retry !== true) return execute.call(this, job);
      const { user: _, ...anonymous } = job;
      return execute.call(this, anonymous);
    });
    const v = callerViolations({ replicas: 3, faults: 'all' });
    expect(v.some((x) => /execution [2-9]\d* as anonymous/.test(x))).toBe(true);
  });
});
