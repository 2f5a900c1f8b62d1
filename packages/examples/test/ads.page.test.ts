import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveAdsPage } from '../src/ads/serve.js';
import type { ServedPage } from '../src/shared/page-server.js';
import { otherRefs, startAdsCluster, type AdsCluster } from './ads-cluster.js';
import { launchChromium } from './support/chromium.js';

/**
 * The ad-serving page (a React app on @creek/react) in Chromium against a real cluster. The page's replica is cut off from the
 * others while a fetch is in flight, so its final view cannot arrive before the test has seen the
 * preliminary ads: no timing decides the outcome.
 */

let ads: AdsCluster;
let served: ServedPage;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  ads = await startAdsCluster();
  const { cluster, follower } = ads;
  // The page reads through the follower; re-targeting goes to the next URL.
  const urls = [follower, ...[0, 1, 2].filter((i) => i !== follower)].map((i) => cluster.url(i));
  served = await serveAdsPage({
    urls,
    token: cluster.token,
    users: ads.data.profiles.map((p) => p.user),
    ads: ads.data.ads.length,
    refs: 8,
    adReads: 'weak',
    delayMs: 0,
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    // The page server has no favicon; Chromium asks for one anyway.
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico'))
      pageErrors.push(m.text());
  });
  await page.goto(served.url);
  await page.waitForSelector('#status[data-state=idle]');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await ads?.stop();
});

const shownIds = (marker: string): Promise<string[]> =>
  page.$$eval(`#ads li.ad.${marker}`, (lis) => lis.map((li) => (li as HTMLElement).dataset.id!));
const logKinds = (): Promise<string[]> =>
  page.$$eval('#log li', (lis) => lis.map((li) => (li as HTMLElement).dataset.kind!));

/** Starts a fetch with the page's replica cut off; resolves once the preliminary ads are shown. */
async function fetchWhileCutOff(user: string, count: number): Promise<void> {
  await page.selectOption('#user', user);
  await ads.isolate(ads.follower);
  await page.click('#fetch');
  await page.waitForSelector('#status[data-state=preliminary]');
  expect(await page.locator('#ads li.ad.preliminary').count()).toBe(count);
  expect(await page.locator('#ads li.ad .marker').first().textContent()).toBe('checking');
}

describe('the ad-serving page', () => {
  it('shows ads from the preliminary view, then marks them confirmed', async () => {
    const profile = ads.data.profiles[3]!;
    try {
      await fetchWhileCutOff(profile.user, profile.adIds.length);
      expect(await shownIds('preliminary')).toEqual(profile.adIds);
    } finally {
      await ads.heal(ads.follower);
    }
    await page.waitForSelector('#status[data-state=confirmed]');
    expect(await shownIds('confirmed')).toEqual(profile.adIds);
    expect(await page.locator('#ads li.ad .marker').first().textContent()).toBe('confirmed');
    expect(await logKinds()).toEqual(['preliminary', 'confirmed']);
    expect(pageErrors).toEqual([]);
  });

  it('withdraws ads of a stale profile and shows the corrected ones', async () => {
    const profile = ads.data.profiles[4]!;
    const retargeted = otherRefs(ads.data, profile.adIds);
    try {
      await fetchWhileCutOff(profile.user, profile.adIds.length);
      // Someone re-targets the user elsewhere; the majority commits it before the page's read.
      await ads
        .client(ads.other)
        .invokeStrong('profile.setAds', { user: profile.user, adIds: retargeted });
    } finally {
      await ads.heal(ads.follower);
    }
    await page.waitForSelector('#status[data-state=corrected]');
    expect(await shownIds('corrected')).toEqual(retargeted);
    const kinds = await logKinds();
    expect(kinds[0]).toBe('preliminary');
    expect(kinds).toContain('withdrawn');
    expect(kinds.at(-1)).toBe('corrected');

    // The strong-only fetch agrees, and shows nothing before its end.
    await page.click('#fetch-strong');
    await page.waitForSelector('#status[data-state=strong]');
    expect(await shownIds('strong')).toEqual(retargeted);
    expect(await logKinds()).toEqual(['strong']);
    // Product copy: no ad ids, server URLs or op names on screen (they are in data attributes).
    const shown = await page.locator('body').innerText();
    expect(shown).not.toMatch(/\bad\d+\b|ws:\/\/|profile\.\w+|ads\.get|§/);
    expect(pageErrors).toEqual([]);
  });
});
