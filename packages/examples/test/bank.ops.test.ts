import { CreekClient, InvalidArguments, OperationFailed } from '@creek/client';
import { MemoryBinding, MemoryCluster } from '@creek/client/memory';
import { checkAccess } from '@creek/app';
import type { Tx } from '@creek/server';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import app, { balanceKey, ownerKey, type BankApp, type WithdrawResult } from '../src/bank/app.js';
import { Bank } from '../src/bank/bank.js';
import { quiesce, runLoad, seedAccounts } from '../src/bank/load.js';
import { formatCents, interestOn, parseDollars } from '../src/bank/money.js';
import { MapTx, runOp, user } from './support/map-tx.js';

/** Runs an op of the bank app serially, checking its arguments first like a replica does. */
function run(tx: Tx, name: keyof BankApp['definitions'], args: unknown): unknown {
  return runOp(app, tx, name, args);
}

const alice = user('alice');
const bob = user('bob');
const admin = user('admin', { role: 'admin' });

describe('the bank ops, executed serially', () => {
  it('opens an account once, deposits, withdraws, and refuses an overdraft as a result', () => {
    const tx = new MapTx();
    expect(run(tx, 'bank.open', { account: 'a' })).toEqual({
      created: true,
      balance: 0,
      owner: null,
    });
    expect(run(tx, 'bank.deposit', { account: 'a', amount: 500 })).toBe(500);
    expect(run(tx, 'bank.open', { account: 'a' })).toEqual({
      created: false,
      balance: 500,
      owner: null,
    });
    expect(run(tx, 'bank.withdraw', { account: 'a', amount: 200 })).toEqual({
      ok: true,
      balance: 300,
    });
    expect(run(tx, 'bank.withdraw', { account: 'a', amount: 301 })).toEqual({
      ok: false,
      balance: 300,
      reason: 'insufficient funds',
      shortBy: 1,
    });
    expect(run(tx, 'bank.balance', { account: 'a' })).toBe(300);
    expect(tx.get(balanceKey('a'))).toBe(300);
  });

  it('fails ops on an account that was never opened, and rejects bad arguments', () => {
    const tx = new MapTx();
    expect(() => run(tx, 'bank.deposit', { account: 'nope', amount: 1 })).toThrow(
      /no account 'nope'/,
    );
    expect(() => run(tx, 'bank.balance', { account: 'nope' })).toThrow(/open it first/);
    for (const bad of [0, -5, 1.5, Number.NaN, 1e13])
      expect(() => run(tx, 'bank.deposit', { account: 'a', amount: bad })).toThrow();
    expect(() => run(tx, 'bank.open', { account: 'has space' })).toThrow(/letters, digits/);
  });

  it('never lets a serial history go below zero, and the balance is the ledger (fast-check)', () => {
    const opArb = fc.oneof(
      fc.record({
        kind: fc.constant('deposit' as const),
        amount: fc.integer({ min: 1, max: 1e4 }),
      }),
      fc.record({
        kind: fc.constant('withdraw' as const),
        amount: fc.integer({ min: 1, max: 1e4 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const tx = new MapTx();
        run(tx, 'bank.open', { account: 'a' });
        let ledger = 0;
        for (const o of ops) {
          if (o.kind === 'deposit') {
            run(tx, 'bank.deposit', { account: 'a', amount: o.amount });
            ledger += o.amount;
          } else {
            const r = run(tx, 'bank.withdraw', {
              account: 'a',
              amount: o.amount,
            }) as WithdrawResult;
            // Anonymous caller, anonymous account: never refused as forbidden.
            expect(r.ok || r.reason === 'insufficient funds').toBe(true);
            if (r.ok || r.reason === 'insufficient funds')
              expect(r.balance).toBeGreaterThanOrEqual(0);
            // Refused exactly when the balance did not cover it.
            expect(r.ok).toBe(ledger >= o.amount);
            if (r.ok) ledger -= o.amount;
          }
          expect(tx.get(balanceKey('a'))).toBe(ledger);
        }
      }),
    );
  });

  it('makes interest commute with deposits by applying it as a deposit (RedBlue §4.2, §5)', () => {
    // The original ops do not commute: multiply-then-add differs from add-then-multiply.
    const deposit = (b: number): number => b + 2_000;
    const accrueOriginal = (b: number): number => b + interestOn(b, 500);
    expect(accrueOriginal(deposit(10_000))).not.toBe(deposit(accrueOriginal(10_000)));
    // Generator on the state a branch saw, then shadow deposits in any order: same balance.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e7 }),
        fc.array(fc.integer({ min: 1, max: 1e5 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.nat(),
        (opening, deposits, rateBps, rotate) => {
          const delta = interestOn(opening, rateBps);
          const shadows = delta > 0 ? [...deposits, delta] : deposits;
          const k = shadows.length === 0 ? 0 : rotate % shadows.length;
          const orders = [
            shadows,
            [...shadows].reverse(),
            [...shadows.slice(k), ...shadows.slice(0, k)],
          ];
          const finals = orders.map((order) => {
            const tx = new MapTx();
            run(tx, 'bank.open', { account: 'a' });
            if (opening > 0) run(tx, 'bank.deposit', { account: 'a', amount: opening });
            for (const amount of order) run(tx, 'bank.deposit', { account: 'a', amount });
            return tx.get(balanceKey('a'));
          });
          expect(new Set(finals).size).toBe(1);
        },
      ),
    );
  });
});

describe('who may do what', () => {
  it('the user who opens an account owns it; only the owner withdraws, anyone deposits', () => {
    const tx = new MapTx();
    expect(run(tx.as(alice), 'bank.open', { account: 'a' })).toEqual({
      created: true,
      balance: 0,
      owner: 'alice',
    });
    expect(tx.get(ownerKey('a'))).toBe('alice');
    // Bob deposits to Alice's account: anyone signed in may.
    expect(run(tx.as(bob), 'bank.deposit', { account: 'a', amount: 1_000 })).toBe(1_000);
    // Bob's withdrawal is refused as a result, and says only whose the account is.
    expect(run(tx.as(bob), 'bank.withdraw', { account: 'a', amount: 100 })).toEqual({
      ok: false,
      reason: 'forbidden',
      owner: 'alice',
    });
    // So is the admin's: being an admin opens interest, not other people's accounts.
    expect(run(tx.as(admin), 'bank.withdraw', { account: 'a', amount: 100 })).toMatchObject({
      ok: false,
      reason: 'forbidden',
    });
    // Forbidden comes before the funds: a non-owner learns nothing of the balance from it.
    expect(run(tx.as(bob), 'bank.withdraw', { account: 'a', amount: 5_000 })).toEqual({
      ok: false,
      reason: 'forbidden',
      owner: 'alice',
    });
    expect(tx.get(balanceKey('a'))).toBe(1_000);
    // Alice withdraws, and is refused an overdraft like anyone.
    expect(run(tx.as(alice), 'bank.withdraw', { account: 'a', amount: 400 })).toEqual({
      ok: true,
      balance: 600,
    });
    expect(run(tx.as(alice), 'bank.withdraw', { account: 'a', amount: 601 })).toMatchObject({
      ok: false,
      reason: 'insufficient funds',
      shortBy: 1,
    });
    // Reopening someone else's account changes nothing, and does not make it yours.
    expect(run(tx.as(bob), 'bank.open', { account: 'a' })).toEqual({
      created: false,
      balance: 600,
      owner: 'alice',
    });
    expect(run(tx.as(bob), 'bank.withdraw', { account: 'a', amount: 1 })).toMatchObject({
      reason: 'forbidden',
    });
  });

  it("an anonymous caller withdraws from no one's account but its own kind: one opened anonymously", () => {
    // With tokens verified, an anonymous caller never reaches run (below); without, every
    // caller is anonymous and accounts are nobody's, so the bank works as before.
    const tx = new MapTx();
    run(tx.as(alice), 'bank.open', { account: 'alices' });
    run(tx.as(alice), 'bank.deposit', { account: 'alices', amount: 500 });
    expect(run(tx.as(null), 'bank.withdraw', { account: 'alices', amount: 1 })).toEqual({
      ok: false,
      reason: 'forbidden',
      owner: 'alice',
    });
    run(tx.as(null), 'bank.open', { account: 'nobodys' });
    run(tx.as(null), 'bank.deposit', { account: 'nobodys', amount: 500 });
    expect(run(tx.as(null), 'bank.withdraw', { account: 'nobodys', amount: 1 })).toEqual({
      ok: true,
      balance: 499,
    });
    // ... and a signed-in user may not take it from nobody.
    expect(run(tx.as(alice), 'bank.withdraw', { account: 'nobodys', amount: 1 })).toEqual({
      ok: false,
      reason: 'forbidden',
      owner: null,
    });
  });

  it('an admin opens accounts for others; a user opens only for itself', () => {
    const tx = new MapTx();
    expect(run(tx.as(admin), 'bank.open', { account: 'shared', owner: 'alice' })).toEqual({
      created: true,
      balance: 0,
      owner: 'alice',
    });
    expect(() => run(tx.as(bob), 'bank.open', { account: 'b2', owner: 'alice' })).toThrow(
      /only an admin opens an account for someone else/,
    );
    expect(tx.get(balanceKey('b2'))).toBeUndefined();
    expect(run(tx.as(bob), 'bank.open', { account: 'b2', owner: 'bob' })).toMatchObject({
      owner: 'bob',
    });
    // Without verified users nobody can be told apart: the owner is taken as given.
    expect(run(tx.as(null), 'bank.open', { account: 'c', owner: 'carol' })).toMatchObject({
      owner: 'carol',
    });
    run(tx.as(admin), 'bank.deposit', { account: 'shared', amount: 300 });
    expect(run(tx.as(alice), 'bank.withdraw', { account: 'shared', amount: 300 })).toEqual({
      ok: true,
      balance: 0,
    });
    expect(() => run(tx, 'bank.open', { account: 'd', owner: '' })).toThrow();
  });

  it('the replica lets only signed-in users call the bank, admins alone add interest, and keeps kv.* and queue.* closed', () => {
    const ops = ['bank.open', 'bank.deposit', 'bank.withdraw', 'bank.balance', 'bank.interest'];
    for (const name of ops) {
      // Deny by default: no op of the bank is public.
      expect(checkAccess(app, name, null), name).toMatchObject({
        code: 'unauthorized',
        message: expect.stringMatching(/needs a signed-in user/),
      });
      expect(checkAccess(app, name, admin), name).toBeNull();
    }
    for (const who of [alice, bob, user('carol', { role: 'teller' })]) {
      for (const name of ops.filter((n) => n !== 'bank.interest'))
        expect(checkAccess(app, name, who), `${name} by ${who.id}`).toBeNull();
      expect(checkAccess(app, 'bank.interest', who)).toMatchObject({
        code: 'forbidden',
        message: expect.stringMatching(/'bank.interest' is not allowed for user/),
      });
    }
    for (const name of ['kv.put', 'kv.get', 'queue.enqueue']) {
      expect(checkAccess(app, name, alice)?.code, name).toBe('forbidden');
      expect(checkAccess(app, name, admin)?.code, name).toBe('forbidden');
      expect(checkAccess(app, name, null)?.code, name).toBe('unauthorized');
    }
  });

  it('interest is a deposit of the amount the generator computed', () => {
    const tx = new MapTx();
    run(tx.as(alice), 'bank.open', { account: 'a' });
    run(tx.as(alice), 'bank.deposit', { account: 'a', amount: 10_000 });
    expect(run(tx.as(admin), 'bank.interest', { account: 'a', amount: 100 })).toBe(10_100);
    expect(() => run(tx.as(admin), 'bank.interest', { account: 'none', amount: 1 })).toThrow(
      /open it first/,
    );
    expect(() => run(tx.as(admin), 'bank.interest', { account: 'a', amount: 0 })).toThrow();
  });

  it('by any users in any order: withdrawals are taken only from their owner and only when covered (fast-check)', () => {
    const users = [alice, bob, admin, null];
    const opArb = fc.record({
      kind: fc.constantFrom('deposit', 'withdraw', 'interest'),
      by: fc.integer({ min: 0, max: users.length - 1 }),
      account: fc.constantFrom('alices', 'bobs'),
      amount: fc.integer({ min: 1, max: 1e4 }),
    });
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const tx = new MapTx();
        run(tx.as(alice), 'bank.open', { account: 'alices' });
        run(tx.as(admin), 'bank.open', { account: 'bobs', owner: 'bob' });
        const ledger = new Map([
          ['alices', 0],
          ['bobs', 0],
        ]);
        const owner = { alices: 'alice', bobs: 'bob' };
        for (const o of ops) {
          const by = users[o.by]!;
          const args = { account: o.account, amount: o.amount };
          const before = ledger.get(o.account)!;
          if (o.kind === 'withdraw') {
            const r = run(tx.as(by), 'bank.withdraw', args) as WithdrawResult;
            const mine = by?.id === owner[o.account as 'alices' | 'bobs'];
            if (!mine)
              expect(r).toEqual({
                ok: false,
                reason: 'forbidden',
                owner: owner[o.account as 'alices' | 'bobs'],
              });
            else expect(r.ok).toBe(before >= o.amount);
            if (r.ok) ledger.set(o.account, before - o.amount);
          } else {
            // The access rule for interest is the replica's (above); run only credits.
            run(tx.as(by), o.kind === 'deposit' ? 'bank.deposit' : 'bank.interest', args);
            ledger.set(o.account, before + o.amount);
          }
          for (const [a, cents] of ledger) {
            expect(tx.get(balanceKey(a))).toBe(cents);
            expect(cents).toBeGreaterThanOrEqual(0);
          }
        }
      }),
    );
  });
});

describe('money', () => {
  it('formats and parses dollars exactly, in cents', () => {
    expect(formatCents(123_456)).toBe('$1,234.56');
    expect(formatCents(5)).toBe('$0.05');
    expect(formatCents(-5)).toBe('−$0.05');
    expect(parseDollars('12')).toBe(1_200);
    expect(parseDollars('12.5')).toBe(1_250);
    expect(parseDollars(' $1,234.56 ')).toBe(123_456);
    for (const bad of ['', '-1', '1.234', 'abc', '1,23', '0x10'])
      expect(parseDollars(bad)).toBeNull();
    expect(interestOn(10_050, 100)).toBe(100); // 1 % of $100.50 is $1.005: rounded down
    expect(interestOn(-1, 100)).toBe(0);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), (c) => parseDollars(formatCents(c)) === c),
    );
  });
});

describe('the Bank over an in-process cluster (@creek/client/memory)', () => {
  let cluster: MemoryCluster | null = null;
  afterEach(() => {
    cluster?.close();
    cluster = null;
  });

  /** A cluster and one Bank per replica. */
  function branches(replicas = 3, delayMs = 0): Bank[] {
    cluster = new MemoryCluster({ app, replicas, delayMs });
    const c = cluster;
    return Array.from(
      { length: replicas },
      (_, i) => new Bank(new CreekClient<BankApp>(new MemoryBinding(c, i), { app })),
    );
  }

  it('gives withdrawals a tentative then a stable view, and deposits one weak view', async () => {
    const [bank] = branches(3);
    await bank!.open('a');
    const deposit = bank!.deposit('a', 1_000);
    expect(await deposit).toBe(1_000);
    expect(deposit.level).toBe('weak');
    const levels: string[] = [];
    const w = bank!.withdraw('a', 400).setCallbacks({ onUpdate: (_, v) => levels.push(v.level) });
    expect(await w).toEqual({ ok: true, balance: 600 });
    expect(levels).toEqual(['weak']);
    expect(w.level).toBe('strong');
    expect(await bank!.withdraw('a', 601)).toMatchObject({ ok: false, balance: 600, shortBy: 1 });
    expect(await bank!.balance('a')).toBe(600);
  });

  it('reports a deposit to an unknown account and bad amounts as errors that say so', async () => {
    const [bank] = branches(1);
    await expect(bank!.deposit('ghost', 1)).rejects.toBeInstanceOf(OperationFailed);
    await expect(bank!.deposit('ghost', 1)).rejects.toThrow(/open it first/);
    await expect(bank!.deposit('a', 0)).rejects.toBeInstanceOf(InvalidArguments);
    await expect(bank!.withdraw('a', 2.5)).rejects.toThrow(/amount/);
    await expect(bank!.accrueInterest('a', -1)).rejects.toBeInstanceOf(RangeError);
  });

  it('accrues interest on the balance the branch sees, as a deposit of that amount', async () => {
    const [bank] = branches(1);
    await bank!.open('a');
    await bank!.deposit('a', 12_345);
    expect(await bank!.accrueInterest('a', 100)).toEqual({
      basedOn: 12_345,
      amount: 123,
      balance: 12_468,
    });
    expect(await bank!.accrueInterest('a', 0)).toEqual({
      basedOn: 12_468,
      amount: 0,
      balance: 12_468,
    });
    expect(await bank!.balance('a')).toBe(12_468);
  });

  it('RedBlue §5.3: Alice and Bob both withdraw from $125; the stable answers accept only one', async () => {
    const [alice, bob] = branches(3);
    await alice!.open('joint');
    await alice!.deposit('joint', 12_500);
    await quiesce([alice!, bob!], ['joint']);
    // Bob's branch is cut off: its replica still answers tentatively, from what it has seen.
    cluster!.isolate(1);
    const bobTentative: WithdrawResult[] = [];
    const bobs = bob!
      .withdraw('joint', 6_000, { timeoutMs: 30_000 })
      .setCallbacks({ onUpdate: (r) => bobTentative.push(r) });
    await until(() => bobTentative.length > 0);
    expect(bobTentative[0]).toEqual({ ok: true, balance: 6_500 });
    // Alice's replica is in the majority: her withdrawal becomes stable.
    expect(await alice!.withdraw('joint', 7_000, { timeoutMs: 30_000 })).toEqual({
      ok: true,
      balance: 5_500,
    });
    cluster!.heal();
    // Bob's withdrawal is ordered after Alice's: the stable answer revises his tentative one.
    expect(await bobs).toMatchObject({ ok: false, balance: 5_500, shortBy: 500 });
    expect(await bob!.balance('joint')).toBe(5_500);
  });

  it('across random concurrent loads, no stable balance is negative and replicas converge (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.nat({ max: 1e6 }),
          delayMs: fc.integer({ min: 0, max: 4 }),
          clients: fc.integer({ min: 2, max: 5 }),
          ops: fc.integer({ min: 5, max: 25 }),
          initial: fc.integer({ min: 0, max: 5_000 }),
        }),
        async ({ seed, delayMs, clients, ops, initial }) => {
          const replicas = branches(3, delayMs);
          const banks = Array.from({ length: clients }, (_, k) => replicas[k % 3]!);
          const accounts = ['x', 'y'];
          try {
            await seedAccounts(banks, accounts, initial);
            const load = await runLoad(banks, {
              accounts,
              opsPerClient: ops,
              seed,
              maxCents: 3_000,
              rateBps: 250,
              opTimeoutMs: 30_000,
            });
            expect(load.failures).toEqual([]);
            expect(load.minStableBalance).toBeGreaterThanOrEqual(0);
            await quiesce(banks, accounts);
            for (const a of accounts) {
              const expected = initial + load.ledger.get(a)!;
              for (const bank of replicas) expect(await bank.balance(a)).toBe(expected);
            }
            const hosts = cluster!.hosts;
            await until(() => hosts.every((h) => h.settled()));
            const digests = new Set(hosts.map((h) => h.inspect().replica.stateDigest()));
            expect(digests.size).toBe(1);
          } finally {
            cluster?.close();
            cluster = null;
          }
        },
      ),
      { numRuns: 12, seed: 20_240_601 },
    );
  });
});

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 5));
  }
}
