import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyIndex } from '@creek/replica/core/key-index.js';

describe('KeyIndex', () => {
  it('finds keys under a prefix, at a segment boundary or inside a segment, sorted', () => {
    const ix = new KeyIndex();
    for (const k of ['a/b', 'a/bc/d', 'a/b/x', 'a/c', 'b', 'a//e', 'a/']) ix.add(k);
    expect(ix.withPrefix('a/b')).toEqual(['a/b', 'a/b/x', 'a/bc/d']);
    expect(ix.withPrefix('a/b/')).toEqual(['a/b/x']);
    expect(ix.withPrefix('a/')).toEqual(['a/', 'a//e', 'a/b', 'a/b/x', 'a/bc/d', 'a/c']);
    expect(ix.withPrefix('')).toHaveLength(7);
    expect(ix.withPrefix('z')).toEqual([]);
    ix.delete('a/b');
    ix.delete('a/bc/d');
    expect(ix.withPrefix('a/b')).toEqual(['a/b/x']);
    expect(ix.size).toBe(5);
  });

  it('agrees with a filter over every key, under random adds and deletes', () => {
    const segment = fc.constantFrom('', 'a', 'b', 'ab', 'no', '0001', '01');
    const key = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
    const step = fc.tuple(fc.boolean(), key);
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 60 }),
        fc.array(key, { maxLength: 10 }),
        (steps, prefixes) => {
          const ix = new KeyIndex();
          const set = new Set<string>();
          for (const [add, k] of steps) {
            if (add) {
              ix.add(k);
              set.add(k);
            } else {
              ix.delete(k);
              set.delete(k);
            }
          }
          expect(ix.size).toBe(set.size);
          for (const p of ['', ...prefixes, ...prefixes.map((x) => x.slice(0, -1))])
            expect(ix.withPrefix(p)).toEqual([...set].filter((k) => k.startsWith(p)).sort());
        },
      ),
    );
  });
});
