import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp, op, type App } from '@creek/app';
import { adviseApp, type OpAdvice } from '../../src/check/advise-app.js';

/**
 * The weak-or-strong advisor on small apps whose answers are known by hand, and on the RedBlue
 * bank, which must come out as the paper labels it (§5.3).
 */

/** The example bank, by its path: the server's tests do not build against the examples. */
const BANK = new URL('../../../examples/src/bank/app.ts', import.meta.url).href;
const bank = ((await import(BANK)) as { default: App }).default;

function advise(app: App, seed = 1, runs = 200): Map<string, OpAdvice> {
  return new Map(adviseApp({ app, runs, seed }).map((a) => [a.op, a]));
}

const counter = defineApp(
  {
    incr: op({
      args: z.object({ by: z.number().int().min(1).max(10) }),
      public: true,
      level: 'weak',
      run(tx, { by }) {
        const n = tx.get('n');
        tx.put('n', (typeof n === 'number' ? n : 0) + by);
      },
    }),
    read: op({
      args: z.object({}),
      public: true,
      readOnly: true,
      run: (tx) => tx.get('n') ?? 0,
    }),
  },
  { invariants: { 'n is never negative': (read) => ((read.get('n') ?? 0) as number) >= 0 } },
);

const register = defineApp({
  set: op({
    args: z.object({ value: z.string().min(1).max(3) }),
    public: true,
    run: (tx, { value }) => tx.put('r', value),
  }),
  get: op({ args: z.object({}), public: true, readOnly: true, run: (tx) => tx.get('r') ?? null }),
});

const stock = defineApp(
  {
    fill: op({
      args: z.object({ count: z.number().int().min(1).max(5) }),
      public: true,
      run(tx, { count }) {
        const n = tx.get('stock');
        tx.put('stock', (typeof n === 'number' ? n : 0) + count);
      },
    }),
    take: op({
      args: z.object({}),
      public: true,
      level: 'weak',
      run(tx) {
        const n = tx.get('stock');
        if (typeof n !== 'number' || n < 1) return false;
        tx.put('stock', n - 1);
        return true;
      },
    }),
  },
  {
    invariants: { 'stock is never negative': (read) => ((read.get('stock') ?? 0) as number) >= 0 },
  },
);

describe('adviseApp', () => {
  it('finds a commuting counter weak, and its read weak with an answer that depends on order', () => {
    const a = advise(counter);
    expect(a.get('incr')).toMatchObject({ verdict: 'weak', conflicts: [], mismatch: false });
    expect(a.get('read')).toMatchObject({ verdict: 'weak', answerDependsOn: ['incr'] });
  });

  it('finds a register set strong: two concurrent sets do not commute, shown on their values', () => {
    const a = advise(register);
    const set = a.get('set')!;
    expect(set.verdict).toBe('strong');
    expect(set.conflicts).toEqual(['set']);
    const c = set.counterexample!;
    expect(c.kind).toBe('does-not-commute');
    expect(c.other!.op).toBe('set');
    // Shrunk: one key, holding each call's value in the order that put it last.
    expect(c.keys).toEqual([
      {
        key: 'r',
        values: [
          (c.other!.args as { value: string }).value,
          (c.call.args as { value: string }).value,
        ],
      },
    ]);
    // A read changes nothing: weak, though its answer depends on whether the set came first.
    expect(a.get('get')).toMatchObject({ verdict: 'weak', answerDependsOn: ['set'] });
  });

  it('finds a decrement that checks the stock strong: two concurrent takes of the last item break the invariant', () => {
    const a = advise(stock);
    const take = a.get('take')!;
    expect(take).toMatchObject({ verdict: 'strong', declared: 'weak', mismatch: true });
    const c = take.counterexample!;
    expect(c).toMatchObject({
      kind: 'breaks-invariant',
      invariants: ['stock is never negative'],
      state: [['stock', 1]],
      call: { op: 'take', answer: { ok: true, value: true } },
      other: { op: 'take', answer: { ok: true, value: true } },
      keys: [{ key: 'stock', values: [-1] }],
    });
    expect(a.get('fill')).toMatchObject({ verdict: 'weak', mismatch: false });
  });

  it('labels the RedBlue bank as the paper does, and shows a withdrawal overdrawing', () => {
    const a = advise(bank, 7);
    expect(a.get('bank.deposit')).toMatchObject({ verdict: 'weak', mismatch: false });
    expect(a.get('bank.interest')).toMatchObject({ verdict: 'weak', mismatch: false });
    expect(a.get('bank.balance')?.verdict).toBe('weak');
    expect(a.get('bank.open')?.verdict).toBe('strong');
    const withdraw = a.get('bank.withdraw')!;
    expect(withdraw).toMatchObject({ verdict: 'strong', declared: 'strong', mismatch: false });
    const c = withdraw.counterexample!;
    expect(c.kind).toBe('breaks-invariant');
    expect(c.invariants).toEqual(['no balance is negative']);
    expect(c.other!.op).toBe('bank.withdraw');
    // Both withdrawals were told yes on the same balance; together they overdraw it.
    expect(c.call.answer).toMatchObject({ ok: true, value: { ok: true } });
    expect(c.other!.answer).toMatchObject({ ok: true, value: { ok: true } });
    expect(c.keys).toHaveLength(1);
    expect(c.keys[0]!.key).toMatch(/^bank\/.+\/balance$/);
    expect(c.keys[0]!.values[0]).toBeLessThan(0);
  });

  it('keeps both ops of a non-commuting pair strong, even when one of them is declared strong', () => {
    // RedBlue's bank before its shadow-op form: a deposit adds, interest multiplies. Marking
    // interest strong orders it against other strong ops only: a weak deposit concurrent with it
    // still lands before it at one replica and after it at another (Theorem 1 asks blue ops to
    // commute with every op, red ones included), so the advice does not offer "deposit may be
    // weak if interest is strong".
    const account = defineApp({
      deposit: op({
        args: z.object({ amount: z.number().int().min(1).max(9) }),
        public: true,
        level: 'weak',
        run(tx, { amount }) {
          const n = tx.get('balance');
          tx.put('balance', (typeof n === 'number' ? n : 0) + amount);
        },
      }),
      interest: op({
        args: z.object({}),
        public: true,
        level: 'strong',
        run(tx) {
          const n = tx.get('balance');
          tx.put('balance', (typeof n === 'number' ? n : 0) * 2);
        },
      }),
    });
    const advice = advise(account);
    const deposit = advice.get('deposit')!;
    expect(deposit.verdict).toBe('strong');
    expect(deposit.conflicts).toEqual(['interest']);
    expect(deposit.reasons).toContain(
      'it does not commute with interest: both must be strong (Gemini §5.3, rule 1)',
    );
    expect(deposit.mismatch).toBe(true);
    expect(advice.get('interest')!.verdict).toBe('strong');
    expect(advice.get('interest')!.conflicts).toContain('deposit');
  });

  it('repeats itself for a seed', () => {
    const strip = (m: Map<string, OpAdvice>) => JSON.stringify([...m]);
    expect(strip(advise(bank, 3, 50))).toBe(strip(advise(bank, 3, 50)));
  });
});
