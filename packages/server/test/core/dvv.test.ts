import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';

const id = (replica: number, eventNo: number) => ({ replica, eventNo });

function dvvOf(ids: ReadonlyArray<readonly [number, number]>): DottedVersionVector {
  const v = new DottedVersionVector();
  for (const [r, e] of ids) v.add(id(r, e));
  return v;
}

describe('DottedVersionVector', () => {
  it('is empty when new', () => {
    const v = new DottedVersionVector();
    expect(v.has(id(1, 1))).toBe(false);
    expect(v.base(1)).toBe(0);
    expect(v.dotCount()).toBe(0);
    expect(v.toJSON()).toEqual({});
  });

  it('adds in order into the contiguous prefix', () => {
    const v = dvvOf([
      [1, 1],
      [1, 2],
      [1, 3],
    ]);
    expect(v.base(1)).toBe(3);
    expect(v.dotCount()).toBe(0);
    expect(v.has(id(1, 3))).toBe(true);
    expect(v.has(id(1, 4))).toBe(false);
    expect(v.has(id(2, 1))).toBe(false);
  });

  it('keeps out-of-order ids as dots and absorbs them once the gap fills', () => {
    const v = dvvOf([
      [1, 3],
      [1, 5],
      [1, 2],
    ]);
    expect(v.base(1)).toBe(0);
    expect(v.dotCount()).toBe(3);
    expect(v.has(id(1, 1))).toBe(false);
    expect(v.has(id(1, 2))).toBe(true);
    expect(v.has(id(1, 4))).toBe(false);
    v.add(id(1, 1));
    expect(v.base(1)).toBe(3); // 1, then dots 2 and 3 absorbed; 5 still above the gap at 4
    expect(v.dotCount()).toBe(1);
    v.add(id(1, 4));
    expect(v.base(1)).toBe(5);
    expect(v.dotCount()).toBe(0);
  });

  it('ignores ids already included', () => {
    const v = dvvOf([
      [1, 1],
      [1, 2],
      [1, 4],
    ]);
    v.add(id(1, 2));
    v.add(id(1, 4));
    expect(v.base(1)).toBe(2);
    expect(v.dotCount()).toBe(1);
    expect(v.toJSON()).toEqual({ '1': [2, 4] });
  });

  it('keeps origins separate', () => {
    const v = dvvOf([
      [1, 1],
      [2, 2],
    ]);
    expect(v.base(1)).toBe(1);
    expect(v.base(2)).toBe(0);
    expect(v.has(id(2, 1))).toBe(false);
    expect(v.has(id(2, 2))).toBe(true);
  });

  describe('addPrefix', () => {
    it('adds every id up to eventNo and drops the dots it covers', () => {
      const v = dvvOf([
        [1, 3],
        [1, 7],
        [1, 9],
      ]);
      v.addPrefix(1, 6);
      // 7 became contiguous and is absorbed; 9 stays a dot.
      expect(v.base(1)).toBe(7);
      expect(v.dotCount()).toBe(1);
      expect(v.has(id(1, 8))).toBe(false);
      expect(v.has(id(1, 9))).toBe(true);
      expect(v.toJSON()).toEqual({ '1': [7, 9] });
    });

    it('never shrinks the prefix', () => {
      const v = dvvOf([
        [1, 1],
        [1, 2],
        [1, 3],
      ]);
      v.addPrefix(1, 2);
      expect(v.base(1)).toBe(3);
    });

    it('creates an origin, and ignores a non-positive prefix for an unknown origin', () => {
      const v = new DottedVersionVector();
      v.addPrefix(4, 0);
      expect(v.toJSON()).toEqual({});
      v.addPrefix(4, 5);
      expect(v.base(4)).toBe(5);
      expect(v.has(id(4, 5))).toBe(true);
      expect(v.has(id(4, 6))).toBe(false);
    });
  });

  describe('includes', () => {
    it('compares prefixes and dots', () => {
      const big = dvvOf([
        [1, 1],
        [1, 2],
        [1, 3],
        [2, 5],
      ]);
      expect(big.includes(new DottedVersionVector())).toBe(true);
      expect(new DottedVersionVector().includes(big)).toBe(false);
      expect(big.includes(DottedVersionVector.fromPrefixes([[1, 3]]))).toBe(true);
      expect(big.includes(DottedVersionVector.fromPrefixes([[1, 4]]))).toBe(false);
      expect(big.includes(dvvOf([[2, 5]]))).toBe(true);
      expect(big.includes(dvvOf([[2, 4]]))).toBe(false);
      expect(big.includes(DottedVersionVector.fromPrefixes([[2, 5]]))).toBe(false);
      expect(big.includes(dvvOf([[3, 1]]))).toBe(false);
      expect(big.includes(big)).toBe(true);
    });

    it('checks the part of the other prefix above this prefix against this vector’s dots', () => {
      // this: 1..2 plus dots 4, 5; other: 1..5 — 3 is missing, so not included.
      const self = dvvOf([
        [1, 1],
        [1, 2],
        [1, 4],
        [1, 5],
      ]);
      expect(self.base(1)).toBe(2);
      expect(self.includes(DottedVersionVector.fromPrefixes([[1, 5]]))).toBe(false);
      expect(self.includes(DottedVersionVector.fromPrefixes([[1, 2]]))).toBe(true);
      // Once 3 arrives the dots are absorbed and the prefix 1..5 is covered.
      self.add(id(1, 3));
      expect(self.includes(DottedVersionVector.fromPrefixes([[1, 5]]))).toBe(true);
      // An origin known only through dots covers another vector's dots but not a prefix with a gap.
      const dotsOnly = dvvOf([
        [2, 2],
        [2, 3],
      ]);
      expect(dotsOnly.includes(dvvOf([[2, 3]]))).toBe(true);
      expect(dotsOnly.includes(DottedVersionVector.fromPrefixes([[2, 3]]))).toBe(false);
    });

    it('treats the other vector’s dots individually', () => {
      const self = DottedVersionVector.fromPrefixes([[1, 10]]);
      expect(
        self.includes(
          dvvOf([
            [1, 4],
            [1, 9],
          ]),
        ),
      ).toBe(true);
      expect(
        self.includes(
          dvvOf([
            [1, 4],
            [1, 11],
          ]),
        ),
      ).toBe(false);
    });
  });

  it('prefixes() keeps only the contiguous prefixes', () => {
    const v = dvvOf([
      [1, 1],
      [1, 3],
      [2, 2],
      [3, 1],
      [3, 2],
    ]);
    const p = v.prefixes();
    expect(p.toJSON()).toEqual({ '1': [1], '3': [2] });
    expect(p.dotCount()).toBe(0);
    expect(p.has(id(1, 3))).toBe(false);
    expect(p.has(id(2, 2))).toBe(false);
    expect(v.includes(p)).toBe(true);
    // The original is unchanged.
    expect(v.has(id(1, 3))).toBe(true);
  });

  it('fromPrefixes skips empty prefixes', () => {
    const v = DottedVersionVector.fromPrefixes([
      [1, 3],
      [2, 0],
    ]);
    expect(v.toJSON()).toEqual({ '1': [3] });
  });

  it('clone() is independent of the original', () => {
    const v = dvvOf([
      [1, 1],
      [1, 3],
    ]);
    const c = v.clone();
    c.add(id(1, 2));
    c.add(id(2, 1));
    expect(c.base(1)).toBe(3);
    expect(v.base(1)).toBe(1);
    expect(v.has(id(1, 3))).toBe(true);
    expect(v.has(id(2, 1))).toBe(false);
  });

  it('round-trips through JSON', () => {
    const v = dvvOf([
      [2, 1],
      [2, 9],
      [2, 4],
      [1, 1],
      [1, 2],
      [7, 3],
    ]);
    const json = v.toJSON();
    expect(json).toEqual({ '1': [2], '2': [1, 4, 9], '7': [0, 3] });
    expect(Object.keys(json)).toEqual(['1', '2', '7']);
    const back = DottedVersionVector.fromJSON(JSON.parse(JSON.stringify(json)));
    expect(back.toJSON()).toEqual(json);
    expect(back.includes(v)).toBe(true);
    expect(v.includes(back)).toBe(true);
    expect(back.dotCount()).toBe(v.dotCount());
    expect(v.toString()).toBe(JSON.stringify(json));
  });

  it('fromJSON absorbs dots made contiguous by the base', () => {
    const v = DottedVersionVector.fromJSON({ '1': [2, 3, 4, 6] });
    expect(v.base(1)).toBe(4);
    expect(v.dotCount()).toBe(1);
    expect(v.toJSON()).toEqual({ '1': [4, 6] });
  });

  describe('against a Set model', () => {
    const idArb = fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 12 }));
    const key = ([r, e]: readonly [number, number]) => `${r}.${e}`;

    function modelBase(model: Set<string>, replica: number): number {
      let n = 0;
      while (model.has(`${replica}.${n + 1}`)) n++;
      return n;
    }

    it('has, base, dotCount and toJSON agree with the model for any add sequence', () => {
      fc.assert(
        fc.property(fc.array(idArb, { maxLength: 60 }), (ids) => {
          const v = new DottedVersionVector();
          const model = new Set<string>();
          for (const i of ids) {
            v.add(id(i[0], i[1]));
            model.add(key(i));
          }
          let expectedDots = 0;
          for (let r = 1; r <= 3; r++) {
            const base = modelBase(model, r);
            expect(v.base(r)).toBe(base);
            for (let e = 1; e <= 13; e++) expect(v.has(id(r, e))).toBe(model.has(`${r}.${e}`));
            expectedDots += [...model].filter((k) => {
              const [mr, me] = k.split('.').map(Number) as [number, number];
              return mr === r && me > base;
            }).length;
          }
          expect(v.dotCount()).toBe(expectedDots);
          const back = DottedVersionVector.fromJSON(v.toJSON());
          for (const k of model) {
            const [r, e] = k.split('.').map(Number) as [number, number];
            expect(back.has(id(r, e))).toBe(true);
          }
          expect(back.toJSON()).toEqual(v.toJSON());
        }),
      );
    });

    it('includes() is the subset relation', () => {
      fc.assert(
        fc.property(
          fc.array(idArb, { maxLength: 40 }),
          fc.array(idArb, { maxLength: 40 }),
          fc.array(fc.boolean(), { maxLength: 40 }),
          (aIds, bIds, pick) => {
            const a = dvvOf(aIds);
            const aModel = new Set(aIds.map(key));
            // A random subset of a's ids: always included.
            const subset = aIds.filter((_, i) => pick[i] ?? false);
            expect(a.includes(dvvOf(subset))).toBe(true);
            // A random subset with its prefixes filled in by addPrefix: included iff a subset.
            const withPrefix = dvvOf(subset);
            const extraPrefix = bIds[0];
            const prefixModel = new Set(subset.map(key));
            if (extraPrefix !== undefined) {
              withPrefix.addPrefix(extraPrefix[0], extraPrefix[1]);
              for (let e = 1; e <= extraPrefix[1]; e++) prefixModel.add(`${extraPrefix[0]}.${e}`);
            }
            const isSubset = (m: Set<string>, of: Set<string>) => [...m].every((k) => of.has(k));
            expect(a.includes(withPrefix)).toBe(isSubset(prefixModel, aModel));
            // An unrelated vector.
            const b = dvvOf(bIds);
            const bModel = new Set(bIds.map(key));
            expect(a.includes(b)).toBe(isSubset(bModel, aModel));
            expect(b.includes(a)).toBe(isSubset(aModel, bModel));
            // prefixes() is always included in the vector it came from.
            expect(a.includes(a.prefixes())).toBe(true);
          },
        ),
      );
    });
  });
});
