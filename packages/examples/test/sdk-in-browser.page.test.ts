import { fileURLToPath } from 'node:url';
import { LocalCluster } from '@creek/server/node';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePage, type ServedPage } from '../src/shared/page-server.js';
import { launchChromium } from './support/chromium.js';
import type { SdkPageResult, SeenView } from './support/sdk-page.js';

/**
 * @creek/client in a real browser (headless Chromium) against a real 3-replica cluster: the page
 * (support/sdk-page.ts, bundled for the browser by servePage) connects over the browser's own
 * WebSocket, and every view it gets is checked here: order, level, value. Then the minified
 * browser build itself (packages/client/scripts/build-browser.ts) is loaded into the same page and
 * used against the cluster.
 */

let cluster: LocalCluster;
let page: ServedPage;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let tab: Page;
let result: SdkPageResult;
const errors: string[] = [];

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  page = await servePage({
    title: 'Creek SDK in a browser',
    entry: fileURLToPath(new URL('./support/sdk-page.ts', import.meta.url)),
    // The client takes the first URL that answers: replica 1, here.
    config: { urls: [cluster.url(1), cluster.url(0)], token: cluster.token, key: 'browser' },
    body: '<h1>Creek SDK in a browser</h1><ol id="views"></ol>',
  });
  browser = await launchChromium();
  tab = await browser.context.newPage();
  tab.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  tab.on('console', (m) => {
    // The page server has no favicon; the browser asks anyway.
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico'))
      errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  await tab.goto(page.url);
  await tab.waitForSelector('body[data-done]', { timeout: 30_000 });
  const error = await tab.evaluate(() => window.SDK_ERROR);
  if (error !== undefined) throw new Error(`the page failed: ${error}`);
  result = (await tab.evaluate(() => window.SDK_RESULT))!;
  // The page shows what it recorded.
  expect(await tab.locator('#views li').count()).toBe(result.views.length);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await page?.close();
  await cluster?.stop(1_000);
});

const of = (call: string): Omit<SeenView, 'call'>[] =>
  result.views.filter((v) => v.call === call).map(({ call: _call, ...rest }) => rest);

describe('the SDK in Chromium against a 3-replica cluster', () => {
  it('runs with no Node globals and no errors, connected to the first URL', () => {
    expect(errors).toEqual([]);
    expect(result.globals).toEqual({
      process: 'undefined',
      require: 'undefined',
      Buffer: 'undefined',
    });
    expect(result.replica).toBe(1);
  });

  it('invoke: the tentative view as a preliminary weak view, then the stable one as final', () => {
    expect(of('increment')).toEqual([
      { kind: 'update', value: 1, level: 'weak', final: false },
      { kind: 'final', value: 1, level: 'strong', final: true },
    ]);
    expect(of('get-note')).toEqual([
      { kind: 'update', value: { hi: 'there' }, level: 'weak', final: false },
      { kind: 'final', value: { hi: 'there' }, level: 'strong', final: true },
    ]);
    expect(of('enqueue')).toEqual([
      { kind: 'update', value: { position: 0 }, level: 'weak', final: false },
      { kind: 'final', value: { position: 0 }, level: 'strong', final: true },
    ]);
  });

  it('invokeStrong and invokeWeak: one final view, at their level', () => {
    expect(of('increment-strong')).toEqual([
      { kind: 'final', value: 3, level: 'strong', final: true },
    ]);
    expect(of('get-weak')).toEqual([{ kind: 'final', value: 3, level: 'weak', final: true }]);
    expect(of('put-weak')).toEqual([{ kind: 'final', value: null, level: 'weak', final: true }]);
    expect(of('dequeue')).toEqual([
      {
        kind: 'final',
        value: { item: 'ticket-1', position: 0, remaining: 0 },
        level: 'strong',
        final: true,
      },
    ]);
  });

  it('views arrive call by call, each call tentative before stable', () => {
    expect(result.views.map((v) => `${v.call}:${v.kind}`)).toEqual([
      'increment:update',
      'increment:final',
      'increment-strong:final',
      'get-weak:final',
      'put-weak:final',
      'get-note:update',
      'get-note:final',
      'enqueue:update',
      'enqueue:final',
      'dequeue:final',
      'speculate:final',
    ]);
  });

  it('speculate runs once on the preliminary view, and the final view confirms it', () => {
    expect(result.speculation).toEqual({ runs: [13], aborted: [], result: 'rendered 13' });
  });

  it('the replica confirmed equal stable results with a short confirm frame', () => {
    // 8 ops: the 2 weak ones get one tentative view; the 4 invokes a tentative view, then a
    // confirm, as no other client ran between their tentative and stable executions; the 2
    // invokeStrong calls ask for the stable view alone and get just that.
    expect(result.frames[0]).toBe('welcome');
    // Per-op frames only: session-level frames (none today) answer no op.
    const counts = new Map<string, number>();
    for (const f of result.frames.slice(1))
      if (/^(view|confirm|error)/.test(f)) counts.set(f, (counts.get(f) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({
      'view:tentative': 6,
      confirm: 4,
      'view:stable': 2,
    });
  });

  it('the browser build itself (npm run build:browser, minified) works in the page', async () => {
    // scripts/ is outside the client's tsconfig, so it is loaded at run time, typed here.
    const script = (await import(
      new URL('../../client/scripts/build-browser.ts', import.meta.url).href
    )) as { bundleForBrowser(minify?: boolean): Promise<{ code: string }> };
    const { code } = await script.bundleForBrowser(true);
    const config = { urls: [cluster.url(2)], token: cluster.token };
    // Loaded as a module from a blob: URL. The import is a string: vitest rewrites `import()` in
    // the test's own functions, and this one runs in the page.
    await tab.evaluate((code) => {
      (window as unknown as { SDK_URL: string }).SDK_URL = URL.createObjectURL(
        new Blob([code], { type: 'text/javascript' }),
      );
    }, code);
    await tab.evaluate('import(window.SDK_URL).then((m) => { window.SDK = m; })');
    const got = await tab.evaluate(async (config) => {
      const sdk = (window as unknown as { SDK: Record<string, unknown> }).SDK;
      const connect = sdk.connect as (o: typeof config) => {
        invoke(
          op: string,
          args: unknown,
        ): PromiseLike<unknown> & {
          setCallbacks(c: { onUpdate(v: unknown): void }): unknown;
        };
        invokeWeak(op: string, args: unknown): PromiseLike<unknown>;
        replica(): number | null;
        close(): void;
      };
      const creek = connect(config);
      const updates: unknown[] = [];
      const c = creek.invoke('kv.increment', { key: 'dist', by: 7 });
      c.setCallbacks({ onUpdate: (v) => updates.push(v) });
      const final = await c;
      const weak = await creek.invokeWeak('kv.get', { key: 'dist' });
      const replica = creek.replica();
      creek.close();
      return { exports: Object.keys(sdk).length, updates, final, weak, replica };
    }, config);
    expect(got).toMatchObject({ updates: [7], final: 7, weak: 7, replica: 2 });
    expect(got.exports).toBeGreaterThan(10);
    expect(errors).toEqual([]);
  });
});
