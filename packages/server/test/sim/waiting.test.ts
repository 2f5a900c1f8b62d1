import { describe, expect, it } from 'vitest';
import { runSimulation, type SimFrame } from '../../src/sim/simulation.js';

/**
 * What a replica waits for (HostStatus.waiting), seen in the simulator's frames under its faults:
 * a wiped replica waits for its peers by name while it learns, a replica cut off waits for a
 * quorum, and once the run is quiescent nobody waits. The two-wipes scenario itself, which never
 * quiesces, is swept in test/host/stuck.test.ts.
 */
describe('waiting, under the simulator faults', () => {
  it('names the peers a replica waits for while faults last, and is null once the run settles', () => {
    const seen = new Set<string>();
    let wipes = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const frames: SimFrame[] = [];
      const r = runSimulation({
        seed,
        replicas: 3,
        faults: 'crash',
        frames: { everyMs: 20, onFrame: (f) => frames.push(f) },
      });
      expect(r.ok, r.violations.join('\n')).toBe(true);
      wipes += r.stats.wipes;
      for (const f of frames)
        for (const x of f.replicas) {
          if (!x.up || x.waiting === undefined || x.waiting === null) continue;
          seen.add(x.waiting.for);
          // Never itself, and only replicas of the cluster.
          expect(x.waiting.peers).not.toContain(x.id);
          for (const p of x.waiting.peers) expect([0, 1, 2]).toContain(p);
        }
      const last = frames.at(-1)!;
      for (const x of last.replicas.filter((y) => y.up))
        expect(x.waiting, `seed ${seed}`).toBeNull();
    }
    // The faults made replicas wait, wiped ones for their peers among them.
    expect(wipes).toBeGreaterThan(0);
    expect(seen).toContain('peer-summaries');
    expect(seen).toContain('quorum');
  });
});
