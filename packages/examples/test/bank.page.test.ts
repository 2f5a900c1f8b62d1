import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCents, parseDollars } from '../src/bank/money.js';
import { serveBankPage } from '../src/bank/serve.js';
import type { ServedPage } from '../src/shared/page-server.js';
import { launchChromium } from './support/chromium.js';

/**
 * The bank's page (a React app on @creek/react) in Chromium against a real 3-replica cluster
 * that verifies the tokens of its dev identity: each branch signs in through the page server's
 * dev sign-in (alice at the EU branch, bob at the US one, the account alice's). Click through
 * deposits, withdrawals, an overdraft, a non-owner's withdrawal and a non-admin's interest
 * declined, the admin's interest, a concurrent withdrawal at two branches, a branch cut off, every
 * replica paused and resumed (the page offline and back), and a deposit in the customer's shared
 * context read at the other branch. The page mirrors its state in data attributes (see page.tsx);
 * the test waits on those, never on time.
 */
const APP = fileURLToPath(new URL('../src/bank/app.ts', import.meta.url));
/** How long a wait for the page may take: generous, for a loaded 2-core CI machine. */
const WAIT_MS = 60_000;

let cluster: LocalCluster;
let served: ServedPage;
let browser: { context: BrowserContext; close(): Promise<void> };
beforeAll(async () => {
  // Started side by side; whichever starts is kept for afterAll even if the other fails (with
  // Promise.all, a missing Chromium left the cluster's three processes running after the run).
  const [started, launched] = await Promise.allSettled([
    LocalCluster.start({ replicas: 3, app: APP, logLevel: 'error', devIdentity: true }),
    launchChromium(),
  ]);
  if (started.status === 'fulfilled') cluster = started.value;
  if (launched.status === 'fulfilled') browser = launched.value;
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;
  served = await serveBankPage({
    urls: cluster.urls,
    token: cluster.token,
    account: 'page-test',
    rateBps: 100,
    offlineAfterMs: 1_000,
    signIn: cluster.identity!,
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
});

const branch = (i: number): string => `[data-branch="${i}"]`;
const row = (seq: number): string => `#log tr[data-seq="${seq}"]`;
const status = (seq: number): string => `${row(seq)} [data-cell=status]`;

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).textContent()) ?? '').trim();
}

async function color(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (el) => getComputedStyle(el).color);
}

/** Waits until a branch shows `expected` as its confirmed (stable) balance. */
async function stableBalance(page: Page, i: number, expected: string): Promise<void> {
  await page.waitForFunction(
    ([sel, want]) => {
      const el = document.querySelector(sel!);
      return (
        el?.getAttribute('data-level') === 'strong' &&
        el.querySelector('[data-role=balance]')?.textContent === want
      );
    },
    [branch(i), expected],
    { timeout: WAIT_MS },
  );
}

/** Waits until a row is stable (confirmed, or synced for a deposit) or failed. */
async function finalRow(page: Page, seq: number): Promise<void> {
  await page.waitForSelector(`${row(seq)}[data-phase="stable"], ${row(seq)}[data-phase="error"]`, {
    timeout: WAIT_MS,
  });
}

/** Waits until both branches show the same confirmed balance; returns it in cents. */
async function settled(page: Page): Promise<number> {
  const handle = await page.waitForFunction(
    ([a, b]) => {
      const read = (sel: string): string | null => {
        const el = document.querySelector(sel);
        return el?.getAttribute('data-level') === 'strong'
          ? (el.querySelector('[data-role=balance]')?.textContent ?? null)
          : null;
      };
      const [x, y] = [read(a!), read(b!)];
      return x !== null && x === y ? x : null;
    },
    [branch(0), branch(1)],
    { timeout: WAIT_MS },
  );
  return parseDollars((await handle.jsonValue()) as string)!;
}

async function act(page: Page, i: number, action: string, dollars?: string): Promise<void> {
  if (dollars !== undefined) await page.fill(`${branch(i)} [data-role=amount]`, dollars);
  await page.click(`${branch(i)} [data-action=${action}]`);
}

/** Waits until branch i holds a token of `user` and has its first confirmed balance. */
async function signedIn(page: Page, i: number, user: string): Promise<void> {
  await page.waitForSelector(`${branch(i)} [data-role=sign-in][data-user="${user}"]`, {
    timeout: WAIT_MS,
  });
  await page.waitForSelector(`${branch(i)}[data-ready="yes"]`, { timeout: WAIT_MS });
}

/** Signs branch i in as `user` with its picker, and waits until it is ready again. */
async function signInAs(page: Page, i: number, user: string): Promise<void> {
  await page.selectOption(`${branch(i)} [data-role=sign-in] select`, user);
  await signedIn(page, i, user);
}

/** A fresh page, both branches signed in as their first users and ready. */
async function open(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(served.url);
  await signedIn(page, 0, 'alice');
  await signedIn(page, 1, 'bob');
  return page;
}

describe('the bank page (React) in Chromium', () => {
  it("alice deposits and withdraws; an overdraft, bob's withdrawal and bob's interest are declined; the admin's interest is credited; one of two racing withdrawals is taken", async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(served.url);

    // Each branch signs in as its own user; the page opens the account, Alice's, and both
    // branches show its confirmed balance, pushed live.
    await signedIn(page, 0, 'alice');
    await signedIn(page, 1, 'bob');
    expect(await text(page, `${branch(0)} [data-role=sign-in]`)).toMatch(/^Signed in as/);
    expect(await text(page, '[data-role=rules]')).toMatch(/^The account is alice's: only alice/);
    await stableBalance(page, 0, '$0.00');
    await stableBalance(page, 1, '$0.00');
    await page.waitForSelector(`${branch(0)} .connection[data-status="connected"]`, {
      timeout: WAIT_MS,
    });

    // Alice deposits: weak, one answer from her server, then synced.
    await act(page, 0, 'deposit', '50');
    await finalRow(page, 1);
    expect(await page.getAttribute(row(1), 'data-user')).toBe('alice');
    expect(await page.getAttribute(row(1), 'data-outcome')).toBe('accepted');
    expect(await page.getAttribute(row(1), 'data-views')).toBe('weak');
    expect(await text(page, status(1))).toBe('Credited · balance $50.00 at this branch · synced');
    // The live query pushes the new balance to both branches without a reload.
    await stableBalance(page, 0, '$50.00');
    await stableBalance(page, 1, '$50.00');

    // Withdraw: the tentative answer, then the confirmed one, both "approved".
    await act(page, 0, 'withdraw', '20');
    await finalRow(page, 2);
    expect(await page.getAttribute(row(2), 'data-views')).toBe('weak strong');
    expect(await page.getAttribute(row(2), 'data-tentative')).toBe('accepted');
    expect(await page.getAttribute(row(2), 'data-outcome')).toBe('accepted');
    expect(await page.getAttribute(row(2), 'data-revised')).toBe('no');
    expect(await text(page, status(2))).toBe('Approved · balance $30.00');
    await stableBalance(page, 0, '$30.00');

    // An overdraft is declined, drawn apart from an approval (not in the approval's green).
    await act(page, 0, 'withdraw', '100');
    await finalRow(page, 3);
    expect(await page.getAttribute(row(3), 'data-outcome')).toBe('refused');
    expect(await text(page, status(3))).toBe(
      'Declined: insufficient funds (short by $70.00) · balance $30.00',
    );
    expect(await page.getAttribute(status(3), 'class')).toContain('refused');
    expect(await color(page, status(3))).not.toBe(await color(page, status(2)));
    await stableBalance(page, 0, '$30.00');
    await stableBalance(page, 1, '$30.00');

    // Bob, at the US branch, withdraws from Alice's account: declined, saying whose it is; it
    // was never approved, not even tentatively, and the balance stays.
    await act(page, 1, 'withdraw', '10');
    await finalRow(page, 4);
    expect(await page.getAttribute(row(4), 'data-user')).toBe('bob');
    expect(await page.getAttribute(row(4), 'data-outcome')).toBe('refused');
    expect(await page.getAttribute(row(4), 'data-tentative')).toBe('refused');
    expect(await text(page, status(4))).toBe(
      'Declined: only alice, whose account it is, withdraws from it',
    );
    expect(await page.getAttribute(status(4), 'class')).toContain('refused');
    // Anyone signed in deposits, to any account.
    await act(page, 1, 'deposit', '5');
    await finalRow(page, 5);
    expect(await page.getAttribute(row(5), 'data-outcome')).toBe('accepted');
    await stableBalance(page, 0, '$35.00');
    await stableBalance(page, 1, '$35.00');

    // Interest is for admins: Bob's is declined before it reaches the account ...
    await act(page, 1, 'interest');
    await page.waitForSelector(`${row(6)}[data-phase="error"]`, { timeout: WAIT_MS });
    expect(await page.getAttribute(row(6), 'data-kind')).toBe('interest');
    expect(await page.getAttribute(row(6), 'data-outcome')).toBe('refused');
    expect(await text(page, status(6))).toBe('Declined: only an admin adds interest');
    // ... and once the US branch signs in as the admin, 1 % on the $35.00 it sees is credited.
    await signInAs(page, 1, 'admin');
    expect(await text(page, `${branch(1)} [data-role=sign-in]`)).toMatch(/^Signed in as/);
    await act(page, 1, 'interest');
    await finalRow(page, 7);
    expect(await page.getAttribute(row(7), 'data-user')).toBe('admin');
    expect(await text(page, `${row(7)} td:nth-child(2)`)).toBe('Interest 1 % on $35.00: +$0.35');
    await stableBalance(page, 0, '$35.35');
    await stableBalance(page, 1, '$35.35');

    // Alice at both branches withdraws $20 at once from $35.35: the confirmations approve
    // exactly one.
    await signInAs(page, 1, 'alice');
    await page.fill(`${branch(0)} [data-role=amount]`, '20');
    await page.fill(`${branch(1)} [data-role=amount]`, '20');
    await page.click('#race');
    await finalRow(page, 8);
    await finalRow(page, 9);
    const outcomes = [
      await page.getAttribute(row(8), 'data-outcome'),
      await page.getAttribute(row(9), 'data-outcome'),
    ].sort();
    expect(outcomes).toEqual(['accepted', 'refused']);
    await stableBalance(page, 0, '$15.35');
    await stableBalance(page, 1, '$15.35');

    // Product copy: no replica numbers, URLs or op names on screen.
    const shown = await page.locator('body').innerText();
    expect(shown).not.toMatch(/replica|ws:\/\/|bank\.\w+|§/i);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a cut-off branch's tentative approval revised into a decline", async () => {
    const page = await open();
    // Alice at both branches: the US one is cut off below, and only she withdraws.
    await signInAs(page, 1, 'alice');
    await act(page, 0, 'deposit', '100');
    await finalRow(page, 1);
    // Both branches agree on the balance before Bob's replica is cut off.
    const balance = await settled(page);
    expect(balance).toBeGreaterThan(0);
    const dollars = formatCents(balance).slice(1);
    await cluster.admin(1, 'block', { peer: 0 });
    await cluster.admin(1, 'block', { peer: 2 });
    try {
      // Bob's replica still answers tentatively from what it has: the whole balance is there.
      await act(page, 1, 'withdraw', dollars);
      await page.waitForSelector(`${row(2)}[data-phase="tentative"]`, { timeout: WAIT_MS });
      expect(await page.getAttribute(row(2), 'data-tentative')).toBe('accepted');
      expect(await text(page, status(2))).toMatch(/waiting for confirmation$/);
      const tentativeColor = await color(page, status(2));
      // Alice, with the majority, takes it all first.
      await act(page, 0, 'withdraw', dollars);
      await finalRow(page, 3);
      expect(await page.getAttribute(row(3), 'data-outcome')).toBe('accepted');
      expect(await color(page, status(3))).not.toBe(tentativeColor);
    } finally {
      await cluster.admin(1, 'unblock');
    }
    await finalRow(page, 2);
    expect(await page.getAttribute(row(2), 'data-outcome')).toBe('refused');
    expect(await page.getAttribute(row(2), 'data-revised')).toBe('yes');
    // The replica said why: Alice's withdrawal, ordered ahead of Bob's branch's unseen.
    expect(await page.getAttribute(row(2), 'data-causes')).toBe('bank.withdraw');
    expect(await text(page, status(2))).toMatch(
      /first approved tentatively: a withdrawal elsewhere \(r\d+#\d+\) came first/,
    );
    await stableBalance(page, 0, '$0.00');
    await stableBalance(page, 1, '$0.00');
    await page.close();
  });

  it('offline: every replica paused, operations wait queued; resumed, each is applied once and the page says so', async () => {
    const page = await open();
    const before = await settled(page);
    for (const i of [0, 1, 2]) await cluster.admin(i, 'pause');
    try {
      // Alice deposits $5 and then withdraws $3 (her session keeps that order); Bob deposits $5.
      // No server answers: each client finds its connection stalled, finds no other server, and
      // goes offline; the ops wait queued (the client has no heartbeat, so an idle page learns it
      // is offline from ops that wait).
      await act(page, 0, 'deposit', '5');
      await act(page, 1, 'deposit', '5');
      await act(page, 0, 'withdraw', '3');
      for (const i of [0, 1])
        await page.waitForSelector(`${branch(i)} .connection[data-status="offline"]`, {
          timeout: WAIT_MS,
        });
      expect(await text(page, `${branch(0)} .connection`)).toMatch(/^Offline/);
      for (const seq of [1, 2, 3]) {
        await page.waitForSelector(`${row(seq)}[data-phase="queued"]`, { timeout: WAIT_MS });
        expect(await text(page, status(seq))).toBe(
          'Waiting for the connection: sent once it is back',
        );
      }
      expect(await text(page, '[data-role=offline-summary]')).toBe(
        '3 operations wait for the connection.',
      );
      // Queued is drawn apart from every other phase.
      expect(await page.getAttribute(status(1), 'class')).toContain('phase-queued');
    } finally {
      for (const i of [0, 1, 2]) await cluster.admin(i, 'resume');
    }
    for (const seq of [1, 2, 3]) await finalRow(page, seq);
    for (const seq of [1, 2, 3]) {
      expect(await page.getAttribute(row(seq), 'data-phase')).toBe('stable');
      expect(await page.getAttribute(row(seq), 'data-offline')).toBe('yes');
      expect(await page.getAttribute(row(seq), 'data-outcome')).toBe('accepted');
    }
    await page.waitForSelector('[data-role=offline-summary][data-state="applied"]', {
      timeout: WAIT_MS,
    });
    expect(await text(page, '[data-role=offline-summary]')).toBe(
      'Back online: 3 operations made while offline were sent and applied, each once.',
    );
    // Applied exactly once: the balance moved by +$5 +$5 −$3, on screen and at the cluster.
    const after = before + 700;
    await stableBalance(page, 0, formatCents(after));
    await stableBalance(page, 1, formatCents(after));
    const identity = cluster.identity!;
    const outside = connect({
      urls: cluster.urls,
      token: cluster.token,
      auth: async () => (await identity.mint('admin')).token,
    });
    try {
      expect(await outside.invokeStrong('bank.balance', { account: 'page-test' })).toBe(after);
    } finally {
      outside.close();
    }
    await page.close();
  });

  it("shares the customer's context: a deposit acknowledged at one branch is in the other's context balance, though its server has not heard of it yet", async () => {
    const page = await open();
    const before = await settled(page);
    await page.check(`${branch(0)} [data-role=in-context]`);
    // The US branch's server hears of everything 3 s late (its links in delayed, not cut): a
    // read there outside the context shows the old balance for those 3 s.
    for (const from of [0, 2]) await cluster.admin(from, 'delay', { peer: 1, ms: 3_000 });
    try {
      await act(page, 0, 'deposit', '7');
      await finalRow(page, 1);
      expect(await page.getAttribute(row(1), 'data-phase')).toBe('stable');
      expect(await page.getAttribute(row(1), 'data-context')).toBe('yes');
      expect(await text(page, `${row(1)} td:nth-child(2)`)).toBe(
        "Deposit $7.00 in the customer's context",
      );
      // Acknowledged in the context: the other branch's read in it waits for the deposit.
      await page.click(`${branch(1)} [data-action=context-balance]`);
      const shown = `${branch(1)} [data-role=context-balance][data-state=shown]`;
      await page.waitForSelector(shown, { timeout: WAIT_MS });
      expect(await text(page, shown)).toBe(formatCents(before + 700));
    } finally {
      for (const from of [0, 2]) await cluster.admin(from, 'delay', { peer: 1, ms: 0 });
    }
    // Outside the context, the deposit is an ordinary one: both branches confirm it.
    await stableBalance(page, 0, formatCents(before + 700));
    await stableBalance(page, 1, formatCents(before + 700));
    await page.close();
  });

  it('marks an amount that is not money as invalid and sends nothing', async () => {
    const page = await open();
    await act(page, 0, 'deposit', '-3');
    expect(
      await page.$eval(`${branch(0)} [data-role=amount]`, (el) =>
        (el as HTMLInputElement).checkValidity(),
      ),
    ).toBe(false);
    expect(await page.locator('#log tbody tr').count()).toBe(0);
    await page.close();
  });
});
