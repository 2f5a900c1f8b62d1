import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveVisualizer, type ServedVisualizer } from '../src/serve.js';
import { launchChromium } from './support/chromium.js';

/**
 * The simulation mode in Chromium: a seed named in the URL runs in the page, and the committed
 * order the page shows is the one `npm run sim -- --seed S --json` reports. The page says where it
 * is in `body[data-state]`; the test waits on that, never on time.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));

let served: ServedVisualizer;
let browser: { context: BrowserContext; close(): Promise<void> };
beforeAll(async () => {
  const [s, b] = await Promise.allSettled([serveVisualizer(), launchChromium()]);
  if (s.status === 'fulfilled') served = s.value;
  if (b.status === 'fulfilled') browser = b.value;
  if (s.status === 'rejected') throw s.reason;
  if (b.status === 'rejected') throw b.reason;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

function simJson(
  args: string[],
): Promise<{ committedOrder: string[]; ok: boolean; stats: { added: number } }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=creek-source',
        'packages/server/src/sim/cli.ts',
        ...args,
        '--json',
      ],
      { cwd: root, timeout: 60_000, maxBuffer: 64 << 20 },
      (err, stdout) => {
        if (err !== null && stdout === '') return reject(err);
        resolve(
          JSON.parse(stdout.trim().split('\n')[0]!) as {
            committedOrder: string[];
            ok: boolean;
            stats: { added: number };
          },
        );
      },
    );
  });
}

async function open(query: string): Promise<Page> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${served.url}${query}`);
  await page.waitForFunction(
    () => ['done', 'idle', 'invalid'].includes(document.body.dataset.state ?? ''),
    undefined,
    {
      timeout: 60_000,
    },
  );
  expect(errors).toEqual([]);
  return page;
}

describe('the visualizer, simulation mode', () => {
  it('runs the seed a URL names and shows the committed order npm run sim reports', async () => {
    const page = await open('?seed=5&replicas=3&faults=all');
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('done');
    const shown = await page.locator('[data-role=committed-order] li').allTextContents();
    const cli = await simJson(['--seed', '5', '--replicas', '3', '--faults', 'all']);
    expect(shown).toEqual(cli.committedOrder);
    expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe(
      cli.ok ? 'ok' : 'failed',
    );
    // Every replica at the last frame, the one the run added to replace replica 2 (lost for
    // good) included; the three members' committed counts as the run left them.
    expect(cli.stats.added).toBe(1);
    expect(await page.locator('#replicas .replica').count()).toBe(3 + cli.stats.added);
    const counts = await page
      .locator('.replica [data-list=committed]')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-count'))));
    expect(counts.filter((c) => c === cli.committedOrder.length)).toHaveLength(3);
    await page.close();
  });

  it('steps and scrubs through the run: a partition shows, and lists grow from empty', async () => {
    const page = await open('?seed=3&replicas=3&faults=partition');
    await page.click('[data-act=start]');
    const committedAt = () =>
      page
        .locator('.replica [data-list=committed]')
        .evaluateAll((els) => els.reduce((s, e) => s + Number(e.getAttribute('data-count')), 0));
    expect(await committedAt()).toBe(0);
    await page.click('[data-act=forward]');
    expect(await page.evaluate(() => document.body.dataset.frame)).toBe('1');
    // Scrub until a frame shows a partition.
    const frames = Number(await page.locator('#scrub').getAttribute('max'));
    let partitioned = false;
    for (let k = 0; k <= frames && !partitioned; k += 5) {
      await page.locator('#scrub').fill(String(k));
      partitioned = (await page.locator('#network').getAttribute('data-partitioned')) === 'true';
    }
    expect(partitioned).toBe(true);
    expect(await page.locator('#network').textContent()).toMatch(/^Network: partitioned into \{/);
    await page.click('[data-act=end]');
    expect(await committedAt()).toBeGreaterThan(0);
    await page.close();
  });

  it('draws the graph with each message on its way, the recent ops and the charts, frame by frame', async () => {
    const page = await open('?seed=3&replicas=3&faults=partition');
    const frames = Number(await page.locator('#scrub').getAttribute('max'));
    // A frame halfway through: messages in flight drawn as dots between two replicas, no more
    // than the frame holds, each of a kind the simulator sends.
    await page.locator('#scrub').fill(String(Math.floor(frames / 2)));
    const dots = await page.locator('#graph circle.message').evaluateAll((els) =>
      els.map((e) => ({
        kind: e.getAttribute('data-kind')!,
        from: e.getAttribute('data-from'),
        to: e.getAttribute('data-to'),
      })),
    );
    const inFlight = Number(await page.locator('#graph').getAttribute('data-in-flight'));
    expect(dots.length).toBeGreaterThan(0);
    expect(dots.length).toBeLessThanOrEqual(inFlight);
    for (const d of dots) {
      expect(d.kind).toMatch(/^(gossip|paxos) \w+$/);
      expect(d.from).not.toBe(d.to);
    }
    // A partitioned frame: the graph draws links across the groups blocked, as the text says.
    let blocked = 0;
    for (let k = 0; k <= frames && blocked === 0; k += 5) {
      await page.locator('#scrub').fill(String(k));
      blocked = await page.locator('#graph line[data-state=blocked]').count();
    }
    expect(blocked).toBeGreaterThan(0);
    expect(await page.locator('#network').getAttribute('data-partitioned')).toBe('true');
    // Reorders: somewhere in the run a card rings ops that moved ahead of ops they followed.
    let moved = 0;
    for (let k = 0; k <= frames && moved === 0; k += 3) {
      await page.locator('#scrub').fill(String(k));
      moved = await page.locator('#replicas .op.moved').count();
    }
    expect(moved).toBeGreaterThan(0);
    // The recent ops at the end: 16, strong ones answered stably after their tentative view.
    await page.click('[data-act=end]');
    expect(await page.locator('#timelines tr').count()).toBe(16);
    const strong = await page
      .locator('#timelines tr[data-level=strong][data-stable-ms]')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-stable-ms'))));
    expect(strong.length).toBeGreaterThan(0);
    for (const ms of strong) expect(ms).toBeGreaterThan(0);
    // The charts end where the replay is: fewer points at the start than at the end.
    const points = () =>
      page.locator('[data-chart=committed]').evaluate((e) => Number(e.getAttribute('data-points')));
    const atEnd = await points();
    expect(atEnd).toBeGreaterThan(5);
    await page.locator('#scrub').fill(String(Math.floor(frames / 4)));
    expect(await points()).toBeLessThan(atEnd);
    await page.close();
  });

  it('replays a planted bug: the checkers fail as npm run sim says, and the ops they name are marked', async () => {
    const page = await open('?seed=21&replicas=3&faults=crash&bug=send-before-durable');
    expect(await page.locator('#planted').textContent()).toMatch(
      /^A bug planted on purpose \(send-before-durable\): /,
    );
    const cli = await simJson([
      '--seed',
      '21',
      '--replicas',
      '3',
      '--faults',
      'crash',
      '--plant',
      'send-before-durable',
    ]);
    expect(cli.ok).toBe(false);
    expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe('failed');
    expect(await page.locator('[data-role=committed-order] li').allTextContents()).toEqual(
      cli.committedOrder,
    );
    const named = new Set(
      (await page.locator('.violations').textContent())!.match(/\br\d+#\d+\b/g) ?? [],
    );
    expect(named.size).toBeGreaterThan(0);
    // Wherever a named op shows, it is marked.
    const marked = await page.locator('.flagged').allTextContents();
    expect(marked.length).toBeGreaterThan(0);
    for (const m of marked) expect(named.has(m.trim())).toBe(true);
    expect(await page.locator('.replay').textContent()).toContain(
      'npm run sim -- --seed 21 --replicas 3 --faults crash --plant send-before-durable --verbose',
    );
    await page.close();
  });

  it('says what is wrong with a URL that names a bad run, and runs nothing', async () => {
    const page = await open('?seed=abc');
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('invalid');
    expect(await page.locator('.problem').textContent()).toMatch(/seed must be a whole number/);
    const faults = await open('?seed=1&faults=meteor');
    expect(await faults.locator('.problem').textContent()).toMatch(
      /faults must be one of none, partition/,
    );
    const bug = await open('?seed=1&bug=typo');
    expect(await bug.locator('.problem').textContent()).toMatch(
      /bug must be one of send-before-durable, /,
    );
    await page.close();
    await faults.close();
    await bug.close();
  });

  it('runs what the form names', async () => {
    const page = await open('');
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('idle');
    await page.fill('input[name=seed]', '9');
    await page.selectOption('select[name=faults]', 'crash');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.body.dataset.state === 'done', undefined, {
      timeout: 60_000,
    });
    expect(new URL(page.url()).search).toBe('?seed=9&replicas=3&faults=crash');
    expect(await page.locator('[data-role=committed-order] li').count()).toBeGreaterThan(0);
    await page.close();
  });
});
