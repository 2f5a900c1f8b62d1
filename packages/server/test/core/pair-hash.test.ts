import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, toFrozenJson, type JsonValue } from '@creek/app';
import { hashPairInto, hashTextInto } from '@creek/replica/core/pair-hash.js';
import { hashHex, lanesHex, pairHash, pairHashesOf } from '@creek/replica/core/state-digest.js';

/** The pair hash as it was first defined: the hash of the pair's text, built in full. */
function byText(key: string, value: JsonValue): string {
  return lanesHex(
    hashTextInto(`${JSON.stringify(key)}=${canonicalJson(value)}`, new Uint32Array(4)),
  );
}

const walked = (key: string, value: JsonValue): string =>
  lanesHex(hashPairInto(key, value, new Uint32Array(4)));

/** Strings with what JSON escapes: quotes, backslashes, control characters, lone surrogates. */
const awkward = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\ud800', '\udfff', 'é', 'a'),
  }),
);

/** JSON values with awkward strings, numeric keys, `__proto__`, unsorted keys and -0. */
const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constant(-0),
    awkward,
    fc.array(tie('value'), { maxLength: 5 }),
    fc
      .array(
        fc.tuple(
          fc.oneof(awkward, fc.constantFrom('10', '9', '0', '__proto__', 'b', 'a')),
          tie('value'),
        ),
        { maxLength: 6 },
      )
      .map((entries) => toFrozenJson(Object.fromEntries(entries))),
  ),
})).value;

describe("a digest pair's hash, walked", () => {
  it('keeps the hashes it had when it was the hash of the built text', () => {
    // Computed before the walk existed: a replica of an older version must agree.
    expect(hashHex('creek')).toBe('e12a47cc6277e516437743f5ad192297');
    expect(hashHex('')).toBe('6db0885e96b44f58dff74fdb99f6aa98');
    expect(hashHex('"k"=1')).toBe('f5b2edb67190e74487e7b69adc0a41f7');
    expect(
      lanesHex(
        pairHash('tpcc/w/1', {
          name: 'a\u0001"b',
          ytd: 3.5,
          list: [1, null, true, 'é𝄞'],
          nested: { z: 1, a: -0 },
        }),
      ),
    ).toBe('643bd0c927d4076606c103bb80928a60');
    expect(lanesHex(pairHash('k\ud800', []))).toBe('81239c1f9433382665382d5fc2fa6471');
  });

  it('is the hash of the text JSON.stringify(key) = canonicalJson(value)', () => {
    fc.assert(
      fc.property(awkward, json, (key, value) => {
        expect(walked(key, value)).toBe(byText(key, value));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts the keys of an object whose fields are out of order, at every level', () => {
    const a = toFrozenJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: 3 } }) as JsonValue;
    const b = toFrozenJson({ a: { c: 3, d: [2, { x: 2, y: 1 }] }, b: 1 }) as JsonValue;
    expect(walked('k', a)).toBe(walked('k', b));
    expect(walked('k', a)).toBe(byText('k', a));
    expect(walked('k', a)).not.toBe(walked('k', toFrozenJson({ a: { c: 3 }, b: 1 })));
  });

  it('walks a sparse array as canonicalJson writes it', () => {
    // Not a stored value (toFrozenJson fills holes with null), but the text defines the hash.
    const sparse: unknown[] = [1];
    sparse[3] = [undefined];
    expect(walked('k', sparse as JsonValue)).toBe(byText('k', sparse as JsonValue));
  });

  it('gives every write of a result its own four lanes, and zero for a delete', () => {
    const writes: [string, JsonValue | undefined][] = [
      ['a', { x: 1 }],
      ['b', undefined],
      ['c', 'text'],
    ];
    const lanes = pairHashesOf(writes);
    expect(lanes.length).toBe(12);
    expect(lanesHex(lanes.subarray(0, 4))).toBe(byText('a', { x: 1 }));
    expect([...lanes.subarray(4, 8)]).toEqual([0, 0, 0, 0]);
    expect(lanesHex(lanes.subarray(8, 12))).toBe(byText('c', 'text'));
  });
});
