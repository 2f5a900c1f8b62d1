import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClosingOrigins } from '@creek/replica/core/closing-origins.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

/**
 * Dead origins close (core/closing-origins.ts). Seed 135 with 3 replicas and every fault: replica
 * 1 loses its disk right after its op r1#135, which reached nobody, while r1#136..r1#140 reached
 * every peer. Before origins closed, those five stayed tentative for good at every replica (the
 * run's `stranded` count was 5, and the checkers let them be). Now the rebuilt replica 1, whose
 * new incarnation knows the old one is dead, casts a close through the log, and every replica
 * drops the five, definitely not applied.
 */
const WIPED_AFTER_A_LOST_OP = { seed: 135, replicas: 3, faults: 'all' } as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('dead origins close', () => {
  it('the ops stranded behind an op nobody received end definitely not applied', () => {
    const r = runSimulation(WIPED_AFTER_A_LOST_OP);
    expect(r.violations).toEqual([]);
    expect(r.stats.wipes).toBe(1);
    expect(r.stats.closedOrigins).toBe(1);
    expect(r.stats.droppedByClose).toBe(5);
    expect(r.stats.stranded).toBe(0);
  });

  it('with closes off (a member of the cluster runs an older release) no close is proposed, and the ops stay stranded as before', () => {
    const r = runSimulation({ ...WIPED_AFTER_A_LOST_OP, closesOff: true });
    expect(r.violations).toEqual([]);
    expect(r.stats.closedOrigins).toBe(0);
    expect(r.stats.droppedByClose).toBe(0);
    expect(r.stats.stranded).toBe(5);
  });

  it('a planted bug is caught: replicas that never apply a decided close', () => {
    // The close is decided, but no replica drops anything: the dead origin's ops stay tentative,
    // and the run never settles (quiescence waits for every op of an origin the cluster knows is
    // dead to end committed or dropped).
    vi.spyOn(ClosingOrigins.prototype, 'apply').mockImplementation(() => {});
    expectCaughtBy(plantedRuns([135], { faults: 'all' }), 'liveness: not quiescent');
  });
});
