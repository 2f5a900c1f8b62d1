import fc from 'fast-check';
import { checkArgs, type AnyOpDefinition, type App, type JsonValue } from '@creek/app';
import { argumentsFor, type ArgumentOptions } from './arbitraries.js';

/**
 * The arguments `creek check` calls an op with: from the op's own generator
 * (OpDefinition.generate) where it has one, else derived from its schema (arbitraries.ts).
 *
 * A generator is the app's code, so it is checked before anything runs on it: it must return a
 * fast-check arbitrary, and the arguments it yields must pass the op's schema (a sample of
 * GENERATOR_SAMPLES of them, drawn with a fixed seed). A generator that fails either is an error
 * in the app, named with its op, not a finding about the op: `creek check` stops on it. Values
 * drawn later that the schema refuses are dropped, as those of a schema's refinement are.
 */

/** An op's generator that cannot be used: the message names the op and what is wrong. */
export class BadGenerator extends Error {}

/** Arguments a generator's sample must all pass the schema with. */
export const GENERATOR_SAMPLES = 20;

/** As the wire carries it: JSON, so undefined fields vanish and there is no -0. */
function wire(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

/** What a generator returned, in a few words, for an error. */
function described(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object that is no fast-check arbitrary';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** `name`'s generator's arbitrary, checked; throws BadGenerator. */
function generated(name: string, def: AnyOpDefinition, generate: unknown): fc.Arbitrary<unknown> {
  const prefix = `operation '${name}': generate`;
  if (typeof generate !== 'function')
    throw new BadGenerator(`${prefix} must be a function (fc) => an arbitrary of its arguments`);
  let arbitrary: unknown;
  try {
    arbitrary = (generate as (module: typeof fc) => unknown)(fc);
  } catch (err) {
    throw new BadGenerator(`${prefix} threw: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!(arbitrary instanceof fc.Arbitrary))
    throw new BadGenerator(
      `${prefix} must return a fast-check arbitrary of its arguments (built with the fc it is given, e.g. fc.record({...})), not ${described(arbitrary)}`,
    );
  let sample: unknown[];
  try {
    sample = fc.sample(arbitrary as fc.Arbitrary<unknown>, {
      seed: 0x5eed,
      numRuns: GENERATOR_SAMPLES,
    });
  } catch (err) {
    throw new BadGenerator(
      `${prefix}: its arbitrary threw: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  for (const args of sample) {
    const checked = checkArgs(name, def, wire(args));
    if (!checked.ok)
      throw new BadGenerator(
        `${prefix} yields arguments its schema refuses: ${JSON.stringify(wire(args))} (${checked.error})`,
      );
  }
  return arbitrary as fc.Arbitrary<unknown>;
}

/**
 * The arbitrary of `name`'s arguments: its generator's, checked (BadGenerator), or its schema's
 * (UnsupportedSchema where the schema has a kind creek check cannot generate).
 */
export function argumentsOf(
  app: App,
  name: string,
  options: ArgumentOptions = {},
): fc.Arbitrary<unknown> {
  const def = app.lookup(name)!;
  return def.generate === undefined
    ? argumentsFor(def.args, options)
    : generated(name, def, def.generate);
}

/** Checks every generator of the app's ops; throws BadGenerator for the first that fails. */
export function checkGenerators(app: App): void {
  for (const name of Object.keys(app.definitions).sort()) {
    const def = app.lookup(name)!;
    if (def.generate !== undefined) generated(name, def, def.generate);
  }
}
