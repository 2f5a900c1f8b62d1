import { afterEach, describe, expect, it, vi } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import { LiveQueries } from '@creek/replica/host/live-queries.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { expectCaughtBy, plantedRuns } from './planted.js';

/**
 * Live queries in the simulator (SimConfig.liveQueries): every replica watches two keys and a
 * queue's size through the same LiveQueries the runtime uses, under every fault; at the end of a
 * quiescent run each watch's last tentative and stable results equal the read on the final state.
 */
const SEEDS = Array.from({ length: 24 }, (_, i) => i + 1);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('live queries in the simulator', () => {
  it('every fault mode: the last results pushed are the final state', () => {
    for (const faults of ['all', 'partition', 'crash'] as const)
      for (const seed of SEEDS.slice(0, 8)) {
        const r = runSimulation({ seed, replicas: 3, faults, liveQueries: true });
        expect(r.violations, `seed ${seed} ${faults}`).toEqual([]);
      }
  });

  it('a stable result is the read on the committed state, which ops stranded for good never reach', () => {
    // Each of these runs ends with an op of a dead origin stranded tentative for good on a watched
    // key (it follows an op of its origin that no survivor received): the final state holds it, the
    // committed state never will, and the stable side showed the committed value all along.
    for (const [seed, faults] of [
      [103, 'all'],
      [135, 'all'],
      [337, 'all'],
      [136, 'crash'],
    ] as const) {
      const r = runSimulation({ seed, replicas: 3, faults, liveQueries: true });
      expect(r.violations, `seed ${seed} --faults ${faults}`).toEqual([]);
    }
  });

  it('a planted bug is caught: a replica that reports no changed keys leaves watches stale', () => {
    vi.spyOn(Replica.prototype, 'takeChangedKeys').mockReturnValue(new Set());
    // Caught by the live-query checker on every seed.
    expectCaughtBy(plantedRuns(SEEDS, { faults: 'none', liveQueries: true }), 'live query:');
  });

  it('a planted bug is caught: a read whose key changed while it ran is not run again', () => {
    // Drop the "again" mark: a change that lands while the read is in flight is lost.
    const run = (LiveQueries.prototype as unknown as { changed(keys: Set<string>): void }).changed;
    vi.spyOn(LiveQueries.prototype, 'changed').mockImplementation(function (
      this: LiveQueries<number>,
      keys,
    ) {
      const self = this as unknown as {
        byConn: Map<number, Map<string, { sides: Record<string, { inFlight: number | null }> }>>;
      };
      // Changes while any read is in flight are dropped.
      for (const m of self.byConn.values())
        for (const w of m.values())
          for (const side of Object.values(w.sides)) if (side.inFlight !== null) return;
      run.call(this, keys as Set<string>);
    });
    // Caught by the live-query checker on 7 seeds of 24 (33 of seeds 1–100): those where a change
    // lands while a read is in flight and no later change runs the read again. These are the first 9.
    expectCaughtBy(
      plantedRuns([1, 6, 8, 9, 14, 20, 24, 26, 29], { faults: 'none', liveQueries: true }),
      'live query:',
    );
  });
});
