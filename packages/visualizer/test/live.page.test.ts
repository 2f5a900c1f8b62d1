import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveVisualizer, type ServedVisualizer } from '../src/serve.js';
import { launchChromium } from './support/chromium.js';

/**
 * Live mode in Chromium against a real 3-replica cluster: start a workload from the page, cut a
 * replica off through the page, see its tentative list grow while its committed list stands still
 * and strong ops wait there, heal, and see the replicas converge (equal digests). The page mirrors
 * what it draws in data attributes; the test waits on those, never on time alone.
 */
let cluster: LocalCluster;
let served: ServedVisualizer;
let browser: { context: BrowserContext; close(): Promise<void> };
beforeAll(async () => {
  const [c, b] = await Promise.allSettled([
    LocalCluster.start({
      replicas: 3,
      app: fileURLToPath(new URL('fixtures/poll-app.ts', import.meta.url)),
      logLevel: 'error',
    }),
    launchChromium(),
  ]);
  if (c.status === 'fulfilled') cluster = c.value;
  if (b.status === 'fulfilled') browser = b.value;
  if (c.status === 'rejected') throw c.reason;
  if (b.status === 'rejected') throw b.reason;
  served = await serveVisualizer({
    live: { urls: cluster.urls, token: cluster.token, adminToken: cluster.adminToken },
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
});

const card = (i: number): string => `.replica[data-replica="${i}"]`;

async function count(page: Page, i: number, list: 'committed' | 'tentative'): Promise<number> {
  return Number(await page.locator(`${card(i)} [data-list=${list}]`).getAttribute('data-count'));
}

async function waitFor(page: Page, what: string, fn: () => Promise<boolean>, ms = 30_000) {
  const start = Date.now();
  while (!(await fn())) {
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}`);
    await page.waitForTimeout(100);
  }
}

describe('the visualizer, live mode', () => {
  it('shows a cut-off replica answering tentatively only, then the cluster converging once healed', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    expect(new URL(page.url()).search).toBe(''); // the tokens are not in the URL bar
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('.replica')].every(
          (c) => (c as HTMLElement).dataset.connection === 'open',
        ) && document.querySelectorAll('.replica').length === 3,
    );
    await page.fill('input[name=rate]', '60');
    await page.fill('input[name=strong]', '30');
    await page.click('[data-act=workload]');
    await waitFor(page, 'every replica committing', async () => {
      for (const i of [0, 1, 2]) if ((await count(page, i, 'committed')) < 10) return false;
      return true;
    });

    // The charts draw what the last seconds held.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#charts .chart')].every(
        (c) => Number((c as HTMLElement).dataset.points) >= 3,
      ),
    );
    expect(await page.locator('#charts .chart canvas').count()).toBe(4);
    const last = JSON.parse((await page.locator('#charts').getAttribute('data-last')) ?? '{}') as {
      committed: (number | null)[];
      tentativeMs: number | null;
    };
    expect(last.committed.some((n) => (n ?? 0) > 0)).toBe(true);
    expect(typeof last.tentativeMs).toBe('number');

    // Per-op timelines: strong ops answered tentatively first, then stably. The table holds the
    // most recent ops, so wait until one of its strong ops has its stable answer (on a busy
    // machine every strong op of the window may still be waiting for it when the charts fill).
    // Read the rows in the same evaluation that finds them: the table re-renders once a second, so
    // a second query could see a newer window whose strong ops are all still waiting.
    const strongOps = (await (
      await page.waitForFunction(
        () => {
          const rows = [
            ...document.querySelectorAll('#timelines tr[data-level=strong][data-stable-ms]'),
          ];
          return rows.length === 0
            ? null
            : rows.map((r) => [
                Number(r.getAttribute('data-tentative-ms')),
                Number(r.getAttribute('data-stable-ms')),
              ]);
        },
        undefined,
        { timeout: 30_000 },
      )
    ).jsonValue()) as number[][];
    expect(strongOps.length).toBeGreaterThan(0);
    for (const [tentative, stable] of strongOps) expect(tentative).toBeLessThanOrEqual(stable!);

    // Messages on their way: gossip between every pair, the leader's Paxos proposals to the others.
    const kinds = new Set<string>();
    await waitFor(page, 'gossip and Paxos dots in the graph', async () => {
      for (const k of await page
        .locator('#graph circle.message')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')!)))
        kinds.add(k.split(' ')[0]!);
      return kinds.has('gossip') && kinds.has('paxos');
    });
    // Each card says what consensus looks like there: instances decided, the same leader.
    const decided = await page
      .locator('[data-role=consensus]')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-decided'))));
    expect(decided).toHaveLength(3);
    for (const d of decided) expect(d).toBeGreaterThan(0);
    // Each card says, per op, how many of its tentative answers held: the strong ops above were
    // answered tentatively and are final, so some card counts some.
    await waitFor(page, 'a card counting tentative answers that held', async () => {
      const counted = await page
        .locator('[data-role=accuracy]')
        .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-speculated'))));
      return counted.length === 3 && counted.some((n) => n > 0);
    });
    expect(await page.locator('[data-role=accuracy]').first().textContent()).toMatch(
      /^Tentative answers that held: /,
    );

    // Cut replica 2 off through the page.
    await page.click(`${card(2)} [data-act=cut]`);
    await page.waitForFunction(
      () => document.getElementById('network')?.dataset.partitioned === 'true',
    );
    // The graph draws replica 2's links blocked, the others' link up, and one leader.
    const links = () =>
      page
        .locator('#graph line')
        .evaluateAll((ls) =>
          ls.map(
            (l) =>
              `${l.getAttribute('data-from')}-${l.getAttribute('data-to')}:${l.getAttribute('data-state')}`,
          ),
        );
    await waitFor(
      page,
      'the graph to show the cut',
      async () => (await links()).join(',') === '0-1:up,0-2:blocked,1-2:blocked',
    );
    expect(await page.locator('#graph circle.leader').count()).toBe(1);
    // What was in flight when the cut came may still commit there: let its tentative list grow
    // first (ops issued after the cut), then watch: committed stands still, tentative grows.
    const atCut = await count(page, 2, 'tentative');
    await waitFor(page, 'its tentative list growing after the cut', async () => {
      return (await count(page, 2, 'tentative')) >= atCut + 10;
    });
    const committed = await count(page, 2, 'committed');
    const tentative = await count(page, 2, 'tentative');
    await waitFor(page, 'its tentative list growing', async () => {
      return (await count(page, 2, 'tentative')) >= tentative + 10;
    });
    expect(await count(page, 2, 'committed')).toBe(committed);
    const waiting = Number(
      await page.locator(`${card(2)} [data-role=waiting]`).getAttribute('data-waiting'),
    );
    expect(waiting).toBeGreaterThan(0);
    // The others go on committing.
    expect(await count(page, 0, 'committed')).toBeGreaterThan(committed);

    // Heal through the page, stop the load, and see the cluster converge.
    await page.click('[data-act=heal]');
    await page.waitForFunction(
      () => document.getElementById('network')?.dataset.partitioned === 'false',
    );
    await waitFor(page, 'the graph to show every link up', async () =>
      (await links()).every((l) => l.endsWith(':up')),
    );
    await page.click('[data-act=workload]');
    await page.waitForFunction(
      () => document.getElementById('convergence')?.dataset.converged === 'true',
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.locator('#convergence').textContent()).toMatch(
      /^Converged: every replica has the same state/,
    );
    const s = await cluster.converged();
    expect(new Set(s.map((x) => x.digest)).size).toBe(1);
    // Slowing a replica's links and healing them act through the server without an error: two
    // admin requests for the slow links (one per peer), three for the heal; wait for all five
    // answers, not for a time.
    const answers: number[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === '/api/admin') answers.push(r.status());
    });
    await page.click(`${card(1)} [data-act=slow]`);
    await page.click(`${card(1)} [data-act=heal]`);
    await waitFor(page, 'the five admin answers', async () => answers.length >= 5);
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    expect(await page.locator('#message').textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs an app op from the workload panel, each op applied once, and refuses arguments that are not JSON', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served.url);
    // The app's ops are listed once a replica has said which it offers; the built-ins are not.
    await page.waitForFunction(
      () => document.querySelector('select[name=op]')?.getAttribute('data-loaded') === 'true',
    );
    expect(await page.locator('select[name=op] option').allTextContents()).toEqual([
      'Built-in counter (kv.put, kv.increment)',
      'poll.count',
      'poll.vote',
    ]);
    await page.selectOption('select[name=op]', 'poll.vote');
    await page.fill('input[name=args]', '{"poll": "p$key", ');
    await page.click('[data-act=workload]');
    expect(await page.locator('#message').textContent()).toMatch(
      /^Workload not started: the arguments are not JSON/,
    );
    expect(await page.evaluate(() => document.body.dataset.workload)).not.toBe('running');

    await page.fill('input[name=args]', '{"poll": "p$key", "choice": "yes"}');
    await page.fill('input[name=rate]', '50');
    await page.fill('input[name=strong]', '50');
    await page.fill('input[name=keys]', '3');
    await page.click('[data-act=workload]');
    await waitFor(
      page,
      'poll.vote ops answered stably',
      async () =>
        (await page.locator('#timelines tr[data-level=strong][data-stable-ms]').count()) >= 3,
    );
    expect(await page.locator('#timelines tr', { hasText: 'poll.vote' }).count()).toBeGreaterThan(
      0,
    );
    await page.click('[data-act=workload]');
    // The cards are drawn every 100 ms: read them from a draw made after the workload stopped.
    const drawn = Number(await page.evaluate(() => document.body.dataset.draws));
    await page.waitForFunction((d) => Number(document.body.dataset.draws) > d + 1, drawn);
    // Every op the page invoked answered, none failed: then the votes counted equal them.
    const tally = () =>
      page.locator('[data-role=waiting]').evaluateAll((els) =>
        els.map((e) =>
          /(\d+) invoked, (\d+) answered/
            .exec(e.textContent ?? '')!
            .slice(1)
            .map(Number),
        ),
      );
    await waitFor(page, 'every op answered', async () =>
      (await tally()).every(([i, a]) => i === a),
    );
    const invoked = (await tally()).reduce((s, [i]) => s + i!, 0);
    // Once every replica holds every op committed, count the votes.
    await page.waitForFunction(
      () => document.getElementById('convergence')?.dataset.converged === 'true',
      undefined,
      { timeout: 60_000 },
    );
    expect(invoked).toBeGreaterThan(0);
    const client = connect({ urls: cluster.urls, token: cluster.token });
    let votes = 0;
    for (const k of [0, 1, 2])
      votes += (await client.invokeStrong(
        'poll.count' as never,
        { poll: `pk${k}`, choice: 'yes' } as never,
      )) as number;
    client.close();
    expect(votes).toBe(invoked);
    expect(errors).toEqual([]);
    await page.close();
  });
  it('acts on a card button pressed before a redraw and released after it', async () => {
    // The cards are redrawn every 100 ms; a click is a press and a release on one element, so a
    // button made anew by each draw would lose every click that spans one (more of them on a
    // loaded machine, where a test's click once did nothing and the replica never restarted).
    const page = await browser.context.newPage();
    await page.goto(served.url);
    // Settled first: every replica's state drawn, so nothing still grows the page while the button
    // is held (the press is at a point, and a button that moved from under it is not pressed).
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.replica[data-connection=open]').length === 3 &&
        document.getElementById('convergence')?.dataset.converged === 'true',
    );
    const button = `${card(0)} [data-act=pause]`;
    const centre = () =>
      page.evaluate((sel) => {
        const r = document.querySelector(sel)!.getBoundingClientRect();
        return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
      }, button);
    const drawsAfter = async (n: number) => {
      const drawn = Number(await page.evaluate(() => document.body.dataset.draws));
      await page.waitForFunction((d) => Number(document.body.dataset.draws) > d, drawn + n - 1);
    };
    let at = await centre();
    for (;;) {
      await drawsAfter(2);
      const now = await centre();
      if (now.x === at.x && now.y === at.y) break;
      at = now;
    }
    const under = () =>
      page.evaluate(
        ({ x, y, sel }) => document.elementFromPoint(x, y) === document.querySelector(sel),
        { ...at, sel: button },
      );
    const state = () => page.locator(card(0)).getAttribute('data-state');
    await page.mouse.move(at.x, at.y);
    await page.mouse.down();
    await drawsAfter(2);
    expect(await under()).toBe(true); // the same button, where it was, when released
    await page.mouse.up();
    await waitFor(page, 'replica 0 paused', async () => (await state()) === 'paused');
    await page.click(`${card(0)} [data-act=resume]`);
    await waitFor(page, 'replica 0 resumed', async () => (await state()) !== 'paused');
    await page.close();
  });
});
