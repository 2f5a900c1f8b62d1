import { z } from 'zod';
import { defineApp, op, type Tx } from '@creek/app';

/**
 * The RedBlue bank (Li et al., OSDI '12, §4.2 and §5.3) as a Creek app. Replicas load this module
 * with `--app`; clients import its type (and, in Node, the app itself for argument checks).
 *
 * Money is in integer cents, so every replica computes exactly the same sums.
 *
 * Which op is weak (blue) and which strong (red), by RedBlue §5.3's rules:
 * - `bank.deposit` is blue: adding commutes with every other deposit and with a successful
 *   withdrawal (all are additions in one abelian group), and it never makes a balance negative
 *   (invariant safe). Clients invoke it weak: its answer is final at once.
 * - `bank.withdraw` is red: two withdrawals that each fit the balance alone may not fit together
 *   (§5.3: Alice's $70 and Bob's $60 from $125 would end at −$5). Clients invoke it strong, and the
 *   answer to act on (hand out the cash) is the stable one: it is computed at the op's place in
 *   the committed order, which every replica shares, so no committed state has a negative balance.
 * - Accruing interest is split into a generator and a shadow op (§5.1, Figure 4). The generator
 *   runs on the client: it reads the balance the branch sees and computes `delta`; the shadow op
 *   `accrueinterest'(delta)` is exactly `deposit'(delta)`, so it is sent as `bank.deposit`. See
 *   `Bank.accrueInterest` in bank.ts for why that is safe.
 * - `bank.open` is red: deposits to an account need it first, so it must be ordered.
 */

/** Account names: short, and safe in keys, URLs and logs. */
export const AccountSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"');

/** A positive amount of cents; bounded so that sums stay exact integers in a JSON number. */
export const CentsSchema = z.number().int().positive().max(1_000_000_000_000);

/** Where an account's balance (in cents) lives. */
export const balanceKey = (account: string): string => `bank/${account}/balance`;

/**
 * What `bank.withdraw` answers. A refusal is a result, not an error: it is RedBlue's
 * `withdrawFail'` shadow op (a no-op), and as a result it shows up in the tentative view too
 * (a thrown error has no preliminary view in the SDK), so a page can say "refused, tentatively".
 */
export type WithdrawResult =
  | { ok: true; balance: number }
  | { ok: false; balance: number; reason: 'insufficient funds'; shortBy: number };

/** The balance of an opened account; throws (the op fails) for an account never opened. */
function balanceOf(tx: Tx, account: string): number {
  const v = tx.get(balanceKey(account));
  if (v === undefined) throw new Error(`no account '${account}': open it first with bank.open`);
  if (typeof v !== 'number') throw new Error(`account '${account}' holds ${JSON.stringify(v)}`);
  return v;
}

const app = defineApp({
  /** Opens an account with a zero balance; opening an open account changes nothing. */
  'bank.open': op({
    args: z.object({ account: AccountSchema }),
    run(tx, { account }) {
      const current = tx.get(balanceKey(account));
      if (current !== undefined) return { created: false, balance: balanceOf(tx, account) };
      tx.put(balanceKey(account), 0);
      return { created: true, balance: 0 };
    },
  }),

  /** RedBlue Figure 4 `deposit'` (and `accrueinterest'`): returns the new balance. */
  'bank.deposit': op({
    args: z.object({ account: AccountSchema, amount: CentsSchema }),
    run(tx, { account, amount }) {
      const balance = balanceOf(tx, account) + amount;
      tx.put(balanceKey(account), balance);
      return balance;
    },
  }),

  /**
   * RedBlue Figure 2 `withdraw`: takes `amount` only if the balance covers it (`withdrawAck'`),
   * otherwise changes nothing (`withdrawFail'`).
   */
  'bank.withdraw': op({
    args: z.object({ account: AccountSchema, amount: CentsSchema }),
    run(tx, { account, amount }): WithdrawResult {
      const balance = balanceOf(tx, account);
      if (balance < amount)
        return { ok: false, balance, reason: 'insufficient funds', shortBy: amount - balance };
      tx.put(balanceKey(account), balance - amount);
      return { ok: true, balance: balance - amount };
    },
  }),

  /** The balance in cents. Weak: this replica's view, unordered; strong: linearizable. */
  'bank.balance': op({
    args: z.object({ account: AccountSchema }),
    readOnly: true,
    run: (tx, { account }) => balanceOf(tx, account),
  }),
});

export default app;
export type BankApp = typeof app;
