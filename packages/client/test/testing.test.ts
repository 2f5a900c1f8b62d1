import { defineApp, op } from '@creek/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adversarialCluster } from '../src/testing/index.js';

/**
 * `@creek/client/testing`: an app's own test of its UI logic under corrections. The app hands out
 * seats, the lowest free one first; two users at two replicas take one at the same moment. Each
 * may be shown seat 1 tentatively; the final answers are two different seats, and a view that
 * showed the other's seat must end showing its own. Over a few seeds, the cluster's skewed clocks
 * and delays make that correction happen.
 */
const app = defineApp({
  'seat.take': op({
    args: z.object({ user: z.string() }),
    run: (tx, { user }) => {
      let seat = 1;
      while (tx.get(`seat/${seat}`) !== undefined) seat++;
      tx.put(`seat/${seat}`, user);
      return seat;
    },
  }),
});

/** The app's UI logic under test: what a seat badge shows as views come. */
class SeatBadge {
  shown: number | null = null;
  first: number | null = null;
  corrected = false;
  tentative(seat: number): void {
    this.first ??= seat;
    this.shown = seat;
  }
  final(seat: number): void {
    if (this.shown !== null && this.shown !== seat) this.corrected = true;
    this.shown = seat;
  }
}

describe('@creek/client/testing', () => {
  it('reorders concurrent ops across replicas, so an app sees its tentative answers corrected', async () => {
    let corrections = 0;
    for (let seed = 1; seed <= 8; seed++) {
      const { clients, close } = adversarialCluster({ app, seed });
      try {
        const badges = [new SeatBadge(), new SeatBadge()];
        const calls = [0, 1].map((i) => {
          const call = clients[i]!.invoke('seat.take', { user: `u${i}` });
          call.setCallbacks({
            onUpdate: (seat) => badges[i]!.tentative(seat),
            onFinal: (seat) => badges[i]!.final(seat),
          });
          return call;
        });
        const finals = await Promise.all(calls);
        // Whatever the order, the badges end on the final seats, which are two different ones.
        expect([...finals].sort()).toEqual([1, 2]);
        expect(badges.map((b) => b.shown)).toEqual(finals);
        corrections += badges.filter((b) => b.corrected).length;
        // The client's own tally agrees with what the badges saw first.
        const seen = [0, 1].map((i) => clients[i]!.accuracy('seat.take'));
        for (const [i, s] of seen.entries()) {
          expect(s.tentative).toBe(1);
          expect(s.confirmed).toBe(badges[i]!.first === finals[i] ? 1 : 0);
        }
      } finally {
        close();
      }
    }
    expect(corrections).toBeGreaterThan(0);
  });

  it('draws the same clocks from the same seed, and refuses bad options', () => {
    const a = adversarialCluster({ app, seed: 42 });
    const b = adversarialCluster({ app, seed: 42 });
    const c = adversarialCluster({ app, seed: 43, replicas: 5, maxSkewMs: 10 });
    try {
      expect(a.skewMs).toEqual(b.skewMs);
      expect(c.skewMs).toHaveLength(5);
      for (const ms of c.skewMs) expect(Math.abs(ms)).toBeLessThanOrEqual(10);
      expect(a.clients).toHaveLength(3);
      expect(() => a.client(3)).toThrow(/no replica 3 of 3/);
    } finally {
      for (const x of [a, b, c]) x.close();
    }
    expect(() => adversarialCluster({ app, seed: 1.5 })).toThrow(/seed must be an integer/);
    expect(() => adversarialCluster({ app, seed: 1, replicas: 0 })).toThrow(/replicas/);
    expect(() => adversarialCluster({ app, seed: 1, replicas: 16 })).toThrow(/replicas/);
    expect(() => adversarialCluster({ app, seed: 1, maxDelayMs: -1 })).toThrow(/maxDelayMs/);
    expect(() => adversarialCluster({ app, seed: 1, maxSkewMs: Infinity })).toThrow(/maxSkewMs/);
  });
});
