import { z } from 'zod';
import { defineApp, op, type Tx, type User } from '@creek/app';
import { AccountSchema } from './account.js';

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
 *   `bank.interest(delta)` is `accrueinterest'(delta)`, exactly a deposit of `delta`. See
 *   `Bank.accrueInterest` in bank.ts for why that is safe.
 * - `bank.open` is red: deposits to an account need it first, so it must be ordered.
 *
 * Each op's `level` says which; `creek check --app` checks them against the invariant below.
 *
 * Who may do what, once the cluster verifies users' tokens (without that, every caller is
 * anonymous and the checks below compare nobody with nobody):
 * - every op needs a signed-in user (the default: none is `public`);
 * - an account has an owner, the user who opened it (or the one an admin opened it for), and only
 *   the owner withdraws from it. That depends on the data, so `bank.withdraw` decides it in `run`
 *   from `tx.user` and the account's owner, the same on every replica, and answers a refusal as a
 *   result like an overdraft (`reason: 'forbidden'`);
 * - anyone signed in deposits to any account and reads any balance;
 * - interest is for admins only (`role: 'admin'` in the token's claims). That depends on the user
 *   alone, so `bank.interest` says it with `access`, and the replica refuses anyone else before
 *   the op is ordered (`Forbidden`).
 */

export { AccountSchema } from './account.js';

/** A user id as an account's owner: the `sub` of the owner's token. */
export const OwnerSchema = z.string().min(1).max(256);

/** A positive amount of cents; bounded so that sums stay exact integers in a JSON number. */
export const CentsSchema = z.number().int().positive().max(1_000_000_000_000);

/** Where an account's balance (in cents) lives. */
export const balanceKey = (account: string): string => `bank/${account}/balance`;
/**
 * Where an account's owner lives: a user id, or null for an account opened by an anonymous
 * caller (a cluster that verifies no tokens). Apart from the balance, so that a deposit, which
 * does not care who owns the account, reads nothing that an open elsewhere could change.
 */
export const ownerKey = (account: string): string => `bank/${account}/owner`;

/** What the app calls an admin: the claim the dev identity (and a real provider's role) gives. */
export const isAdmin = (user: User): boolean => user.claims.role === 'admin';

/** What `bank.open` answers: whether this call made the account, its balance and owner. */
export type Opened = { created: boolean; balance: number; owner: string | null };

/**
 * What `bank.withdraw` answers. A refusal is a result, not an error: it is RedBlue's
 * `withdrawFail'` shadow op (a no-op), and as a result it shows up in the tentative view too
 * (a thrown error has no preliminary view in the SDK), so a page can say "refused, tentatively".
 * A refusal because the caller is not the owner says only who is: the balance is the owner's
 * business.
 */
export type WithdrawResult =
  | { ok: true; balance: number }
  | { ok: false; balance: number; reason: 'insufficient funds'; shortBy: number }
  | { ok: false; reason: 'forbidden'; owner: string | null };

/** The balance of an opened account; throws (the op fails) for an account never opened. */
function balanceOf(tx: Tx, account: string): number {
  const v = tx.get(balanceKey(account));
  if (v === undefined) throw new Error(`no account '${account}': open it first with bank.open`);
  if (typeof v !== 'number') throw new Error(`account '${account}' holds ${JSON.stringify(v)}`);
  return v;
}

/** The owner of an opened account (null: opened anonymously). */
function ownerOf(tx: Tx, account: string): string | null {
  const v = tx.get(ownerKey(account));
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new Error(`account '${account}' has owner ${JSON.stringify(v)}`);
  return v;
}

/** Adds `amount` to an opened account: `deposit'` and `accrueinterest'` alike. */
function credit(tx: Tx, account: string, amount: number): number {
  const balance = balanceOf(tx, account) + amount;
  tx.put(balanceKey(account), balance);
  return balance;
}

const app = defineApp(
  {
    /**
     * Opens an account with a zero balance, owned by the caller; opening an open account changes
     * nothing. `owner` opens it for someone else: an admin may (a bank sets up its customers'
     * accounts), a user may name only themselves. Without signed-in users (a cluster that verifies
     * no tokens) nobody can tell users apart, and `owner` is taken as given.
     */
    'bank.open': op({
      level: 'strong',
      args: z.object({ account: AccountSchema, owner: OwnerSchema.optional() }),
      run(tx, { account, owner }): Opened {
        if (tx.get(balanceKey(account)) !== undefined)
          return { created: false, balance: balanceOf(tx, account), owner: ownerOf(tx, account) };
        const user = tx.user;
        if (owner !== undefined && user !== null && owner !== user.id && !isAdmin(user))
          throw new Error(
            `only an admin opens an account for someone else: '${user.id}' may open '${account}' for itself only`,
          );
        const holder = owner ?? user?.id ?? null;
        tx.put(balanceKey(account), 0);
        tx.put(ownerKey(account), holder);
        return { created: true, balance: 0, owner: holder };
      },
    }),

    /** RedBlue Figure 4 `deposit'`: returns the new balance. Anyone signed in, to any account. */
    'bank.deposit': op({
      level: 'weak',
      args: z.object({ account: AccountSchema, amount: CentsSchema }),
      run: (tx, { account, amount }) => credit(tx, account, amount),
    }),

    /**
     * RedBlue Figure 4 `accrueinterest'(delta)`: the shadow op of accruing interest, a deposit of
     * the amount the generator computed (bank.ts). Admins only: a user who could call it would
     * credit themselves any amount.
     */
    'bank.interest': op({
      level: 'weak',
      args: z.object({ account: AccountSchema, amount: CentsSchema }),
      access: isAdmin,
      run: (tx, { account, amount }) => credit(tx, account, amount),
    }),

    /**
     * RedBlue Figure 2 `withdraw`: takes `amount` only if the caller owns the account and the
     * balance covers it (`withdrawAck'`), otherwise changes nothing (`withdrawFail'`). The owner
     * is compared with the caller at the op's place in the order, from the op's own user: every
     * replica decides alike, and the stable answer is the one that counts.
     */
    'bank.withdraw': op({
      level: 'strong',
      args: z.object({ account: AccountSchema, amount: CentsSchema }),
      run(tx, { account, amount }): WithdrawResult {
        const balance = balanceOf(tx, account);
        const owner = ownerOf(tx, account);
        if (owner !== (tx.user?.id ?? null)) return { ok: false, reason: 'forbidden', owner };
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
  },
  {
    // The page's branches share a context per customer (page.tsx): any signed-in user may join
    // one. A member can make the others' ops in it wait for ops it names (for a bounded time),
    // which delays them and changes nothing they read; a bank's tellers are trusted with that.
    contexts: 'signed-in',
    invariants: {
      /** RedBlue §5.3's invariant: what makes `bank.withdraw` strong (`creek check` shows why). */
      'no balance is negative': (read) =>
        read
          .scan('bank/')
          .every(([key, value]) => !key.endsWith('/balance') || (value as number) >= 0),
    },
  },
);

export default app;
export type BankApp = typeof app;
