import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argumentsFor, UnsupportedSchema } from '../../src/check/arbitraries.js';

/** Values `creek check` generates from a schema, as they reach a replica: through JSON. */
function samples(schema: z.ZodType, n = 200): unknown[] {
  return fc
    .sample(argumentsFor(schema), { seed: 42, numRuns: n })
    .map((v) => JSON.parse(JSON.stringify(v) ?? 'null') as unknown);
}

describe('arguments generated from an op schema', () => {
  it.each<[string, z.ZodType]>([
    ['strings with lengths', z.object({ s: z.string().min(2).max(5), t: z.string().length(3) })],
    ['a regex', z.object({ id: z.string().regex(/^[A-Z]{1,16}$/) })],
    ['a prefix', z.object({ prefix: z.string().startsWith('tpcc/') })],
    ['string formats', z.object({ url: z.url(), email: z.email(), uuid: z.uuid() })],
    [
      'integers',
      z.object({
        id: z.number().int().positive(),
        d: z.number().int().min(1).max(10),
        big: z.number().int().positive().max(1_000_000_000_000),
        step: z.number().int().multipleOf(5).min(-20).max(20),
      }),
    ],
    ['bounded doubles', z.object({ x: z.number().min(-1).max(1), y: z.number().positive() })],
    ['literals and enums', z.object({ l: z.literal('a'), e: z.enum(['x', 'y']) })],
    [
      'a discriminated union',
      z.discriminatedUnion('by', [
        z.object({ by: z.literal('id'), id: z.number().int().positive() }),
        z.object({ by: z.literal('name'), name: z.string().min(1) }),
      ]),
    ],
    [
      'optional, nullable and defaulted fields',
      z.object({
        o: z.string().optional(),
        n: z.number().nullable(),
        d: z.number().int().min(1).max(9).default(5),
        after: z.string().nullable().default(null),
      }),
    ],
    [
      'arrays, tuples and records',
      z.object({
        a: z
          .array(z.object({ q: z.number().int().min(1).max(10) }))
          .min(1)
          .max(15),
        t: z.tuple([z.string(), z.boolean()]),
        r: z.record(z.string(), z.number()),
      }),
    ],
    ['JSON values (recursive)', z.object({ v: z.json() })],
    [
      'a transform (its input)',
      z.object({
        n: z
          .string()
          .regex(/^\d{1,4}$/)
          .transform(Number),
      }),
    ],
    ['null', z.null()],
  ])('satisfy the schema: %s', (_, schema) => {
    const refused = samples(schema).filter((v) => !schema.safeParse(v).success);
    expect(refused).toEqual([]);
  });

  it('mostly repeat a few values, so ops meet each other’s keys', () => {
    const ids = samples(z.string().regex(/^[a-z]{1,8}$/), 300);
    const counts = [...new Set(ids)].map((id) => ids.filter((x) => x === id).length);
    // Three pooled values take about two thirds of the draws.
    const top3 = counts.sort((a, b) => b - a).slice(0, 3);
    expect(top3.reduce((a, b) => a + b, 0)).toBeGreaterThan(150);
    // The same schema elsewhere draws from the same pool.
    const again = new Set(samples(z.string().regex(/^[a-z]{1,8}$/), 300));
    for (const id of new Set(ids))
      if (ids.filter((x) => x === id).length > 30) expect(again).toContain(id);
  });

  it('keeps most integers small, whatever the range', () => {
    const counts = samples(z.number().int().min(1).max(100_000), 400) as number[];
    expect(counts.filter((n) => n <= 101).length).toBeGreaterThan(300);
    expect(Math.max(...counts)).toBeGreaterThan(101);
  });

  it.each<[z.ZodType, string]>([
    [z.object({ at: z.date() }), 'args.at: creek check cannot generate a z.date() value'],
    [
      z.object({ list: z.array(z.bigint()) }),
      'args.list[]: creek check cannot generate a z.bigint()',
    ],
    [z.map(z.string(), z.string()), 'args: creek check cannot generate a z.map() value'],
  ])('names the schema it cannot generate, and where: %#', (schema, message) => {
    expect(() => argumentsFor(schema)).toThrow(UnsupportedSchema);
    expect(() => argumentsFor(schema)).toThrow(message);
  });
});
