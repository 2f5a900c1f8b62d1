import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster } from '../src/dev-cluster.js';
import { serveVisualizer, type LiveCluster, type ServedVisualizer } from '../src/serve.js';
import { launchChromium } from './support/chromium.js';
import type { LocalCluster } from '@creek/server/node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The visualizer running the cluster itself (`--dev`, what `npm start` does): a replica killed
 * from the page shows as down while the others go on, and restarted from the page it comes back
 * and the cluster converges.
 */
let cluster: LocalCluster;
let live: LiveCluster;
let served: ServedVisualizer;
let browser: { context: BrowserContext; close(): Promise<void> };
const dir = mkdtempSync(join(tmpdir(), 'creek-viz-dev-'));
beforeAll(async () => {
  const [d, b] = await Promise.allSettled([
    startDevCluster({ replicas: 3, dataDir: dir }),
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

describe('the visualizer running its own cluster', () => {
  it('kills a replica from the page and restarts it; the cluster converges', async () => {
    // Started without a dev identity provider, it serves no sign-in.
    expect(cluster.identity).toBeNull();
    expect((await fetch(`${served.url}dev/sign-in?user=alice`)).status).toBe(404);
    const page = await browser.context.newPage();
    await page.goto(served.url);
    const state = (i: number) =>
      page.locator(`.replica[data-replica="${i}"]`).getAttribute('data-connection');
    await page.waitForFunction(
      () => document.querySelectorAll('.replica[data-connection=open]').length === 3,
    );
    await page.click('[data-act=workload]');
    await page.click('.replica[data-replica="1"] [data-act=kill]');
    await page.waitForFunction(
      () =>
        document.querySelector('.replica[data-replica="1"]')?.getAttribute('data-state') === 'down',
    );
    expect(cluster.isRunning(1)).toBe(false);
    expect(await state(0)).toBe('open');
    // Killing what is not running is refused, and said.
    await page.click('.replica[data-replica="1"] [data-act=kill]');
    await page.waitForFunction(() =>
      /replica 1 is not running/.test(document.getElementById('message')?.textContent ?? ''),
    );
    await page.click('.replica[data-replica="1"] [data-act=restart]');
    // A generous deadline, not a bound: a replica process starting on a loaded 2-core machine
    // took over 30 s once, with other heavy jobs beside the suite.
    await page.waitForFunction(
      () =>
        document.querySelector('.replica[data-replica="1"]')?.getAttribute('data-connection') ===
        'open',
      undefined,
      { timeout: 90_000 },
    );
    await page.click('[data-act=workload]');
    await page.waitForFunction(
      () => document.getElementById('convergence')?.dataset.converged === 'true',
      undefined,
      { timeout: 90_000 },
    );
    await page.close();
  }, 240_000);
});
