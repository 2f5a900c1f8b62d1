import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Forbidden, Unauthorized } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WithdrawResult } from '../src/bank/app.js';
import { Bank } from '../src/bank/bank.js';
import { connectBank, connectBranches, stableBalancesAtEachReplica } from '../src/bank/clients.js';
import { quiesce, runLoad, seedAccounts } from '../src/bank/load.js';
import { signInWith, type SignIn } from '../src/shared/cluster.js';

/**
 * The bank on a real cluster: three replica processes running the bank's app module, verifying
 * the tokens of the cluster's dev identity provider, so every client signs in as a dev user and
 * the app's rules of who may do what are enforced by real replicas.
 */
const APP = fileURLToPath(new URL('../src/bank/app.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/bank/main.ts', import.meta.url));

let cluster: LocalCluster;
let signIn: SignIn;
beforeAll(async () => {
  cluster = await LocalCluster.start({
    replicas: 3,
    app: APP,
    logLevel: 'error',
    devIdentity: true,
  });
  signIn = signInWith(cluster.identity);
}, 60_000);

/** A bank client at replica `i` (and the others after it), signed in as `user` (null: anonymous). */
function bankAt(i: number, user: string | null): { bank: Bank; close(): void } {
  const urls = [...cluster.urls.slice(i), ...cluster.urls.slice(0, i)];
  const client = connectBank(urls, cluster.token, user === null ? null : signIn, user);
  return { bank: new Bank(client), close: () => client.close() };
}

/** Client k of a load signs in as USERS[k mod 4]; account i is OWNERS[i mod 2]'s. */
const USERS = ['alice', 'bob', 'carol', 'admin'];
const OWNERS = ['alice', 'bob'];
afterAll(async () => {
  await cluster?.stop(2_000);
});

describe('the bank on a real 3-replica cluster', () => {
  it('across randomized concurrent runs, no stable state ever has a negative balance, and all replicas converge to the same balance', async () => {
    // Each run uses its own accounts on the same cluster; some runs add wide-area-like delay
    // between replicas, which widens the window in which tentative and stable answers differ.
    const runs = [
      { seed: 1, delayMs: 0 },
      { seed: 2, delayMs: 0 },
      { seed: 3, delayMs: 8 },
      { seed: 4, delayMs: 8 },
    ];
    /** Per account: opening + deposits + interest − accepted withdrawals, from clients' answers. */
    const expected: Record<string, number> = {};
    for (const { seed, delayMs } of runs) {
      await cluster.delayBetweenReplicas(delayMs);
      const accounts = [`s${seed}-a`, `s${seed}-b`];
      const initial = 2_000 * seed;
      const branches = connectBranches(cluster.urls, cluster.token, 6, signIn, USERS);
      const office = bankAt(0, 'admin');
      try {
        const owners = await seedAccounts(branches.banks, accounts, initial, {
          opener: office.bank,
          owners: new Map(accounts.map((a, i) => [a, OWNERS[i % OWNERS.length]!])),
        });
        expect([...owners.values()]).toEqual(['alice', 'bob']);
        const load = await runLoad(branches.banks, {
          accounts,
          opsPerClient: 40,
          seed,
          maxCents: 2_500,
          rateBps: 200,
          opTimeoutMs: 30_000,
          users: branches.users.map((id) => ({ id: id!, admin: id === 'admin' })),
          owners,
        });
        const context = `seed ${seed}, delay ${delayMs} ms`;
        expect(load.failures, context).toEqual([]);
        // Every answer kept the rules, and both rules were put to the test.
        expect(load.violations, context).toEqual([]);
        expect(load.withdrawals.forbidden, context).toBeGreaterThan(0);
        expect(load.withdrawals.accepted, context).toBeGreaterThan(0);
        expect(load.ops, context).toBe(6 * 40);
        // Every stable answer (each withdrawal's, each read's) kept the balance ≥ 0.
        expect(load.minStableBalance, context).toBeGreaterThanOrEqual(0);
        for (const a of accounts) expected[a] = initial + load.ledger.get(a)!;
        await quiesce(branches.banks, accounts);
      } finally {
        branches.close();
        office.close();
      }
    }
    await cluster.delayBetweenReplicas(0);
    // Same committed list length and same state on every replica ...
    const statuses = await cluster.converged(30_000);
    expect(new Set(statuses.map((s) => s.digest)).size).toBe(1);
    // ... and each replica's stable balance is what the clients' answers account for.
    const perReplica = await stableBalancesAtEachReplica(
      cluster.urls,
      cluster.token,
      Object.keys(expected),
      signIn,
      'carol',
    );
    for (const balances of perReplica) expect(balances).toEqual(expected);
    for (const b of Object.values(expected)) expect(b).toBeGreaterThanOrEqual(0);
  });

  it("RedBlue §5.3 with real processes: a cut-off branch's tentative yes becomes a stable no", async () => {
    // Alice at two branches: client 0 talks to replica 0, client 1 to replica 1. She opens the
    // account, so it is hers, and both her withdrawals are an owner's.
    const { banks, close } = connectBranches(cluster.urls, cluster.token, 2, signIn, ['alice']);
    try {
      await seedAccounts(banks, ['joint'], 12_500);
      // Cut replica 1 (Bob's) off from the others, both ways.
      await cluster.admin(1, 'block', { peer: 0 });
      await cluster.admin(1, 'block', { peer: 2 });
      const bobTentative: WithdrawResult[] = [];
      const bobs = banks[1]!
        .withdraw('joint', 6_000, { timeoutMs: 45_000 })
        .setCallbacks({ onUpdate: (r) => bobTentative.push(r) });
      await cluster.until(async () => bobTentative.length > 0, 20_000, "Bob's tentative answer");
      expect(bobTentative[0]).toEqual({ ok: true, balance: 6_500 });
      // Alice's replica and the third one are a majority: her withdrawal is stable.
      expect(await banks[0]!.withdraw('joint', 7_000, { timeoutMs: 30_000 })).toEqual({
        ok: true,
        balance: 5_500,
      });
      await cluster.admin(1, 'unblock');
      expect(await bobs).toMatchObject({ ok: false, balance: 5_500, shortBy: 500 });
    } finally {
      await cluster.admin(1, 'unblock');
      close();
    }
  });

  it('who may do what, at real replicas: the owner withdraws, anyone deposits, admins alone add interest, anonymous callers nothing', async () => {
    const alice = bankAt(0, 'alice');
    const bob = bankAt(1, 'bob');
    const admin = bankAt(2, 'admin');
    const anonymous = bankAt(1, null);
    try {
      expect(await alice.bank.open('alices')).toEqual({
        created: true,
        balance: 0,
        owner: 'alice',
      });
      await quiesce([alice.bank, bob.bank, admin.bank], ['alices']);
      // Bob deposits to Alice's account; his withdrawal from it is refused, in both views,
      // decided by every replica from the op's user.
      expect(await bob.bank.deposit('alices', 5_000)).toBe(5_000);
      const bobsViews: WithdrawResult[] = [];
      const bobs = await bob.bank
        .withdraw('alices', 1_000)
        .setCallbacks({ onUpdate: (v) => bobsViews.push(v) });
      expect(bobs).toEqual({ ok: false, reason: 'forbidden', owner: 'alice' });
      expect(bobsViews).toEqual([{ ok: false, reason: 'forbidden', owner: 'alice' }]);
      // Nor may he open an account for her, or take hers by opening it again.
      await expect(bob.bank.open('for-alice', { owner: 'alice' })).rejects.toThrow(
        /only an admin opens an account for someone else/,
      );
      expect(await bob.bank.open('alices')).toMatchObject({ created: false, owner: 'alice' });
      expect(await alice.bank.withdraw('alices', 1_000)).toEqual({ ok: true, balance: 4_000 });
      // Interest: the replica refuses Bob's before ordering it; the admin's goes through (on the
      // balance its replica has once it caught up with Alice's withdrawal).
      await quiesce([admin.bank], ['alices']);
      const refused = bob.bank.accrueInterest('alices', 100);
      await expect(refused).rejects.toBeInstanceOf(Forbidden);
      await expect(refused).rejects.toThrow(/'bank.interest' is not allowed for user 'bob'/);
      expect(await admin.bank.accrueInterest('alices', 100)).toMatchObject({ amount: 40 });
      // Anonymous: every bank op needs a signed-in user.
      await expect(anonymous.bank.balance('alices')).rejects.toBeInstanceOf(Unauthorized);
      await expect(anonymous.bank.deposit('alices', 1)).rejects.toThrow(/needs a signed-in user/);
      // $50 − $10 + 1 % of $40, read strongly after the admin's own accrual.
      expect(await admin.bank.balance('alices')).toBe(4_040);
    } finally {
      for (const c of [alice, bob, admin, anonymous]) c.close();
    }
  });

  it('npm run example:bank against this cluster (--urls, --identity) signs its clients in and prints a summary whose checks hold', async () => {
    const { code, stdout, stderr } = await runMain([
      '--urls',
      cluster.urls.join(','),
      '--token',
      cluster.token,
      '--identity',
      cluster.dir,
      '--clients',
      '4',
      '--ops',
      '30',
      '--seed',
      '7',
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^bank: 120 ops by 4 clients on 3 replicas/);
    expect(stdout).toMatch(/ok {3}no stable answer showed a negative balance/);
    expect(stdout).toMatch(/ok {3}every replica's stable balance = opening/);
    expect(stdout).toMatch(/^ {2}signed in as {2}alice, bob, carol, admin$/m);
    expect(stdout).toMatch(/ok {3}only owners withdrew, only admins accrued interest/);
    expect(stdout).toMatch(/^ {2}acct-0 \(alice's\)/m);
    expect(stdout).not.toMatch(/FAIL/);
    expect(stderr).toMatch(/bank load: 120\/120 \(100%\)/);
  });

  it('rejects bad flags with the usage and exit code 2', async () => {
    const { code, stderr } = await runMain(['--clients', 'zero']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--clients: /);
    expect(stderr).toMatch(/usage: npm run example:bank/);
    const alone = await runMain(['--identity', cluster.dir]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--identity names the dev identity of a cluster given by --urls/);
  });

  it('without a dev identity, or with a folder that holds none, the CLI says why it cannot sign in (exit code 2)', async () => {
    const urls = ['--urls', cluster.urls.join(','), '--token', cluster.token];
    const anonymous = await runMain([...urls, '--clients', '1', '--ops', '1']);
    expect(anonymous.code).toBe(2);
    expect(anonymous.stderr).toMatch(/'bank.open' needs a signed-in user/);
    const wrong = await runMain([...urls, '--identity', join(cluster.dir, 'nothing-here')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/no dev identity there/);
  });
});

function runMain(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=creek-source', '--import', 'tsx', MAIN, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
