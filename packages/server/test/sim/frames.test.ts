import { describe, expect, it } from 'vitest';
import { runSimulation, type FrameOpLife, type SimFrame } from '../../src/sim/simulation.js';

describe('frames of a run (what the visualizer replays)', () => {
  it('come every everyMs, change nothing in the run, and end where the run ends', () => {
    const frames: SimFrame[] = [];
    let ops: readonly FrameOpLife[] = [];
    const watched = runSimulation({
      seed: 11,
      replicas: 3,
      frames: { everyMs: 10, onFrame: (f) => frames.push(f), onOps: (o) => (ops = o) },
    });
    const plain = runSimulation({ seed: 11, replicas: 3 });
    expect([...watched.committedOrder]).toEqual([...plain.committedOrder]);
    expect(frames.length).toBeGreaterThan(50);
    for (let k = 1; k < frames.length; k++)
      expect(frames[k]!.at).toBeGreaterThanOrEqual(frames[k - 1]!.at);
    const last = frames.at(-1)!;
    const r0 = last.replicas[0]!;
    expect(r0.committed).toBe(watched.committedOrder.length);
    expect(r0.committedTail.map((o) => o.id)).toEqual(watched.committedOrder.slice(-8));
    // Somewhere in the run a partition was in force, and someone led.
    expect(frames.some((f) => f.partition !== null)).toBe(true);
    expect(frames.some((f) => f.replicas.some((r) => r.role === 'leader'))).toBe(true);
    // Messages in flight: each between two replicas, sent by the frame and arriving after it.
    const busy = frames.filter((f) => f.messages.length > 0);
    expect(busy.length).toBeGreaterThan(frames.length / 2);
    for (const f of busy) {
      expect(f.messagesInFlight).toBeGreaterThanOrEqual(f.messages.length);
      for (const m of f.messages) {
        expect(m.from).not.toBe(m.to);
        expect(m.sentAt).toBeLessThanOrEqual(f.at);
        expect(m.arriveAt).toBeGreaterThanOrEqual(f.at);
        expect(m.kind).toMatch(/^(gossip|paxos) \w+$/);
      }
    }
    expect(new Set(busy.flatMap((f) => f.messages.map((m) => m.kind.split(' ')[0])))).toEqual(
      new Set(['gossip', 'paxos']),
    );
    // Recent ops: the last ones invoked, each answered after it was invoked and by the frame.
    expect(last.recentOps).toHaveLength(16);
    for (const f of frames)
      for (const o of f.recentOps) {
        expect(o.invokedAt).toBeLessThanOrEqual(f.at);
        for (const t of [o.tentativeAt, o.stableAt, o.failedAt])
          if (t !== null) {
            expect(t).toBeGreaterThanOrEqual(o.invokedAt);
            expect(t).toBeLessThanOrEqual(f.at);
          }
      }
    expect(ops.some((o) => o.strong && o.stableAt !== null)).toBe(true);
    // Every op's life at the end, the last of them those the last frame shows.
    expect(ops).toHaveLength(watched.stats.ops);
    expect(ops.slice(-16)).toEqual(last.recentOps);
    // Its counters, as its status events give them in live mode.
    expect(r0.counts.finalized).toBeGreaterThan(0);
    expect(r0.counts.executionsOfFinalized).toBeGreaterThanOrEqual(r0.counts.finalized);
  });

  it('refuses a frame period that is not a positive number of ms', () => {
    expect(() =>
      runSimulation({ seed: 1, replicas: 3, frames: { everyMs: 0, onFrame: () => undefined } }),
    ).toThrow(/frames.everyMs must be a positive number of ms/);
  });
});
