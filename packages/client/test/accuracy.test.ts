import { describe, expect, it } from 'vitest';
import { CreekClient } from '../src/client.js';
import { Unavailable } from '../src/errors.js';
import { ScriptedBinding } from './support.js';

/**
 * `client.accuracy(op)`: what this client saw of an op's tentative answers. Only calls that get a
 * tentative view and then their final one count; a confirmed answer is a final one equal (as JSON)
 * to the tentative one.
 */
describe('client.accuracy', () => {
  it('counts the calls whose tentative answer the final one confirmed or corrected, per op', async () => {
    const binding = new ScriptedBinding();
    const creek = new CreekClient(binding);
    expect(creek.accuracy('seat.take')).toEqual({ tentative: 0, confirmed: 0, accuracy: null });

    const answer = (tentative: unknown, final: unknown) => {
      const c = creek.invoke('seat.take', {});
      binding.sink().view({ value: tentative, level: 'weak', final: false });
      binding.sink().view({ value: final, level: 'strong', final: true });
      return c;
    };
    await answer({ seat: 3 }, { seat: 3 });
    await answer({ seat: 4 }, { seat: 5 });
    await answer([1, { a: null }], [1, { a: null }]);
    expect(creek.accuracy('seat.take')).toEqual({ tentative: 3, confirmed: 2, accuracy: 2 / 3 });

    // A weak-only call (its tentative answer is its final one), a strong-only call, and a call
    // that failed after its tentative view count nothing.
    const weak = creek.invokeWeak('seat.take', {});
    binding.sink().view({ value: 1, level: 'weak', final: true });
    await weak;
    const strong = creek.invokeStrong('seat.take', {});
    binding.sink().view({ value: 1, level: 'strong', final: true });
    await strong;
    const failed = creek.invoke('seat.take', {});
    binding.sink().view({ value: 1, level: 'weak', final: false });
    binding.sink().error(new Unavailable('gone'));
    await failed.then(
      () => undefined,
      () => undefined,
    );
    expect(creek.accuracy('seat.take').tentative).toBe(3);
    // Other ops are counted apart.
    expect(creek.accuracy('seat.free').tentative).toBe(0);
  });
});
