import { describe, expect, it } from 'vitest';
import { runSimulation, type FrameOpLife } from '../../src/sim/simulation.js';

describe('abandoned ops in the simulator', () => {
  it('an abandon committed ahead of its op, whose answer was lost in a crash, keeps the op from running', () => {
    // Found by `npm run sim -- --seeds 2000 --replicas 3` (then seed 180): checker (f) took the
    // probe's missing increment for a lost op, since the abandon's client never heard the answer.
    // (f) now reads the committed order: an abandon ahead of every copy of the op means it never
    // applies. Seeds 108 and 1191 have such abandons (committed, their answer lost with their
    // replica) and abandons answered abandoned, the only two of seeds 1–1800 that have both; seed
    // 180 no longer does since removed replicas' clients leave them, nor 157 since a dead
    // origin's strong ops are adopted in a chain (their runs changed).
    for (const seed of [108, 1191]) {
      let ops: readonly FrameOpLife[] = [];
      const r = runSimulation({
        seed,
        replicas: 3,
        faults: 'all',
        frames: { everyMs: 1e9, onFrame: () => undefined, onOps: (o) => (ops = o) },
      });
      expect(r.violations, `npm run sim -- --seed ${seed} --replicas 3`).toEqual([]);
      expect(r.stats.abandoned, `seed ${seed}`).toBeGreaterThan(0);
      const committed = new Set(r.committedOrder);
      const unanswered = ops.filter(
        (o) =>
          o.op === 'creek.abandon' && o.stableAt === null && o.id !== null && committed.has(o.id),
      );
      expect(
        unanswered.length,
        `seed ${seed}: a committed abandon whose answer was lost`,
      ).toBeGreaterThan(0);
    }
  });
});
