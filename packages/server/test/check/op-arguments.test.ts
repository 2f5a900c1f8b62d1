import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp, op, type ArgsGenerator } from '@creek/app';
import { adviseApp } from '../../src/check/advise-app.js';
import { argumentsOf, BadGenerator, checkGenerators } from '../../src/check/op-arguments.js';

/**
 * Ops' own generators of arguments (OpDefinition.generate): used by `creek check` in place of the
 * schema's arbitrary, and refused, naming the op, when they cannot be used.
 */

/** An account id the schema checks only by a refinement, which creek check cannot model. */
const account = z.string().refine((s) => /^acct-[0-9]$/.test(s), 'not an account id');

/** Accounts opened and drawn on, by ids only a refinement describes. */
function bank(generate: { open?: ArgsGenerator; withdraw?: ArgsGenerator }) {
  return defineApp(
    {
      open: op({
        args: z.object({ account }),
        public: true,
        ...(generate.open === undefined ? {} : { generate: generate.open }),
        run(tx, { account }) {
          if (tx.get(account) === undefined) tx.put(account, 1);
        },
      }),
      withdraw: op({
        args: z.object({ account }),
        public: true,
        ...(generate.withdraw === undefined ? {} : { generate: generate.withdraw }),
        run(tx, { account }) {
          const balance = tx.get(account);
          if (typeof balance !== 'number' || balance < 1) throw new Error('no funds');
          tx.put(account, balance - 1);
        },
      }),
    },
    {
      invariants: {
        'no balance is negative': (read) =>
          read.scan('acct-').every(([, v]) => typeof v === 'number' && v >= 0),
      },
    },
  );
}

const accounts: ArgsGenerator = (f: typeof fc) =>
  f.record({ account: f.constantFrom('acct-1', 'acct-2') });

describe('an op with a generator', () => {
  it('is called with what its generator yields, not with what the schema would give', () => {
    const app = bank({ open: accounts, withdraw: accounts });
    const drawn = fc.sample(argumentsOf(app, 'withdraw'), { seed: 1, numRuns: 50 });
    expect(new Set(drawn.map((a) => (a as { account: string }).account))).toEqual(
      new Set(['acct-1', 'acct-2']),
    );
  });

  it('lets the advice reach what the schema alone cannot', () => {
    // From the schema alone, almost no generated id passes the refinement: nothing is found.
    const blind = adviseApp({ app: bank({}), runs: 100, seed: 3 });
    expect(blind.map((a) => [a.op, a.verdict])).toEqual([
      ['open', 'unchecked'],
      ['withdraw', 'unchecked'],
    ]);
    // With generators, two withdrawals told yes on one balance of 1 overdraw it.
    const seen = adviseApp({
      app: bank({ open: accounts, withdraw: accounts }),
      runs: 100,
      seed: 3,
    });
    const withdraw = seen.find((a) => a.op === 'withdraw')!;
    expect(withdraw.verdict).toBe('strong');
    expect(withdraw.counterexample?.invariants).toEqual(['no balance is negative']);
    expect(withdraw.counterexample?.call.args).toMatchObject({
      account: expect.stringMatching(/^acct-[12]$/),
    });
  });
});

describe('a generator that cannot be used', () => {
  it('is refused when the app is defined, if it is no function', () => {
    expect(() =>
      defineApp({
        x: op({ args: z.object({}), generate: 'fc.record({})' as never, run: () => null }),
      }),
    ).toThrow("operation 'x': generate must be a function (fc) => an arbitrary of its arguments");
  });

  it.each([
    [
      'returns no arbitrary',
      () => ({ account: 'acct-1' }),
      "operation 'withdraw': generate must return a fast-check arbitrary of its arguments (built with the fc it is given, e.g. fc.record({...})), not an object that is no fast-check arbitrary",
    ],
    [
      'returns nothing',
      () => undefined,
      "operation 'withdraw': generate must return a fast-check arbitrary of its arguments (built with the fc it is given, e.g. fc.record({...})), not undefined",
    ],
    [
      'throws',
      () => {
        throw new Error('no fc here');
      },
      "operation 'withdraw': generate threw: no fc here",
    ],
    [
      'yields arguments the schema refuses',
      (f: typeof fc) => f.record({ account: f.constantFrom('acct-1', 'savings') }),
      `operation 'withdraw': generate yields arguments its schema refuses: {"account":"savings"} (invalid arguments for 'withdraw': account: not an account id)`,
    ],
    [
      'yields arguments of another shape',
      (f: typeof fc) => f.integer(),
      "operation 'withdraw': generate yields arguments its schema refuses: ",
    ],
  ] as const)('is refused, naming the op, when it %s', (_, generate, message) => {
    const app = bank({ withdraw: generate as ArgsGenerator });
    expect(() => checkGenerators(app)).toThrow(BadGenerator);
    expect(() => checkGenerators(app)).toThrow(message);
    expect(() => argumentsOf(app, 'withdraw')).toThrow(message);
  });
});
