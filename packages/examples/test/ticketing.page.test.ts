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
 * The ticketing page in headless Chromium against a real cluster: the page's own bundle, the
 * browser's WebSocket, the client SDK without the app (types only). Each purchase row keeps the
 * trail of its views, so the test sees "reserved (tentative)" even when the final view follows
 * within a millisecond; no timing is asserted.
 */
const APP = fileURLToPath(new URL('../src/ticketing/app.ts', import.meta.url));
const EVENT = 'page-test';

let cluster: LocalCluster;
let served: ServedPage;
let browser: { context: BrowserContext; close(): Promise<void> };
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, app: APP, logLevel: 'error' });
  // Some wide-area delay, so that "rush" buyers on different replicas really overlap.
  await cluster.delayBetweenReplicas(20);
  const organizer = connect({ urls: cluster.urls, token: cluster.token, app });
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
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(1_000);
});

const stock = (): Promise<string | null> => page.locator('#stock').textContent();
const rows = (): Locator => page.locator('#purchases li');
const states = (): Promise<(string | undefined)[]> =>
  rows().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.state));
const FINAL_STATES = ['confirmed', 'revoked', 'sold-out'];
/** Final views can take seconds on a loaded machine; nothing here is a timing assertion. */
const POLL = { timeout: 30_000 };
/** Waits until the newest `n` rows show their final view. */
const settled = (n: number): Promise<void> =>
  expect
    .poll(
      async () => (await states()).slice(0, n).every((s) => FINAL_STATES.includes(s ?? '')),
      POLL,
    )
    .toBe(true);
/** The ticket a row's final view gives the customer. */
const held = (text: string): string | undefined =>
  /(T\d{4})(?: confirmed| \(confirmed\))$/.exec(text)?.[1];

describe('ticketing page', () => {
  it('buy shows "reserved (tentative)", then "confirmed", and the stock goes down', async () => {
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    await page.locator('#buy:enabled').waitFor();
    expect(await stock()).toBe('30');

    await page.locator('#buy').click();
    await settled(1);
    expect(await states()).toEqual(['confirmed']);
    expect(await rows().first().textContent()).toMatch(
      /: T0001 reserved \(tentative\) → T0001 confirmed$/,
    );
    await expect.poll(stock, POLL).toBe('29');
    expect(await page.locator('#stock-level').textContent()).toBe('');
  });

  it('rush: one buyer per replica at once, each confirmed or revoked onto another ticket', async () => {
    await page.locator('#rush').click();
    await expect.poll(() => rows().count(), POLL).toBe(4);
    await settled(3);
    const texts = (await rows().allTextContents()).slice(0, 3);
    // Above the threshold, so each is handed a ticket on its preliminary view. Whether two of
    // them collided depends on timing; either way the final views hold three different tickets.
    for (const t of texts) expect(t).toMatch(/ reserved \(tentative\) → /);
    expect((await states()).slice(0, 3).every((s) => s === 'confirmed' || s === 'revoked')).toBe(
      true,
    );
    expect(texts.map(held).sort()).toEqual(['T0002', 'T0003', 'T0004']);
    await expect.poll(stock, POLL).toBe('26');
  });

  it('at or below the threshold the page waits for the final view', async () => {
    // Every replica has all four earlier purchases, so the page's replica's preliminary view
    // counts them too (25 left after this one).
    await cluster.converged();
    await page.locator('#buy').click();
    await settled(1);
    expect(await rows().first().textContent()).toMatch(
      /reserved \(tentative\), ≤ 25 left: waiting for the final view → T0005 confirmed$/,
    );
    await expect.poll(stock, POLL).toBe('25');
    expect(errors).toEqual([]);
  });
});
