import { fileURLToPath } from 'node:url';
import { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCents, parseDollars } from '../src/bank/money.js';
import { serveBankPage } from '../src/bank/serve.js';
import type { ServedPage } from '../src/shared/page-server.js';
import { launchChromium } from './support/chromium.js';

/**
 * The bank's page in Chromium against a real 3-replica cluster: click through deposits,
 * withdrawals, an overdraft, interest and a concurrent withdrawal at two branches. The page
 * mirrors its state in data attributes (see page.ts); the test waits on those, never on time.
 */
const APP = fileURLToPath(new URL('../src/bank/app.ts', import.meta.url));

let cluster: LocalCluster;
let served: ServedPage;
let browser: { context: BrowserContext; close(): Promise<void> };
beforeAll(async () => {
  // Started side by side; whichever starts is kept for afterAll even if the other fails (with
  // Promise.all, a missing Chromium left the cluster's three processes running after the run).
  const [started, launched] = await Promise.allSettled([
    LocalCluster.start({ replicas: 3, app: APP, logLevel: 'error' }),
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
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
});

const branch = (i: number): string => `[data-branch="${i}"]`;
const row = (seq: number): string => `#log tr[data-seq="${seq}"]`;

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).textContent()) ?? '').trim();
}

/** Waits until a branch has finished a refresh whose stable balance is `expected`. */
async function stableBalance(page: Page, i: number, expected: string): Promise<void> {
  await page.waitForFunction(
    ([sel, want]) => {
      const el = document.querySelector(sel!);
      return (
        el?.getAttribute('data-state') === 'stable' &&
        el.querySelector('[data-role=stable]')?.textContent === want
      );
    },
    [branch(i), expected],
    { timeout: 20_000 },
  );
}

/** Waits until a log row has its final view (or an error). */
async function finalRow(page: Page, seq: number): Promise<void> {
  await page.waitForSelector(`${row(seq)}[data-state="final"], ${row(seq)}[data-state="error"]`, {
    timeout: 20_000,
  });
}

/** Waits until both branches show the same stable balance; returns it in cents. */
async function settled(page: Page): Promise<number> {
  const handle = await page.waitForFunction(
    ([a, b]) => {
      const read = (sel: string): string | null => {
        const el = document.querySelector(sel);
        return el?.getAttribute('data-state') === 'stable'
          ? (el.querySelector('[data-role=stable]')?.textContent ?? null)
          : null;
      };
      const [x, y] = [read(a!), read(b!)];
      return x !== null && x === y ? x : null;
    },
    [branch(0), branch(1)],
    { timeout: 20_000 },
  );
  return parseDollars((await handle.jsonValue()) as string)!;
}

async function act(page: Page, i: number, action: string, dollars?: string): Promise<void> {
  if (dollars !== undefined) await page.fill(`${branch(i)} [data-role=amount]`, dollars);
  await page.click(`${branch(i)} [data-action=${action}]`);
}

describe('the bank page in Chromium', () => {
  it('shows tentative then stable balances, withdraws, refuses an overdraft, accrues interest', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);

    // The page opens the account; both branches show its stable balance.
    await stableBalance(page, 0, '$0.00');
    await stableBalance(page, 1, '$0.00');

    // Deposit at Alice's branch: weak, one answer from her replica.
    await act(page, 0, 'deposit', '50');
    await finalRow(page, 1);
    expect(await page.getAttribute(row(1), 'data-outcome')).toBe('accepted');
    expect(await page.getAttribute(row(1), 'data-views')).toBe('weak');
    expect(await text(page, `${row(1)} [data-cell=tentative]`)).toMatch(/balance \$50\.00/);
    await stableBalance(page, 0, '$50.00');
    // The balance came as the client's cached value (read when the page opened), then a tentative
    // view, then the stable one.
    expect(await page.getAttribute(branch(0), 'data-views')).toBe('cached weak strong');
    expect(await text(page, `${branch(0)} [data-role=tentative]`)).toBe('$50.00');

    // Withdraw: the tentative answer, then the stable one, both "accepted".
    await act(page, 0, 'withdraw', '20');
    await finalRow(page, 2);
    expect(await page.getAttribute(row(2), 'data-views')).toBe('weak strong');
    expect(await page.getAttribute(row(2), 'data-tentative')).toBe('accepted');
    expect(await page.getAttribute(row(2), 'data-outcome')).toBe('accepted');
    expect(await text(page, `${row(2)} [data-cell=tentative]`)).toBe('accepted · balance $30.00');
    expect(await text(page, `${row(2)} [data-cell=stable]`)).toBe('accepted · balance $30.00');
    await stableBalance(page, 0, '$30.00');

    // An overdraft is refused, and the balance stays.
    await act(page, 0, 'withdraw', '100');
    await finalRow(page, 3);
    expect(await page.getAttribute(row(3), 'data-outcome')).toBe('refused');
    expect(await text(page, `${row(3)} [data-cell=stable]`)).toBe(
      'refused: insufficient funds (short by $70.00) · balance $30.00',
    );
    await stableBalance(page, 0, '$30.00');
    await stableBalance(page, 1, '$30.00');

    // Bob's branch accrues 1 % interest on the $30.00 it sees: a $0.30 shadow deposit.
    await act(page, 1, 'interest');
    await finalRow(page, 4);
    expect(await text(page, `${row(4)} [data-cell=tentative]`)).toBe(
      '+$0.30 on $30.00 seen here → $30.30',
    );
    await stableBalance(page, 0, '$30.30');
    await stableBalance(page, 1, '$30.30');

    // Both branches withdraw $20 at once from $30.30: the stable answers accept exactly one.
    await page.fill(`${branch(0)} [data-role=amount]`, '20');
    await page.fill(`${branch(1)} [data-role=amount]`, '20');
    await page.click('#race');
    await finalRow(page, 5);
    await finalRow(page, 6);
    const outcomes = [
      await page.getAttribute(row(5), 'data-outcome'),
      await page.getAttribute(row(6), 'data-outcome'),
    ].sort();
    expect(outcomes).toEqual(['accepted', 'refused']);
    await stableBalance(page, 0, '$10.30');
    await stableBalance(page, 1, '$10.30');

    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a cut-off branch's tentative yes revised into a stable no (RedBlue §5.3)", async () => {
    const page = await browser.context.newPage();
    await page.goto(served.url);
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
      await page.waitForSelector(`${row(2)}[data-state="tentative"]`, { timeout: 20_000 });
      expect(await page.getAttribute(row(2), 'data-tentative')).toBe('accepted');
      // Alice, with the majority, takes it all first.
      await act(page, 0, 'withdraw', dollars);
      await finalRow(page, 3);
      expect(await page.getAttribute(row(3), 'data-outcome')).toBe('accepted');
    } finally {
      await cluster.admin(1, 'unblock');
    }
    await finalRow(page, 2);
    expect(await page.getAttribute(row(2), 'data-outcome')).toBe('refused');
    expect(await page.getAttribute(row(2), 'data-revised')).toBe('yes');
    expect(await page.getAttribute(`${row(2)} [data-cell=tentative]`, 'class')).toBe('revoked');
    await stableBalance(page, 0, '$0.00');
    await stableBalance(page, 1, '$0.00');
    await page.close();
  });

  it('marks an amount that is not money as invalid and sends nothing', async () => {
    const page = await browser.context.newPage();
    await page.goto(served.url);
    await page.waitForSelector(`${branch(0)}[data-state="stable"]`, { timeout: 20_000 });
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
