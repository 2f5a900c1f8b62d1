import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import type { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevCluster } from '../src/dev-cluster.js';
import { serveVisualizer, type ServedVisualizer } from '../src/serve.js';
import { launchChromium } from './support/chromium.js';

/**
 * `npm start`'s visualizer with the dev identity provider: the replicas verify users' tokens, the
 * visualizer serves /dev/users and /dev/sign-in, and the page's workload signs in as the dev user
 * picked in its panel, so its ops (closed to anonymous callers) run, as that user.
 */
let cluster: LocalCluster;
let served: ServedVisualizer;
let browser: { context: BrowserContext; close(): Promise<void> };
const dir = mkdtempSync(join(tmpdir(), 'creek-viz-signed-in-'));
beforeAll(async () => {
  const [d, b] = await Promise.allSettled([
    startDevCluster({
      replicas: 3,
      dataDir: dir,
      app: fileURLToPath(new URL('fixtures/signed-in-app.ts', import.meta.url)),
      devIdentity: true,
    }),
    launchChromium(),
  ]);
  if (b.status === 'fulfilled') browser = b.value;
  if (d.status === 'rejected') throw d.reason;
  if (b.status === 'rejected') throw b.reason;
  cluster = d.value.cluster;
  served = await serveVisualizer({ live: d.value.live });
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
  rmSync(dir, { recursive: true, force: true });
});

async function waitFor(page: Page, what: string, fn: () => Promise<boolean>, ms = 60_000) {
  const start = Date.now();
  while (!(await fn())) {
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}`);
    await page.waitForTimeout(100);
  }
}

/** Runs the panel's workload until `n` strong ops answered stably, then stops it. */
async function runWorkload(page: Page, n: number): Promise<void> {
  await page.fill('input[name=strong]', '50');
  await page.click('[data-act=workload]');
  await waitFor(
    page,
    `${n} strong ops answered stably`,
    async () =>
      (await page.locator('#timelines tr[data-level=strong][data-stable-ms]').count()) >= n,
  );
  await page.click('[data-act=workload]');
  expect(await page.locator('#timelines tr.failed').allTextContents()).toEqual([]);
}

describe('the visualizer with the dev identity provider', () => {
  it('serves the sign-in endpoints, and nothing else under /dev', async () => {
    const users = await fetch(`${served.url}dev/users`);
    expect(await users.json()).toEqual({ users: ['alice', 'bob', 'admin'] });
    expect((await fetch(`${served.url}dev/sign-in`)).status).toBe(400);
    expect((await fetch(`${served.url}dev/sign-in?user=${'x'.repeat(65)}`)).status).toBe(400);
    expect((await fetch(`${served.url}dev/other`)).status).toBe(404);
    const signedIn = (await (await fetch(`${served.url}dev/sign-in?user=alice`)).json()) as {
      user: string;
      token: string;
    };
    expect(signedIn.user).toBe('alice');
    expect(signedIn.token.split('.')).toHaveLength(3);
  });

  it("signs the page's workload in as the dev user picked, whose ops then run as that user", async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    await page.waitForFunction(
      () => document.querySelector('select[name=user]')?.getAttribute('data-loaded') === 'true',
    );
    expect(await page.locator('select[name=user] option').allTextContents()).toEqual([
      'alice',
      'bob',
      'admin',
    ]);
    // The built-in counter: kv.* open to signed-in users only, as in the examples' combined app.
    await runWorkload(page, 3);

    await page.selectOption('select[name=user]', 'bob');
    await page.waitForFunction(
      () => document.querySelector('select[name=op]')?.getAttribute('data-loaded') === 'true',
    );
    await page.selectOption('select[name=op]', 'visits.add');
    await page.fill('input[name=args]', '{"key": "$key"}');
    await runWorkload(page, 3);
    expect(await page.locator('#message').textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();

    // Every visit the workload made was bob's.
    const identity = cluster.identity!;
    const client = connect({
      urls: cluster.urls,
      token: cluster.token,
      auth: async () => (await identity.mint('carol')).token,
    });
    const of = async (user: string): Promise<number> =>
      (await client.invokeStrong('visits.of' as never, { user } as never)) as number;
    expect(await of('bob')).toBeGreaterThanOrEqual(3);
    expect(await of('alice')).toBe(0);
    expect(await of('anonymous')).toBe(0);
    client.close();
  }, 180_000);
});
