import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROFILES } from '@creek/server/geo';
import type { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster } from '../src/dev-cluster.js';
import { serveVisualizer, type LiveCluster, type ServedVisualizer } from '../src/serve.js';
import { launchChromium } from './support/chromium.js';

/**
 * The visualizer running its cluster under a network profile (`npm start -- --profile us-eu`):
 * the graph labels each replica with its region and each link with the round trip its two ends'
 * delays add, as the replicas report them, so "Slow links", "Heal" and a restart show on it. The
 * test waits on what the page draws, never on time alone.
 */
let cluster: LocalCluster;
let live: LiveCluster;
let served: ServedVisualizer;
let browser: { context: BrowserContext; close(): Promise<void> };
const dir = mkdtempSync(join(tmpdir(), 'creek-viz-geo-'));
beforeAll(async () => {
  const [d, b] = await Promise.allSettled([
    startDevCluster({ replicas: 3, dataDir: dir, profile: PROFILES['us-eu'] }),
    launchChromium(),
  ]);
  if (d.status === 'fulfilled') ({ cluster, live } = d.value);
  if (b.status === 'fulfilled') browser = b.value;
  if (d.status === 'rejected') throw d.reason;
  if (b.status === 'rejected') throw b.reason;
  served = await serveVisualizer({ live });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
  rmSync(dir, { recursive: true, force: true });
});

/** Each link's round-trip label, `a-b` → ms, once the page draws exactly `want`. */
async function waitForRtts(page: Page, want: Record<string, number>, timeout = 30_000) {
  await page.waitForFunction(
    (w) => {
      const got: Record<string, number> = {};
      for (const t of document.querySelectorAll('#graph text.rtt'))
        got[`${t.getAttribute('data-from')}-${t.getAttribute('data-to')}`] = Number(
          t.getAttribute('data-rtt-ms'),
        );
      return JSON.stringify(got) === JSON.stringify(w);
    },
    want,
    { timeout },
  );
}

describe('the visualizer with a network profile', () => {
  it('shows each replica’s region and each link’s round trip, through Slow links, Heal and a restart', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    await page.waitForFunction(
      () => document.querySelectorAll('.replica[data-connection=open]').length === 3,
    );
    expect(await page.locator('#profile').getAttribute('data-profile')).toBe('us-eu');
    expect(await page.locator('#profile').textContent()).toMatch(/no jitter/);
    const regions = await page
      .locator('#graph text.region')
      .evaluateAll((ts) => ts.map((t) => [t.getAttribute('data-replica'), t.textContent]));
    expect(regions).toEqual([
      ['0', 'us-east'],
      ['1', 'us-west'],
      ['2', 'eu-west'],
    ]);
    expect(await page.locator('.replica[data-replica="2"]').getAttribute('data-region')).toBe(
      'eu-west',
    );
    // The profile's round trips: us-east–us-west 87, us-east–eu-west 81, us-west–eu-west 130 ms.
    const profile = { '0-1': 87, '0-2': 81, '1-2': 130 };
    await waitForRtts(page, profile);
    const label = page.locator('#graph text.rtt[data-from="1"][data-to="2"]');
    expect(await label.textContent()).toMatch(/^130 ms.*configured, not measured/);

    // Slow links adds 200 ms to each message replica 2 sends; Heal brings back the profile's.
    const slow = { '0-1': 87, '0-2': 40.5 + 200, '1-2': 65 + 200 };
    await page.click('.replica[data-replica="2"] [data-act=slow]');
    await waitForRtts(page, slow);
    await page.click('.replica[data-replica="2"] [data-act=heal]');
    await waitForRtts(page, profile);

    // A restarted replica gets the profile's delays again: it comes back with none (which would
    // draw 40.5 and 65 ms), not with the slow ones it had before it was killed.
    await page.click('.replica[data-replica="2"] [data-act=slow]');
    await waitForRtts(page, slow);
    await page.click('.replica[data-replica="2"] [data-act=kill]');
    await page.waitForFunction(
      () =>
        document.querySelector('.replica[data-replica="2"]')?.getAttribute('data-connection') !==
        'open',
    );
    await page.click('.replica[data-replica="2"] [data-act=restart]');
    // A generous deadline, not a bound: a replica process can take long to start on a loaded
    // machine.
    await page.waitForFunction(
      () =>
        document.querySelector('.replica[data-replica="2"]')?.getAttribute('data-connection') ===
        'open',
      undefined,
      { timeout: 90_000 },
    );
    await waitForRtts(page, profile);
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);
});
