import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@creek/app';
import { StateDigest } from '@creek/replica/core/state-digest.js';

describe('StateDigest', () => {
  it('is 32 hex digits, whatever the size of the state', () => {
    const big = Array.from({ length: 1000 }, (_, i): [string, JsonValue] => [
      `k${i}`,
      'x'.repeat(1000),
    ]);
    expect(StateDigest.of(big)).toMatch(/^[0-9a-f]{32}$/);
    expect(StateDigest.of([])).toBe('0'.repeat(32));
  });

  it('shows no key or value', () => {
    const d = StateDigest.of([['password', 'hunter2-secret']]);
    expect(d).not.toContain('hunter2');
    expect(d).not.toContain('password');
  });

  it('does not depend on the order keys were set in, and follows changes and deletes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('a', 'b', 'c', 'd'),
            fc.option(fc.jsonValue(), { nil: undefined }),
          ),
          {
            maxLength: 40,
          },
        ),
        (writes) => {
          const kept = new StateDigest();
          const state = new Map<string, JsonValue>();
          for (const [key, value] of writes) {
            kept.set(key, value as JsonValue | undefined);
            if (value === undefined) state.delete(key);
            else state.set(key, value as JsonValue);
          }
          // From scratch, in reverse order: the same digest.
          expect(kept.hex()).toBe(StateDigest.of([...state].reverse()));
        },
      ),
    );
  });

  it('tells states apart that differ in one value, one key, or how a value splits into keys', () => {
    const base: [string, JsonValue][] = [
      ['a', 1],
      ['b', { x: [1, 2] }],
    ];
    const d = StateDigest.of(base);
    expect(
      StateDigest.of([
        ['a', 1],
        ['b', { x: [1, 3] }],
      ]),
    ).not.toBe(d);
    expect(
      StateDigest.of([
        ['a', 1],
        ['c', { x: [1, 2] }],
      ]),
    ).not.toBe(d);
    expect(StateDigest.of([['a', 1]])).not.toBe(d);
    expect(StateDigest.of([['a=1', 'b']])).not.toBe(StateDigest.of([['a', '1=b']]));
    // Equal values written with their keys in another order are equal (canonical JSON).
    expect(StateDigest.of([['o', { p: 1, q: 2 }]])).toBe(StateDigest.of([['o', { q: 2, p: 1 }]]));
  });
});
