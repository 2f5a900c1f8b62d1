import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WithdrawResult } from '../src/bank/app.js';
import { connectBranches, stableBalancesAtEachReplica } from '../src/bank/clients.js';
import { quiesce, runLoad, seedAccounts } from '../src/bank/load.js';

/** The bank on a real cluster: three replica processes running the bank's app module. */
const APP = fileURLToPath(new URL('../src/bank/app.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/bank/main.ts', import.meta.url));

let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, app: APP, logLevel: 'error' });
}, 60_000);
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
      const branches = connectBranches(cluster.urls, cluster.token, 6);
      try {
        await seedAccounts(branches.banks, accounts, initial);
        const load = await runLoad(branches.banks, {
          accounts,
          opsPerClient: 40,
          seed,
          maxCents: 2_500,
          rateBps: 200,
          opTimeoutMs: 30_000,
        });
        const context = `seed ${seed}, delay ${delayMs} ms`;
        expect(load.failures, context).toEqual([]);
        expect(load.ops, context).toBe(6 * 40);
        // Every stable answer (each withdrawal's, each read's) kept the balance ≥ 0.
        expect(load.minStableBalance, context).toBeGreaterThanOrEqual(0);
        for (const a of accounts) expected[a] = initial + load.ledger.get(a)!;
        await quiesce(branches.banks, accounts);
      } finally {
        branches.close();
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
    );
    for (const balances of perReplica) expect(balances).toEqual(expected);
    for (const b of Object.values(expected)) expect(b).toBeGreaterThanOrEqual(0);
  });

  it("RedBlue §5.3 with real processes: a cut-off branch's tentative yes becomes a stable no", async () => {
    // Client 0 (Alice) talks to replica 0, client 1 (Bob) to replica 1.
    const { banks, close } = connectBranches(cluster.urls, cluster.token, 2);
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

  it('npm run example:bank against this cluster (--urls) prints a summary whose checks hold', async () => {
    const { code, stdout, stderr } = await runMain([
      '--urls',
      cluster.urls.join(','),
      '--token',
      cluster.token,
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
    expect(stdout).not.toMatch(/FAIL/);
    expect(stderr).toMatch(/bank load: 120\/120 \(100%\)/);
  });

  it('rejects bad flags with the usage and exit code 2', async () => {
    const { code, stderr } = await runMain(['--clients', 'zero']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--clients: /);
    expect(stderr).toMatch(/usage: npm run example:bank/);
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
