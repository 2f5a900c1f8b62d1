import { describe, expect, it } from 'vitest';
import {
  adoptFrozenJson,
  canonicalJson,
  jsonEqual,
  toFrozenJson,
  type JsonValue,
} from '@creek/app';

describe('toFrozenJson', () => {
  it('passes primitives through', () => {
    expect(toFrozenJson(null)).toBeNull();
    expect(toFrozenJson('s')).toBe('s');
    expect(toFrozenJson(true)).toBe(true);
    expect(toFrozenJson(0)).toBe(0);
    expect(toFrozenJson(-1.5)).toBe(-1.5);
  });

  it('returns a deep-frozen deep copy', () => {
    const input = { a: [1, { b: 'x' }], c: { d: null } };
    const out = toFrozenJson(input) as { a: [number, { b: string }]; c: { d: null } };
    expect(out).toEqual(input);
    expect(out).not.toBe(input);
    expect(out.a).not.toBe(input.a);
    expect(out.a[1]).not.toBe(input.a[1]);
    expect(Object.isFrozen(out)).toBe(true);
    expect(Object.isFrozen(out.a)).toBe(true);
    expect(Object.isFrozen(out.a[1])).toBe(true);
    expect(Object.isFrozen(out.c)).toBe(true);
    // The input is neither frozen nor shared with the output.
    expect(Object.isFrozen(input)).toBe(false);
    (input.a[1] as { b: string }).b = 'changed';
    input.c.d = null;
    expect(out.a[1].b).toBe('x');
    // ES modules are strict: writing to a frozen object throws.
    expect(() => {
      (out.a[1] as { b: string }).b = 'y';
    }).toThrow(TypeError);
    expect(() => (out.a as number[]).push(2)).toThrow(TypeError);
  });

  it('returns a value it produced itself as is', () => {
    const once = toFrozenJson({ a: [1] });
    expect(toFrozenJson(once)).toBe(once);
    const list = toFrozenJson([{ x: 1 }]);
    expect(toFrozenJson(list)).toBe(list);
  });

  it('accepts an object frozen elsewhere, but still checks its contents', () => {
    const frozen = Object.freeze({ a: 1, b: Object.freeze([Object.freeze({ c: 'x' })]) });
    const out = toFrozenJson(frozen);
    expect(out).toEqual({ a: 1, b: [{ c: 'x' }] });
    expect(Object.isFrozen(out)).toBe(true);
    expect(() => toFrozenJson(Object.freeze({ bad: NaN }))).toThrow(
      'value.bad is not a finite number',
    );
    // Frozen on the outside only: the unfrozen inside is copied and frozen.
    const shallow = Object.freeze({ inner: { d: 1 } });
    const copy = toFrozenJson(shallow) as { inner: { d: number } };
    expect(copy).toEqual({ inner: { d: 1 } });
    expect(Object.isFrozen(copy.inner)).toBe(true);
    expect(Object.isFrozen(shallow.inner)).toBe(false);
    expect(() =>
      toFrozenJson(Object.freeze({ list: Object.freeze([Object.freeze(new Date(0))]) })),
    ).toThrow('value.list[0] is not a plain object');
  });

  it('accepts objects without a prototype', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = 1;
    expect(toFrozenJson(bare)).toEqual({ k: 1 });
  });

  it('drops undefined object fields', () => {
    const out = toFrozenJson({ a: 1, b: undefined, c: { d: undefined } });
    expect(out).toEqual({ a: 1, c: {} });
    expect(Object.keys(out as object)).toEqual(['a', 'c']);
  });

  it('rejects non-finite numbers with the path', () => {
    expect(() => toFrozenJson({ a: [1, NaN] })).toThrow(
      new TypeError('value.a[1] is not a finite number'),
    );
    expect(() => toFrozenJson(Infinity)).toThrow('value is not a finite number');
    expect(() => toFrozenJson([-Infinity], 'result')).toThrow('result[0] is not a finite number');
  });

  it('rejects functions, undefined, bigints and symbols with the path', () => {
    expect(() => toFrozenJson({ f: () => 1 })).toThrow(
      new TypeError('value.f is not JSON (function)'),
    );
    expect(toFrozenJson([1, undefined])).toEqual([1, null]); // as JSON.stringify does
    expect(() => toFrozenJson(undefined, 'arguments')).toThrow('arguments is not JSON (undefined)');
    expect(() => toFrozenJson({ n: 1n })).toThrow('value.n is not JSON (bigint)');
    expect(() => toFrozenJson({ s: Symbol('s') })).toThrow('value.s is not JSON (symbol)');
  });

  it('rejects class instances with the path', () => {
    class Point {
      constructor(readonly x: number) {}
    }
    expect(() => toFrozenJson({ p: new Point(1) })).toThrow(
      new TypeError('value.p is not a plain object'),
    );
    expect(() => toFrozenJson({ list: [new Date(0)] })).toThrow(
      'value.list[0] is not a plain object',
    );
    expect(() => toFrozenJson(new Map())).toThrow('value is not a plain object');
  });

  it('turns a getter of a frozen object into a fixed value', () => {
    let reads = 0;
    const live = Object.freeze({
      get n() {
        return ++reads;
      },
    });
    const out = toFrozenJson(live) as { n: number };
    expect(out.n).toBe(out.n);
    expect(Object.getOwnPropertyDescriptor(out, 'n')?.get).toBeUndefined();
  });

  it('keeps an own "__proto__" key as data', () => {
    const input = JSON.parse('{"__proto__":{"admin":true},"x":1}') as unknown;
    const out = toFrozenJson(input) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['__proto__', 'x']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('does not let a sparse array through', () => {
    const sparse: unknown[] = [];
    sparse[1] = 1;
    let out: JsonValue | undefined;
    try {
      out = toFrozenJson(sparse);
    } catch {
      return; // rejecting it is fine
    }
    expect(0 in (out as unknown[])).toBe(true);
  });
});

describe('jsonEqual', () => {
  it('ignores object key order, at any depth', () => {
    expect(jsonEqual({ a: 1, b: { c: 2, d: [1, 2] } }, { b: { d: [1, 2], c: 2 }, a: 1 })).toBe(
      true,
    );
  });

  it('compares values structurally', () => {
    expect(jsonEqual(1, 1)).toBe(true);
    expect(jsonEqual('a', 'a')).toBe(true);
    expect(jsonEqual(null, null)).toBe(true);
    expect(jsonEqual(undefined, undefined)).toBe(true);
    expect(jsonEqual([1, [2]], [1, [2]])).toBe(true);
    expect(jsonEqual({}, {})).toBe(true);

    expect(jsonEqual(1, 2)).toBe(false);
    expect(jsonEqual(1, '1')).toBe(false);
    expect(jsonEqual(null, undefined)).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual({}, null)).toBe(false);
    expect(jsonEqual(0, false)).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual([1], [1, 1])).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({}, [])).toBe(false);
    expect(jsonEqual({ a: 1 }, { b: 1 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: { b: 1 } }, { a: { b: 2 } })).toBe(false);
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is equal for values that jsonEqual considers equal', () => {
    const a: JsonValue = { x: [1, 'two'], y: { p: true, q: null } };
    const b: JsonValue = { y: { q: null, p: true }, x: [1, 'two'] };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('writes primitives as JSON and undefined as a marker', () => {
    expect(canonicalJson(undefined)).toBe('undefined');
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson(1.5)).toBe('1.5');
    expect(canonicalJson({ 'k"ey': 'v' })).toBe('{"k\\"ey":"v"}');
    expect(JSON.parse(canonicalJson({ b: [1], a: 'x' }))).toEqual({ a: 'x', b: [1] });
  });
});

describe('adoptFrozenJson', () => {
  it('freezes a value in place, deeply, so that toFrozenJson then takes it as it is', () => {
    const v = { a: [1, { b: 'c' }], d: { e: null } };
    const adopted = adoptFrozenJson(v);
    expect(adopted).toBe(v);
    expect(Object.isFrozen(v)).toBe(true);
    expect(Object.isFrozen(v.a)).toBe(true);
    expect(Object.isFrozen(v.a[1])).toBe(true);
    expect(Object.isFrozen(v.d)).toBe(true);
    expect(toFrozenJson(v)).toBe(v);
    expect(adoptFrozenJson('s')).toBe('s');
  });
});
