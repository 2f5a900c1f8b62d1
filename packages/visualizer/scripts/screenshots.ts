/**
 * Takes the screenshots in the package README (docs/*.png), in light and dark, at 1280×800:
 * simulation mode on seed 1878 with 5 replicas at a frame with a partition in force, and live mode
 * on a local 3-replica cluster under the page's workload with replica 2 cut off.
 *
 *   npm run visualizer:screenshots
 */
import { fileURLToPath } from 'node:url';
import { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { serveVisualizer } from '../src/serve.js';
import { launchChromium } from '../test/support/chromium.js';

const docs = (name: string): string => fileURLToPath(new URL(`../docs/${name}`, import.meta.url));

async function shoot(
  context: BrowserContext,
  url: string,
  name: string,
  prepare: (p: Page) => Promise<void>,
) {
  for (const scheme of ['light', 'dark'] as const) {
    const page = await context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(url);
    await prepare(page);
    await page.screenshot({ path: docs(`${name}-${scheme}.png`), fullPage: true });
    console.log(`wrote docs/${name}-${scheme}.png`);
    await page.close();
  }
}

const browser = await launchChromium();
try {
  const sim = await serveVisualizer();
  await shoot(
    browser.context,
    `${sim.url}?seed=1878&replicas=5&faults=all`,
    'simulation',
    async (page) => {
      await page.waitForFunction(() => document.body.dataset.state === 'done', undefined, {
        timeout: 120_000,
      });
      const frames = Number(await page.locator('#scrub').getAttribute('max'));
      // The first frame with a partition in force and messages on their way.
      for (let k = 0; k <= frames; k += 2) {
        await page.locator('#scrub').fill(String(k));
        if (
          (await page.locator('#network').getAttribute('data-partitioned')) === 'true' &&
          (await page.locator('#graph circle.message').count()) >= 6
        )
          break;
      }
    },
  );
  await sim.close();

  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  const live = await serveVisualizer({
    live: { urls: cluster.urls, token: cluster.token, adminToken: cluster.adminToken },
  });
  try {
    let first = true;
    await shoot(browser.context, live.url, 'live', async (page) => {
      await page.waitForFunction(
        () => document.querySelectorAll('.replica[data-connection=open]').length === 3,
      );
      await page.fill('input[name=rate]', '80');
      await page.fill('input[name=strong]', '30');
      await page.fill('input[name=keys]', '5');
      await page.click('[data-act=workload]');
      await page.waitForTimeout(6_000);
      if (first) await page.click('.replica[data-replica="2"] [data-act=cut]');
      first = false;
      await page.waitForTimeout(4_000);
    });
    await live.close();
  } finally {
    await cluster.stop(2_000);
  }
} finally {
  await browser.close();
}
