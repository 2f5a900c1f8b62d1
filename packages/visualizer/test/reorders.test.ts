import { runSimulation, type SimFrame } from '@creek/server/sim';
import { describe, expect, it } from 'vitest';
import { shownOrder } from '../src/page/render.js';
import { jumpedAhead, MOVED_MS, RecentReorders } from '../src/page/reorders.js';

describe('reorders between two looks at a replica’s order', () => {
  it('marks an op that moved ahead of one it followed', () => {
    // d committed ahead of c: a reorder; the others kept their order.
    expect(jumpedAhead(['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'd', 'c', 'e'])).toEqual(
      new Set(['d']),
    );
  });

  it('marks an op that arrived ahead of ops already listed, not one that came in behind them', () => {
    expect(jumpedAhead(['a', 'c'], ['a', 'b', 'c', 'z'])).toEqual(new Set(['b']));
  });

  it('sees nothing when the window just slides on', () => {
    expect(jumpedAhead(['a', 'b', 'c', 'd'], ['b', 'c', 'd', 'e', 'f'])).toEqual(new Set());
    expect(jumpedAhead([], ['a', 'b'])).toEqual(new Set());
  });

  it('keeps a live reorder marked for MOVED_MS, per replica', () => {
    const r = new RecentReorders();
    expect(r.see(0, ['a', 'b'], 0)).toEqual(new Set());
    expect(r.see(0, ['b', 'a'], 10)).toEqual(new Set(['b']));
    expect(r.see(1, ['b', 'a'], 10)).toEqual(new Set()); // replica 1's first look
    expect(r.see(0, ['b', 'a'], 10 + MOVED_MS - 1)).toEqual(new Set(['b']));
    expect(r.see(0, ['b', 'a'], 10 + MOVED_MS)).toEqual(new Set());
  });

  it('finds reorders where ops from several replicas interleave, none where one replica is alone', () => {
    const framesWithMoves = (replicas: number): number => {
      const frames: SimFrame[] = [];
      runSimulation({
        seed: 5,
        replicas,
        faults: 'none',
        frames: { everyMs: 10, onFrame: (f) => frames.push(f) },
      });
      let n = 0;
      for (let k = 1; k < frames.length; k++)
        if (
          frames[k]!.replicas.some(
            (r, i) => jumpedAhead(shownOrder(frames[k - 1]!.replicas[i]!), shownOrder(r)).size > 0,
          )
        )
          n++;
      return n;
    };
    expect(framesWithMoves(3)).toBeGreaterThan(0);
    // One replica orders its own ops by its own clock: nothing ever lands ahead of another.
    expect(framesWithMoves(1)).toBe(0);
  });
});
