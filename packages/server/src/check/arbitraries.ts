import fc from 'fast-check';

/**
 * Arguments for an op, generated from its Zod schema: what `creek check` runs each op on.
 *
 * Zod 4 describes every schema in `schema._zod.def` (its documented introspection surface for
 * libraries), and this maps the kinds apps use onto fast-check arbitraries. The existing bridge
 * (zod-fast-check) supports Zod 3 and fast-check 3 only. Checks the mapping does not model
 * (refinements, cross-field rules) are left to the schema itself: the caller drops generated
 * values the schema refuses, as the replica would.
 *
 * Strings and integers are drawn from a small pool most of the time, the same pool wherever the
 * same schema appears: so one op's arguments name the keys another op wrote (the account that
 * `bank.open` opened is the one `bank.deposit` pays into), and the states the ops run on are
 * states the app can reach.
 */

/** A schema kind `creek check` cannot generate values for, and where it sits in the arguments. */
export class UnsupportedSchema extends Error {}

/** How deep recursive schemas (`z.lazy`, `z.json()`) go. */
const MAX_DEPTH = 3;
/** Arrays longer than this add little to a determinism check, and cost time. */
const MAX_ITEMS = 8;
/** Integers are drawn mostly from the first SMALL + 1 values of their range. */
const SMALL = 100;

interface Def {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Thrown where a recursive schema hits MAX_DEPTH: its container then draws an empty value. */
class TooDeep extends Error {}

export interface ArgumentOptions {
  /**
   * Integers from the first SMALL + 1 values of their range only. For checks that look at how
   * ops meet, not at what one op does with a large count: a stock of 100,000 tickets is 100,000
   * keys in every state built on it, and meets other ops as a stock of 3 does.
   */
  readonly smallIntegers?: boolean;
}

/** Set while `argumentsFor` builds (synchronously): its options, read where integers are made. */
let building: ArgumentOptions = {};

/** The arbitrary of arguments that `schema` accepts (and some it may refuse on a refinement). */
export function argumentsFor(
  schema: unknown,
  options: ArgumentOptions = {},
): fc.Arbitrary<unknown> {
  building = options;
  try {
    return build(schema, 'args', MAX_DEPTH);
  } finally {
    building = {};
  }
}

function defOf(schema: unknown, path: string): Def {
  const def = (schema as { _zod?: { def?: unknown } } | null)?._zod?.def;
  if (typeof def !== 'object' || def === null || typeof (def as Def).type !== 'string')
    throw new UnsupportedSchema(`${path}: not a Zod 4 schema`);
  return def as Def;
}

/** The checks (`.min()`, `.regex()`, …) of a schema, as their definitions. */
function checksOf(def: Def): Def[] {
  const checks = (def.checks ?? []) as { _zod?: { def?: Def } }[];
  return checks.flatMap((c) => (c._zod?.def === undefined ? [] : [c._zod.def]));
}

function build(schema: unknown, path: string, depth: number): fc.Arbitrary<unknown> {
  const def = defOf(schema, path);
  const inner = (field = 'innerType'): fc.Arbitrary<unknown> => build(def[field], path, depth);
  switch (def.type) {
    case 'string':
      return pooled(stringOf(def, path));
    case 'number':
      return numberOf(def);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'undefined':
    case 'void':
      return fc.constant(undefined);
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries as Record<string, unknown>));
    case 'object':
      return objectOf(def, path, depth);
    case 'array':
      return arrayOf(def, path, depth);
    case 'tuple':
      return fc.tuple(...(def.items as unknown[]).map((s, i) => build(s, `${path}[${i}]`, depth)));
    case 'record':
      return recordOf(def, path, depth);
    case 'union':
      return unionOf(def, path, depth);
    case 'optional':
    case 'default':
    case 'prefault':
      // The input may leave it out; the schema fills in a default.
      return orElse(() => fc.option(inner(), { nil: undefined }), fc.constant(undefined));
    case 'nullable':
      return orElse(() => fc.option(inner(), { nil: null }), fc.constant(null));
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return inner();
    case 'pipe':
      // A transform or a pipe: what the op is invoked with is the input side.
      return build(def.in, path, depth);
    case 'lazy':
      if (depth <= 0) throw new TooDeep();
      return build((def.getter as () => unknown)(), path, depth - 1);
    case 'any':
    case 'unknown':
      return fc.jsonValue({ maxDepth: 2 });
    default:
      throw new UnsupportedSchema(
        `${path}: creek check cannot generate a z.${def.type}() value (supported: strings, ` +
          'numbers, booleans, null, literals, enums, objects, arrays, tuples, records, unions, ' +
          'optional, nullable, default, lazy, pipes and transforms, any, unknown)',
      );
  }
}

/** `build`, or `fallback` where a recursive schema got too deep. */
function orElse(make: () => fc.Arbitrary<unknown>, fallback: fc.Arbitrary<unknown>) {
  try {
    return make();
  } catch (err) {
    if (err instanceof TooDeep) return fallback;
    throw err;
  }
}

/**
 * Mostly values from a small pool, the same for every schema alike (see the module comment): the
 * pool given, or three values drawn from `arb` with a fixed seed.
 */
function pooled<T>(arb: fc.Arbitrary<T>, pool?: readonly T[]): fc.Arbitrary<T> {
  const values = pool ?? fc.sample(arb, { seed: 0x5eed, numRuns: 3 });
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...values) },
    { weight: 1, arbitrary: arb },
  );
}

function stringOf(def: Def, path: string): fc.Arbitrary<string> {
  let min = 0;
  let max: number | undefined;
  let pattern: RegExp | undefined;
  let prefix = '';
  let suffix = '';
  let includes = '';
  const format = def.format as string | undefined;
  if (format === 'url') return fc.webUrl();
  if (format !== undefined) {
    if (!(def.pattern instanceof RegExp))
      throw new UnsupportedSchema(`${path}: creek check cannot generate a z.${format}() string`);
    pattern = def.pattern;
  }
  for (const c of checksOf(def)) {
    if (c.check === 'min_length') min = Math.max(min, c.minimum as number);
    else if (c.check === 'max_length') max = Math.min(max ?? Infinity, c.maximum as number);
    else if (c.check === 'length_equals') min = max = c.length as number;
    else if (c.check === 'string_format') {
      if (c.format === 'starts_with') prefix = c.prefix as string;
      else if (c.format === 'ends_with') suffix = c.suffix as string;
      else if (c.format === 'includes') includes = c.includes as string;
      else if (c.pattern instanceof RegExp) pattern ??= c.pattern;
      else throw new UnsupportedSchema(`${path}: creek check cannot generate a ${c.format} string`);
    }
    // Others (trim, toLowerCase, refinements) change or check the value: the schema decides.
  }
  if (pattern !== undefined) return fc.stringMatching(pattern);
  const fixed = prefix.length + includes.length + suffix.length;
  return fc
    .string({
      minLength: Math.max(0, min - fixed),
      ...(max === undefined ? {} : { maxLength: Math.max(0, max - fixed) }),
    })
    .map((s) => prefix + s + includes + suffix);
}

function numberOf(def: Def): fc.Arbitrary<number> {
  let min = -Infinity;
  let max = Infinity;
  let minExcluded = false;
  let maxExcluded = false;
  let integer = typeof def.format === 'string' && /int/.test(def.format);
  let step: number | undefined;
  for (const c of checksOf(def)) {
    if (c.check === 'greater_than' && (c.value as number) >= min) {
      min = c.value as number;
      minExcluded = c.inclusive !== true;
    } else if (c.check === 'less_than' && (c.value as number) <= max) {
      max = c.value as number;
      maxExcluded = c.inclusive !== true;
    } else if (c.check === 'number_format' && /int/.test(c.format as string)) integer = true;
    else if (c.check === 'multiple_of') step = c.value as number;
  }
  if (integer || (step !== undefined && Number.isInteger(step))) {
    const unit = step ?? 1;
    const lo = Math.max(Number.MIN_SAFE_INTEGER, Math.ceil(min / unit + (minExcluded ? 1e-9 : 0)));
    const hi = Math.min(Number.MAX_SAFE_INTEGER, Math.floor(max / unit - (maxExcluded ? 1e-9 : 0)));
    // fc.integer is 32-bit; wider ranges go through bigint (biased to small values all the same).
    const range = (from: number, to: number): fc.Arbitrary<number> =>
      from >= -(2 ** 31) && to < 2 ** 31
        ? fc.integer({ min: from, max: to })
        : fc.bigInt({ min: BigInt(from), max: BigInt(to) }).map(Number);
    // Mostly the first hundred values: a count of 100,000 costs an op's every run, and seldom
    // shows more than a count of 10 does.
    const k =
      hi - lo <= SMALL
        ? range(lo, hi)
        : building.smallIntegers === true
          ? range(lo, lo + SMALL)
          : fc.oneof(
              { weight: 3, arbitrary: range(lo, lo + SMALL) },
              { weight: 1, arbitrary: range(lo, hi) },
            );
    // The pool is the smallest values allowed: ids 1, 2, 3 name rows other ops wrote, and counts
    // stay small enough that a check runs many of them.
    const smallest = Math.max(lo, Math.min(0, hi));
    return pooled(
      k.map((n) => n * unit),
      [0, 1, 2].map((i) => Math.min(hi, smallest + i) * unit),
    );
  }
  // Finite bounds: JSON has no infinities (Zod's z.number() refuses them too).
  return fc
    .double({
      min: Math.max(min, -Number.MAX_VALUE),
      max: Math.min(max, Number.MAX_VALUE),
      minExcluded,
      maxExcluded,
      noNaN: true,
    })
    .map((x) => (x === 0 ? 0 : x)); // no -0: JSON has none
}

function objectOf(def: Def, path: string, depth: number): fc.Arbitrary<unknown> {
  const shape = def.shape as Record<string, unknown>;
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const [key, schema] of Object.entries(shape)) {
    fields[key] = build(schema, `${path}.${key}`, depth);
    const optin = (schema as { _zod?: { optin?: unknown } })._zod?.optin;
    if (optin === undefined) required.push(key);
  }
  return fc.record(fields, { requiredKeys: required });
}

function lengths(def: Def): { minLength: number; maxLength: number } {
  let minLength = 0;
  let maxLength = Infinity;
  for (const c of checksOf(def)) {
    if (c.check === 'min_length') minLength = c.minimum as number;
    else if (c.check === 'max_length') maxLength = c.maximum as number;
    else if (c.check === 'length_equals') minLength = maxLength = c.length as number;
  }
  return { minLength, maxLength: Math.max(minLength, Math.min(maxLength, MAX_ITEMS)) };
}

function arrayOf(def: Def, path: string, depth: number): fc.Arbitrary<unknown> {
  const { minLength, maxLength } = lengths(def);
  try {
    return fc.array(build(def.element, `${path}[]`, depth), { minLength, maxLength });
  } catch (err) {
    // Too deep: an empty array, where one is allowed (else the container gives up too).
    if (err instanceof TooDeep && minLength === 0) return fc.constant([]);
    throw err;
  }
}

function recordOf(def: Def, path: string, depth: number): fc.Arbitrary<unknown> {
  const keyDef = defOf(def.keyType, `${path} (keys)`);
  if (keyDef.type === 'enum') {
    // A record over an enum has every key.
    const keys = Object.values(keyDef.entries as Record<string, string>);
    return fc.record(
      Object.fromEntries(keys.map((k) => [k, build(def.valueType, `${path}.${k}`, depth)])),
    );
  }
  const keys = build(def.keyType, `${path} (keys)`, depth) as fc.Arbitrary<string>;
  return orElse(
    () => fc.dictionary(keys, build(def.valueType, `${path}[key]`, depth), { maxKeys: 4 }),
    fc.constant({}),
  );
}

function unionOf(def: Def, path: string, depth: number): fc.Arbitrary<unknown> {
  const options = (def.options as unknown[]).flatMap((schema) => {
    try {
      return [build(schema, path, depth)];
    } catch (err) {
      if (err instanceof TooDeep) return [];
      throw err;
    }
  });
  if (options.length === 0) throw new TooDeep();
  return fc.oneof(...options);
}
