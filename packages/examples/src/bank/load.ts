import { Forbidden } from '@creek/client';
import type { Bank, WithdrawResult } from './bank.js';
import { seededRng } from '../shared/random.js';

/**
 * A concurrent randomized load on the bank: `banks.length` clients (branches), each connected to
 * its own replica where it can, each running `opsPerClient` ops one after another, drawn from a
 * seeded PRNG over a few shared accounts so that withdrawals contend. It records what a ledger
 * needs (what was deposited, which withdrawals the stable answer accepted), how often a tentative
 * answer was revised by the stable one, and the latency of each kind of op.
 */

export interface LoadOptions {
  readonly accounts: readonly string[];
  readonly opsPerClient: number;
  /** Seeds the PRNG: the same seed draws the same ops (their outcomes depend on the interleaving). */
  readonly seed: number;
  /** Largest deposit or withdrawal, in cents (amounts are uniform in 1 .. maxCents). */
  readonly maxCents: number;
  /** Interest rate of an accrual, in basis points. */
  readonly rateBps: number;
  readonly mix?: OpMix;
  /** Each op's final view must come within this many ms, or the op counts as failed. */
  readonly opTimeoutMs?: number;
  readonly onProgress?: (done: number) => void;
  /**
   * Whom each client (by index) is signed in as; absent, or null for a client: anonymous, as on a
   * cluster that verifies no tokens. The load checks every answer against who may do what.
   */
  readonly users?: readonly (LoadUser | null)[];
  /** Each account's owner, as `seedAccounts` opened it; absent: every account is nobody's. */
  readonly owners?: ReadonlyMap<string, string | null>;
}

/** A signed-in load client: its user id, and whether its token makes it an admin. */
export interface LoadUser {
  readonly id: string;
  readonly admin: boolean;
}

/** Relative weights of the op kinds. */
export interface OpMix {
  readonly deposit: number;
  readonly withdraw: number;
  readonly balance: number;
  readonly interest: number;
}

/** Withdrawals slightly outweigh deposits, so balances drift down and some withdrawals are refused. */
export const DEFAULT_MIX: OpMix = { deposit: 35, withdraw: 45, balance: 15, interest: 5 };

export interface LoadResult {
  ops: number;
  elapsedMs: number;
  readonly deposits: { count: number; cents: number };
  /** Accruals applied, and those the cluster refused (`Forbidden`: the client is no admin). */
  readonly interest: { count: number; cents: number; forbidden: number };
  readonly withdrawals: {
    accepted: number;
    acceptedCents: number;
    /** Refused for insufficient funds. */
    refused: number;
    /** Refused because the client's user does not own the account. */
    forbidden: number;
    /** Stable answer differs from the first tentative one in any way (speculation misses, Creek §6). */
    revised: number;
    /** ... and the decision itself (accepted / refused) changed (or there was no tentative view). */
    decisionRevised: number;
    /** Tentative views after the first: a reorder made the replica re-execute and answer again. */
    retentatives: number;
  };
  /** Balance reads, and those whose stable value differs from the first tentative one. */
  readonly balanceReads: { count: number; revised: number };
  /** Net change per account that the clients' answers account for: deposits + interest − accepted. */
  readonly ledger: Map<string, number>;
  /** Lowest balance any stable answer (withdrawal or read) reported; Infinity if none. */
  minStableBalance: number;
  /** Ops that ended in an error, with the error's message. */
  readonly failures: string[];
  /**
   * Answers that broke who may do what: a non-owner's withdrawal not refused as forbidden, an
   * owner's refused as forbidden, a non-admin's interest applied. (An admin's interest refused
   * is a failure: it ended in an error.)
   */
  readonly violations: string[];
  /** Latencies (ms) by op kind and view. */
  readonly latency: {
    deposit: number[];
    withdrawTentative: number[];
    withdrawStable: number[];
    balanceTentative: number[];
    balanceStable: number[];
    interest: number[];
  };
}

/** Runs the load on `banks` (one per client) and resolves when every client has finished. */
export async function runLoad(banks: readonly Bank[], options: LoadOptions): Promise<LoadResult> {
  if (banks.length === 0) throw new Error('runLoad: give at least one client');
  if (options.accounts.length === 0) throw new Error('runLoad: give at least one account');
  const mix = options.mix ?? DEFAULT_MIX;
  const call = { timeoutMs: options.opTimeoutMs };
  const r: LoadResult = {
    ops: 0,
    elapsedMs: 0,
    deposits: { count: 0, cents: 0 },
    interest: { count: 0, cents: 0, forbidden: 0 },
    withdrawals: {
      accepted: 0,
      acceptedCents: 0,
      refused: 0,
      forbidden: 0,
      revised: 0,
      decisionRevised: 0,
      retentatives: 0,
    },
    balanceReads: { count: 0, revised: 0 },
    ledger: new Map(options.accounts.map((a) => [a, 0])),
    minStableBalance: Infinity,
    failures: [],
    violations: [],
    latency: {
      deposit: [],
      withdrawTentative: [],
      withdrawStable: [],
      balanceTentative: [],
      balanceStable: [],
      interest: [],
    },
  };
  const credit = (account: string, cents: number): void =>
    void r.ledger.set(account, r.ledger.get(account)! + cents);
  const stable = (balance: number): void =>
    void (r.minStableBalance = Math.min(r.minStableBalance, balance));

  const start = performance.now();
  await Promise.all(
    banks.map(async (bank, client) => {
      // One PRNG per client, so each client's ops do not depend on how the clients interleave.
      const random = seededRng(options.seed * 7919 + client);
      const user = options.users?.[client] ?? null;
      const who = user === null ? 'anonymous' : `'${user.id}'`;
      // Anonymous clients talk to a cluster that checks no access, so any of them accrues.
      const mayAccrue = user === null || user.admin;
      const owns = (account: string): boolean =>
        (options.owners?.get(account) ?? null) === (user?.id ?? null);
      for (let i = 0; i < options.opsPerClient; i++) {
        const account = options.accounts[Math.floor(random() * options.accounts.length)]!;
        const cents = 1 + Math.floor(random() * options.maxCents);
        const kind = pick(mix, random());
        const t0 = performance.now();
        try {
          if (kind === 'deposit') {
            await bank.deposit(account, cents, call);
            r.latency.deposit.push(performance.now() - t0);
            r.deposits.count++;
            r.deposits.cents += cents;
            credit(account, cents);
          } else if (kind === 'interest') {
            const accrual = await bank
              .accrueInterest(account, options.rateBps, call)
              .catch((err: unknown) => {
                if (!(err instanceof Forbidden) || mayAccrue) throw err;
                return null; // refused before it was ordered: nothing was credited
              });
            if (accrual === null) {
              r.interest.forbidden++;
            } else {
              r.latency.interest.push(performance.now() - t0);
              if (accrual.amount > 0 && !mayAccrue)
                r.violations.push(`interest ${account}: applied for ${who}, who is no admin`);
              r.interest.count++;
              r.interest.cents += accrual.amount;
              credit(account, accrual.amount);
            }
          } else if (kind === 'withdraw') {
            // The first tentative view: what the user saw first (Creek §6 measures its accuracy).
            const seen: { first?: WithdrawResult } = {};
            const outcome = await bank.withdraw(account, cents, call).setCallbacks({
              onUpdate: (v) => {
                // A re-execution after a reorder sends another tentative view.
                if (seen.first !== undefined) return void r.withdrawals.retentatives++;
                r.latency.withdrawTentative.push(performance.now() - t0);
                seen.first = v;
              },
            });
            const tentative = seen.first;
            r.latency.withdrawStable.push(performance.now() - t0);
            const forbidden = !outcome.ok && outcome.reason === 'forbidden';
            if (forbidden === owns(account))
              r.violations.push(
                `withdraw ${account}: ${forbidden ? 'refused as forbidden for' : 'not refused for'} ${who}, ${owns(account) ? 'its owner' : 'who does not own it'}`,
              );
            if (outcome.ok) {
              stable(outcome.balance);
              r.withdrawals.accepted++;
              r.withdrawals.acceptedCents += cents;
              credit(account, -cents);
            } else if (outcome.reason === 'forbidden') {
              r.withdrawals.forbidden++;
            } else {
              stable(outcome.balance);
              r.withdrawals.refused++;
            }
            if (JSON.stringify(tentative) !== JSON.stringify(outcome)) r.withdrawals.revised++;
            if (tentative?.ok !== outcome.ok) r.withdrawals.decisionRevised++;
          } else {
            const seen: { first?: number } = {};
            const balance = await bank.balance(account, call).setCallbacks({
              onUpdate: (v) => {
                if (seen.first !== undefined) return;
                r.latency.balanceTentative.push(performance.now() - t0);
                seen.first = v;
              },
            });
            const tentative = seen.first;
            r.latency.balanceStable.push(performance.now() - t0);
            stable(balance);
            r.balanceReads.count++;
            if (tentative !== balance) r.balanceReads.revised++;
          }
        } catch (err) {
          r.failures.push(
            `${kind} ${account}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        r.ops++;
        options.onProgress?.(r.ops);
      }
    }),
  );
  r.elapsedMs = performance.now() - start;
  return r;
}

/**
 * Opens the accounts and deposits `initialCents` in each through `options.opener` (default: the
 * first client), then makes every client's replica catch up: a strong read at a replica is
 * answered stably only after that replica has committed everything ordered before it, the opens
 * included. Without this, a weak deposit at a replica that has not yet heard of the account would
 * fail there (its only answer).
 *
 * `options.owners` names an account's owner (opening for someone else takes an admin, once the
 * cluster verifies users); otherwise the opener owns it. Resolves with each account's owner as the
 * cluster answered (an account that was open already keeps its owner).
 */
export async function seedAccounts(
  banks: readonly Bank[],
  accounts: readonly string[],
  initialCents: number,
  options: { opener?: Bank; owners?: ReadonlyMap<string, string> } = {},
): Promise<Map<string, string | null>> {
  const opener = options.opener ?? banks[0]!;
  const owners = new Map<string, string | null>();
  for (const account of accounts) {
    const owner = options.owners?.get(account);
    const opened = await opener.open(account, owner === undefined ? {} : { owner });
    owners.set(account, opened.owner);
    // Seeding an account that is already open (a rerun on the same cluster) tops it up instead.
    if (initialCents > opened.balance) await opener.deposit(account, initialCents - opened.balance);
  }
  await quiesce(banks, accounts);
  return owners;
}

/**
 * A barrier: every client reads every account strongly. A strong op carries its replica's weak
 * ops before it in its causal context and commits after them (Creek §4), so once all these reads
 * are stable, every op any client was answered for is committed, and any strong read that starts
 * afterwards sees all of them.
 */
export async function quiesce(banks: readonly Bank[], accounts: readonly string[]): Promise<void> {
  await Promise.all(banks.map((b) => Promise.all(accounts.map((a) => b.balance(a)))));
}

function pick(mix: OpMix, u: number): keyof OpMix {
  const kinds = Object.keys(mix) as (keyof OpMix)[];
  const total = kinds.reduce((s, k) => s + mix[k], 0);
  let x = u * total;
  for (const k of kinds) {
    x -= mix[k];
    if (x < 0) return k;
  }
  return kinds[kinds.length - 1]!;
}
