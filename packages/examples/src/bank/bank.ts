import type { Correctable, CreekClient, InvokeOptions } from '@creek/client';
// Types only: the browser page bundles this file and must not pull in server code.
import type { BankApp, Opened, WithdrawResult } from './app.js';
import { interestOn } from './money.js';

export type { Opened, WithdrawResult };

/** Per-call options passed on to the SDK: a timeout for the final view, an AbortSignal. */
export type CallOptions = Omit<InvokeOptions, 'levels'>;

/** What accruing interest did: the balance the generator saw, the amount, the balance after. */
export interface Accrual {
  /** The balance this branch saw when it computed the interest (the generator's state). */
  readonly basedOn: number;
  /** Interest credited, in cents (0: nothing was sent). */
  readonly amount: number;
  /** The balance the shadow deposit answered with (this replica's tentative view). */
  readonly balance: number;
}

/**
 * One branch of the bank: a typed face over a Creek client, used by the load, the CLI and the
 * page alike. Amounts are cents. Each method picks the consistency the RedBlue labelling asks for
 * (see app.ts): deposits are weak, withdrawals strong, reads show both views.
 */
export class Bank {
  constructor(private readonly creek: CreekClient<BankApp>) {}

  /**
   * Opens an account (strong: deposits must find it, wherever they are ordered), owned by the
   * signed-in user, or by `owner` (an admin may open accounts for others).
   */
  async open(account: string, options?: CallOptions & { owner?: string }): Promise<Opened> {
    const { owner, ...call } = options ?? {};
    return this.creek.invokeStrong(
      'bank.open',
      owner === undefined ? { account } : { account, owner },
      call,
    );
  }

  /**
   * A deposit, weak (blue, RedBlue §5.3): one final view, this replica's new balance, as soon as
   * the replica executed it. It is ordered and stabilized later; as an addition it lands in the
   * same balance whatever the order.
   */
  deposit(account: string, cents: number, options?: CallOptions): Correctable<number> {
    return this.creek.invokeWeak('bank.deposit', { account, amount: cents }, options);
  }

  /**
   * A withdrawal, strong (red, RedBlue §5.3). The preliminary view is the replica's tentative
   * answer (it may be revised: a concurrent withdrawal elsewhere can be ordered first); the final
   * view is the stable answer, the one to hand cash out on. Only the account's owner withdraws:
   * anyone else is answered `{ ok: false, reason: 'forbidden' }`.
   */
  withdraw(account: string, cents: number, options?: CallOptions): Correctable<WithdrawResult> {
    return this.creek.invoke('bank.withdraw', { account, amount: cents }, options);
  }

  /** The balance: a tentative view (this replica's speculative order), then the stable one. */
  balance(account: string, options?: CallOptions): Correctable<number> {
    return this.creek.invoke('bank.balance', { account }, options);
  }

  /** The balance this replica holds now: weak, answered locally without ordering. */
  localBalance(account: string, options?: CallOptions): Correctable<number> {
    return this.creek.invokeWeak('bank.balance', { account }, options);
  }

  /**
   * The shadow op of an accrual, `accrueinterest'(cents)`: a weak deposit of an amount computed
   * beforehand (see accrueInterest). Admins only.
   */
  interest(account: string, cents: number, options?: CallOptions): Correctable<number> {
    return this.creek.invokeWeak('bank.interest', { account, amount: cents }, options);
  }

  /**
   * RedBlue's `accrueinterest` as a generator and a shadow op (§5, Figure 4).
   *
   * Generator: read the balance this branch sees (weak, local, no side effect) and compute the
   * interest. Shadow: `bank.interest`, a deposit of exactly that amount, weak. Admins only: the
   * replica refuses anyone else's shadow op with `Forbidden` (the read alone is anyone's).
   *
   * Why this is safe as a weak op, though `balance × rate` is not:
   * - The original op multiplies, and multiplication does not commute with a deposit's addition
   *   (§4.2): applied in different orders, branches would credit different amounts. Creek would
   *   still converge (every op ends up in one total order and is re-executed there), but a
   *   reorder would silently change the amount credited after the branch had reported it.
   * - The shadow op is an addition of a fixed amount. It commutes with every deposit and every
   *   accepted withdrawal, so the amount credited is the same in every order, tentative and
   *   stable; and it is never negative, so it cannot break `balance ≥ 0` (invariant safe, §5.3).
   *   By §5.3's rules it may be blue.
   * - As §5.4 says, the interest is based on the balance this branch observed, not on the
   *   balance at the deposit's final place in the order: a concurrent deposit elsewhere does
   *   not earn interest in this accrual. That is the intended meaning.
   */
  async accrueInterest(account: string, rateBps: number, options?: CallOptions): Promise<Accrual> {
    if (!Number.isInteger(rateBps) || rateBps < 0)
      throw new RangeError(`rateBps must be a whole number of basis points ≥ 0, got ${rateBps}`);
    const basedOn = await this.localBalance(account, options);
    const amount = interestOn(basedOn, rateBps);
    if (amount === 0) return { basedOn, amount, balance: basedOn };
    const balance = await this.interest(account, amount, options);
    return { basedOn, amount, balance };
  }
}
