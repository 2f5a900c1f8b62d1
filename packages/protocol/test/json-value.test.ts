import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonValue, JsonValueSchema } from '../src/json-value.js';

describe('JsonValueSchema: any JSON value, nothing else', () => {
  it('accepts every value JSON.parse can return', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(isJsonValue(v)).toBe(true);
        expect(isJsonValue(JSON.parse(JSON.stringify(v)))).toBe(true);
        expect(JsonValueSchema.safeParse(v).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what JSON cannot carry, at any depth', () => {
    class Point {
      x = 1;
    }
    const bad: unknown[] = [
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      () => 1,
      Symbol('s'),
      10n,
      new Date(0),
      new Map(),
      new Point(),
    ];
    for (const b of bad) {
      expect(isJsonValue(b), String(b)).toBe(false);
      expect(isJsonValue({ a: [1, { b: b }] }), `nested ${String(b)}`).toBe(false);
      expect(isJsonValue([null, [b]]), `in an array ${String(b)}`).toBe(false);
      expect(JsonValueSchema.safeParse({ deep: [b] }).success).toBe(false);
    }
    expect(isJsonValue(Object.create(null) as object)).toBe(true);
  });

  it('walks deep values without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(isJsonValue(deep)).toBe(true);
  });
});
