import { describe, expect, it } from 'vitest';
import { drawRun } from '../../src/sim/parameters.js';
import { Prng } from '../../src/sim/prng.js';

/**
 * A seed replays its run exactly, and a new kind of draw must not change the runs of other seeds
 * and kinds: a named stream's draws depend on the seed and its name only.
 */
const draws = (p: Prng, n = 20): number[] => Array.from({ length: n }, () => p.next());

describe('named random streams', () => {
  it('give the same draws for the same seed and name, and others for another seed or name', () => {
    expect(draws(Prng.named(7, 'sessions'))).toEqual(draws(Prng.named(7, 'sessions')));
    expect(draws(Prng.named(7, 'sessions'))).not.toEqual(draws(Prng.named(8, 'sessions')));
    expect(draws(Prng.named(7, 'sessions'))).not.toEqual(draws(Prng.named(7, 'session')));
  });

  it('leave every other stream of a run as it was, whatever is drawn from them and when', () => {
    const config = { seed: 4242, replicas: 3 };
    const plain = drawRun(config, 3, 'all', 1500);
    const busy = drawRun(config, 3, 'all', 1500);
    // The second run asks for two new streams, in either order, and draws from them in between.
    const a = busy.prngs.named('a');
    draws(a, 50);
    const b = busy.prngs.named('b');
    expect(busy.prngs.named('a')).toBe(a); // one generator per name and run
    expect(busy.params).toEqual(plain.params);
    for (const stream of ['net', 'client', 'fault', 'disk', 'retry', 'exec', 'abandon'] as const) {
      draws(b, 7);
      expect(draws(busy.prngs[stream]), stream).toEqual(draws(plain.prngs[stream]));
    }
    expect(draws(plain.prngs.named('b'))).toEqual(draws(Prng.named(4242, 'b')));
  });

  it('refuses a name that a forked stream holds', () => {
    const { prngs } = drawRun({ seed: 1, replicas: 3 }, 3, 'all', 1500);
    expect(() => prngs.named('client')).toThrow(/forked one/);
  });
});
