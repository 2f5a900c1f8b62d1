import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import app from '../src/ticketing/app.js';
import { serveTicketingPage } from '../src/ticketing/serve.js';
import type { ServedPage } from '../src/shared/page-server.js';
import { launchChromium } from './support/chromium.js';

/**
 * The ticketing page (a React app on @creek/react) in headless Chromium against a real cluster
 * that verifies the tokens of its dev identity: the page signs in through the page server's dev
 * sign-in (as alice at first), the organizer (admin) stocks the event from the test. The page's
 * own bundle, the browser's WebSocket, the client SDK without the app (types only).
 * Each purchase row keeps the trail of its states (`data-trail`), so the test sees "reserved"
 * even when the final view follows within a millisecond; no timing is asserted.
 */
const APP = fileURLToPath(new URL('../src/ticketing/app.ts', import.meta.url));
const EVENT = 'page-test';

let cluster: LocalCluster;
let served: ServedPage;
let browser: { context: BrowserContext; close(): Promise<void> };
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  cluster = await LocalCluster.start({
    replicas: 3,
    app: APP,
    logLevel: 'error',
    devIdentity: true,
  });
  const identity = cluster.identity!;
  // Some wide-area delay, so that "rush" buyers on different replicas really overlap.
  await cluster.delayBetweenReplicas(20);
  const organizer = connect({
    urls: cluster.urls,
    token: cluster.token,
    app,
    auth: async () => (await identity.mint('admin')).token,
  });
  try {
    await organizer.invokeStrong('tickets.stock', { event: EVENT, count: 30 });
  } finally {
    organizer.close();
  }
  // Threshold 25 of 30: the first four purchases (29 … 26 left after them) sell on their
  // preliminary views, the fifth (25 left) waits for the final one.
  served = await serveTicketingPage({
    urls: cluster.urls,
    token: cluster.token,
    event: EVENT,
    threshold: 25,
    signIn: identity,
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(1_000);
});

const stock = (): Promise<string | null> =>
  page.locator('#stock[data-level="strong"]').textContent();
const rows = (): Locator => page.locator('#purchases li');
const attr = (name: string): Promise<(string | undefined)[]> =>
  rows().evaluateAll((els, n) => els.map((e) => e.getAttribute(n) ?? undefined), name);
const FINAL_STATES = ['confirmed', 'reissued', 'withdrawn', 'sold-out'];
/** Final views can take seconds on a loaded machine; nothing here is a timing assertion. */
const POLL = { timeout: 30_000 };
/** Waits until the newest `n` rows show their final view. */
const settled = (n: number): Promise<void> =>
  expect
    .poll(
      async () =>
        (await attr('data-state')).slice(0, n).every((s) => FINAL_STATES.includes(s ?? '')),
      POLL,
    )
    .toBe(true);
/** The ticket a row's final view gives the customer. */
const held = (text: string): string | undefined => /^Ticket (T\d{4}) · confirmed/.exec(text)?.[1];
/** The tickets the signed-in user's list shows, once its server has confirmed it. */
const mine = (): Promise<string[]> =>
  page
    .locator('#mine[data-level="strong"] li')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-ticket') ?? ''));

describe('ticketing page (React)', () => {
  it('buy: the ticket is handed over on the tentative view, then confirmed; the stock goes down', async () => {
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    await page.waitForSelector('[data-role=sign-in][data-user="alice"]', POLL);
    await expect.poll(stock, POLL).toBe('30');
    await page.waitForSelector('.connection[data-status="connected"]', POLL);

    await page.locator('#buy').click();
    await settled(1);
    expect(await attr('data-state')).toEqual(['confirmed']);
    expect(await attr('data-trail')).toEqual(['reserved confirmed']);
    expect(await rows().first().textContent()).toBe('Ticket T0001 · confirmed');
    expect(await rows().first().getAttribute('class')).toContain('phase-stable');
    // The live query pushes the new stock.
    await expect.poll(stock, POLL).toBe('29');
  });

  it('rush: one buyer per region at once, each confirmed or moved onto another ticket', async () => {
    await page.locator('#rush').click();
    await expect.poll(() => rows().count(), POLL).toBe(4);
    await settled(3);
    const texts = (await rows().allTextContents()).slice(0, 3);
    // Above the threshold, so each is handed a ticket on its tentative view. Whether two of
    // them collided depends on timing; either way the final views hold three different tickets.
    for (const t of (await attr('data-trail')).slice(0, 3)) expect(t).toMatch(/^reserved /);
    expect(
      (await attr('data-state')).slice(0, 3).every((s) => s === 'confirmed' || s === 'reissued'),
    ).toBe(true);
    expect(texts.map(held).sort()).toEqual(['T0002', 'T0003', 'T0004']);
    // A purchase moved onto another ticket says why: another purchase came first.
    const states = (await attr('data-state')).slice(0, 3);
    const causes = (await attr('data-causes')).slice(0, 3);
    for (const [i, state] of states.entries())
      if (state === 'reissued') expect(causes[i]).toMatch(/^tickets\.buy( tickets\.buy)*$/);
    await expect.poll(stock, POLL).toBe('26');
  });

  it('at or below the threshold the page waits for the confirmation', async () => {
    // Every replica has all four earlier purchases, so the page's replica's tentative view
    // counts them too (25 left after this one).
    await cluster.converged();
    await page.locator('#buy').click();
    await settled(1);
    expect((await attr('data-trail'))[0]).toBe('waiting confirmed');
    expect(await rows().first().textContent()).toBe('Ticket T0005 · confirmed');
    await expect.poll(stock, POLL).toBe('25');
    // Product copy: no customer ids, server numbers or op names on screen.
    const shown = await page.locator('body').innerText();
    expect(shown).not.toMatch(/web-|replica|ws:\/\/|tickets\.\w+|§/i);
    expect(errors).toEqual([]);
  });

  it("lists the signed-in user's own tickets, and another user's never", async () => {
    // Every purchase so far was alice's: the page started signed in as her.
    await expect.poll(mine, POLL).toEqual(['T0001', 'T0002', 'T0003', 'T0004', 'T0005']);
    expect(
      await page.locator('#mine').evaluate((e) => e.previousElementSibling?.textContent),
    ).toMatch(/^alice's tickets/);
    // Bob signs in: a new session, with none of alice's tickets in his list.
    await page.selectOption('[data-role=sign-in] select', 'bob');
    await page.waitForSelector('[data-role=sign-in][data-user="bob"]', POLL);
    await page.waitForSelector('#mine[data-level="strong"]', POLL);
    expect(await mine()).toEqual([]);
    expect(await page.locator('#mine').textContent()).toBe('None yet.');
    await page.locator('#buy').click();
    await settled(1);
    expect(await rows().first().textContent()).toBe('Ticket T0006 · confirmed');
    // The page server renders bob's receipt with a client of its own at another replica, started
    // after the page's context token: the ticket just bought is on it.
    await page.locator('#receipt-button').click();
    await page.waitForSelector('#receipt li[data-ticket="T0006"]', POLL);
    expect(
      await page.locator('#receipt li').evaluateAll((els) => els.map((e) => e.textContent)),
    ).toEqual(['Ticket T0006']);
    await expect.poll(mine, POLL).toEqual(['T0006']);
    // Back to alice: hers, without bob's.
    await page.selectOption('[data-role=sign-in] select', 'alice');
    await page.waitForSelector('[data-role=sign-in][data-user="alice"]', POLL);
    await expect.poll(mine, POLL).toEqual(['T0001', 'T0002', 'T0003', 'T0004', 'T0005']);
    expect(errors).toEqual([]);
  });

  it('the receipt route refuses a request without a sign-in, with a bad context token, or not a GET', async () => {
    const url = new URL('receipt', served.url);
    const user = (await cluster.identity!.mint('bob')).token;
    const plain = await fetch(url, {
      headers: { 'x-creek-context': 'ct1.1.aaaaaaaaaaaaaaaaaaaaaa' },
    });
    expect(plain.status).toBe(401);
    expect(await plain.text()).toMatch(/sign in first/);
    const missing = await fetch(url, { headers: { authorization: `Bearer ${user}` } });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toMatch(/send your context token/);
    const malformed = await fetch(url, {
      headers: { authorization: `Bearer ${user}`, 'x-creek-context': 'ct1.01.x' },
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toMatch(
      /x-creek-context: connect: after: this is not a context token/,
    );
    const forged = await fetch(url, {
      headers: { authorization: `Bearer ${user}`, 'x-creek-context': `ct1.1.${'a'.repeat(22)}` },
    });
    expect(forged.status).toBe(502);
    expect(await forged.text()).toMatch(/not signed by this cluster/);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });
});
