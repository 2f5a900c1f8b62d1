import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJson, type JsonLimits } from '../src/json-check.js';

const roomy: JsonLimits = { maxNesting: 1_000, maxBytes: 1 << 30 };
const check = (value: unknown, limits: JsonLimits = roomy) => checkJson(value, 'args', limits);
const utf8Bytes = (s: string) => new TextEncoder().encode(s).byteLength;

/** The path and problem of a refusal (fails the test when the value passed). */
function refusal(value: unknown, limits?: JsonLimits): { path: string; problem: string } {
  const r = check(value, limits);
  if (r.ok) throw new Error(`expected a refusal of ${String(value)}`);
  return { path: r.path, problem: r.problem };
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe('checkJson', () => {
  it('names the path of a value JSON would change, and says what to pass instead', () => {
    const when = new Date(0);
    expect(refusal({ items: [1, 2, 3, { when }] })).toEqual({
      path: 'args.items[3].when',
      problem: 'a Date is not a JSON value; pass date.toISOString()',
    });
    const cases: [unknown, string, RegExp][] = [
      [{ n: NaN }, 'args.n', /NaN is not a JSON number.*null/],
      [{ n: -Infinity }, 'args.n', /-Infinity is not a JSON number/],
      [{ m: new Map([['a', 1]]) }, 'args.m', /a Map.*\{\}.*Object\.fromEntries/],
      [{ s: new Set([1]) }, 'args.s', /a Set.*\[\.\.\.set\]/],
      [{ b: 10n }, 'args.b', /a BigInt \(10n\).*String\(n\)/],
      [{ f: () => 1 }, 'args.f', /a function/],
      [{ s: Symbol('x') }, 'args.s', /a symbol/],
      [[1, undefined], 'args[1]', /undefined in an array.*pass null/],
      [[1, , 3], 'args[1]', /sparse array/], // eslint-disable-line no-sparse-arrays
      [{ p: new Point(1, 2) }, 'args.p', /an instance of Point.*plain object/],
      [{ bytes: new Uint8Array(2) }, 'args.bytes', /a Uint8Array.*base64/],
      [{ r: /x/ }, 'args.r', /a RegExp/],
      [{ e: new Error('x') }, 'args.e', /an Error.*error\.message/],
      [{ s: new String('x') }, 'args.s', /a String object.*valueOf/],
      [{ p: Promise.resolve(1) }, 'args.p', /a Promise.*await/],
      [{ 'a b': { 'ü-1': NaN } }, 'args["a b"]["ü-1"]', /NaN/],
      [undefined, 'args', /undefined is not a JSON value/],
      [{ [Symbol('k')]: 1 }, 'args', /symbol key Symbol\(k\)/],
      [JSON.parse('{"a":{"__proto__":1}}'), 'args.a.__proto__', /"__proto__" key/],
      [{ toJSON: () => 'other' }, 'args.toJSON', /a function/],
    ];
    for (const [value, path, problem] of cases) {
      const r = refusal(value);
      expect(r.path).toBe(path);
      expect(r.problem).toMatch(problem);
    }
  });

  it('leaves out an object field that is undefined, as JSON does (an absent optional field)', () => {
    expect(check({ a: 1, b: undefined })).toEqual({ ok: true });
  });

  it('refuses a cycle, naming where it returns to', () => {
    const a: Record<string, unknown> = { list: [] };
    (a.list as unknown[]).push({ back: a });
    expect(refusal(a)).toEqual({
      path: 'args.list[0].back',
      problem: expect.stringMatching(/a cycle: this is args again/) as unknown,
    });
  });

  it('accepts a value shared by several fields: it is no cycle', () => {
    const shared = { x: 1 };
    expect(check({ a: shared, b: [shared, shared] })).toEqual({ ok: true });
  });

  it('refuses nesting past the limit without exhausting the stack, even 5,000 deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = [deep];
    const r = refusal(deep, { maxNesting: 63, maxBytes: 1 << 20 });
    expect(r.path).toBe(`args${'[0]'.repeat(63)}`);
    expect(r.problem).toMatch(/nested deeper than 63/);
    let ok: unknown = 1;
    for (let i = 0; i < 63; i++) ok = { a: ok };
    expect(check(ok, { maxNesting: 63, maxBytes: 1 << 20 })).toEqual({ ok: true });
  });

  it('refuses a value whose JSON text is over the limit, naming where it crossed it', () => {
    const r = refusal(
      { key: 'k', value: 'x'.repeat(2 << 20) },
      { maxNesting: 64, maxBytes: 1 << 20 },
    );
    expect(r.path).toBe('args.value');
    expect(r.problem).toMatch(/passes 1048576 bytes/);
  });

  it('stops at the limit: a value sharing one array 2^40 times over is refused at once', () => {
    let huge: unknown = ['x'];
    for (let i = 0; i < 40; i++) huge = [huge, huge];
    expect(refusal(huge, { maxNesting: 64, maxBytes: 1 << 20 }).problem).toMatch(/passes/);
  });

  it('counts UTF-8 bytes of the escaped text exactly: a value at the limit passes, a byte less fails', () => {
    const text = 'a"b\\c\n\t\u0001\u000b é 世 😀 \ud800 \udc00 end';
    const value = { [text]: [text, 1.5e-7, -0, true, null, { '': false }] };
    const limit = utf8Bytes(JSON.stringify(value));
    expect(check(value, { maxNesting: 64, maxBytes: limit })).toEqual({ ok: true });
    expect(check(value, { maxNesting: 64, maxBytes: limit - 1 }).ok).toBe(false);
  });

  it('passes every JSON value unchanged, and measures its text exactly', () => {
    fc.assert(
      fc.property(
        fc
          .jsonValue({ stringUnit: 'binary' })
          .filter((v) => !JSON.stringify(v).includes('"__proto__"')),
        (value) => {
          const copy = JSON.stringify(value);
          const limit = utf8Bytes(copy);
          expect(check(value, { maxNesting: 1_000, maxBytes: limit })).toEqual({ ok: true });
          expect(JSON.stringify(value)).toBe(copy); // not changed by the check
          expect(check(value, { maxNesting: 1_000, maxBytes: limit - 1 }).ok).toBe(false);
        },
      ),
    );
  });

  it('refuses any value with one non-JSON part, naming that part’s path', () => {
    const bad = fc.constantFrom<() => unknown>(
      () => NaN,
      () => Infinity,
      () => new Date(0),
      () => new Map(),
      () => new Set(),
      () => 1n,
      () => () => 1,
      () => Symbol('s'),
      () => new Point(0, 0),
    );
    const key = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
    // JSON values around the bad part; never a "__proto__" key, which is a refused part itself.
    const json = fc
      .jsonValue({ maxDepth: 2 })
      .filter((v) => !JSON.stringify(v).includes('"__proto__"'));
    // From the bad part outwards: each step puts it into an array (at an index) or an object.
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('array' as const),
        before: fc.array(json, { maxLength: 3 }),
        after: fc.array(json, { maxLength: 3 }),
      }),
      fc.record({
        kind: fc.constant('object' as const),
        key,
        others: fc.dictionary(key, json, { maxKeys: 3 }),
      }),
    );
    fc.assert(
      fc.property(bad, fc.array(step, { maxLength: 8 }), (make, steps) => {
        let value = make();
        let path = '';
        for (const s of steps) {
          if (s.kind === 'array') {
            value = [...s.before, value, ...s.after];
            path = `[${s.before.length}]${path}`;
          } else {
            value = { ...s.others, [s.key]: value };
            path = `.${s.key}${path}`;
          }
        }
        expect(refusal(value).path).toBe(`args${path}`);
      }),
    );
  });
});
