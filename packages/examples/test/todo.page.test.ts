import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { devSignInHandler, LocalCluster } from '@creek/server/node';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type app from '../src/todo/app.js';
import type { ServedPage } from '../src/shared/page-server.js';
import { serveTodoPage } from '../src/todo/serve.js';
import { launchChromium } from './support/chromium.js';

/**
 * The todo page (plain ES modules, no build step) in Chromium against a real 3-replica cluster
 * that verifies users' tokens from a dev identity provider: users signed in on two pages see only
 * their own lists, and a todo added while every replica is down shows at once as pending, then
 * as the one stable row once the cluster is back. The page mirrors each row's state in data
 * attributes (see page.js); the test waits on those, never on time.
 */
const APP = fileURLToPath(new URL('../src/todo/app.js', import.meta.url));

let cluster: LocalCluster;
let served: ServedPage;
let browser: { context: BrowserContext; close(): Promise<void> };
const errors: string[] = [];

beforeAll(async () => {
  // Started side by side; whichever starts is kept for afterAll even if the other fails.
  const [started, launched] = await Promise.allSettled([
    LocalCluster.start({ replicas: 3, app: APP, devIdentity: true, logLevel: 'error' }, 60_000),
    launchChromium(),
  ]);
  if (started.status === 'fulfilled') cluster = started.value;
  if (launched.status === 'fulfilled') browser = launched.value;
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;
  served = await serveTodoPage({
    urls: cluster.urls,
    token: cluster.token,
    signIn: devSignInHandler(cluster.identity!),
    offlineAfterMs: 1_000,
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await cluster?.stop(2_000);
});

const WAIT = { timeout: 30_000 };

/** A new page signed in as `user`, its list shown. */
async function signedIn(user: string): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(served.url);
  await page.waitForSelector('body[data-ready="yes"]', WAIT);
  await page.click(`#users button[data-user="${user}"]`);
  await page.waitForSelector(`body[data-user="${user}"]`, WAIT);
  await page.waitForSelector('#status[data-status="connected"]', WAIT);
  await page.waitForSelector('#list[data-loaded="yes"]', WAIT);
  return page;
}

async function add(page: Page, text: string): Promise<void> {
  await page.fill('#add input', text);
  await page.click('#add button[type=submit]');
}

/** The rows showing `text`: each one's state (pending, tentative, stable) and its tag. */
function rowsOf(page: Page, text: string): Promise<{ state: string; tag: string }[]> {
  return page.$$eval(
    '#todos li',
    (lis, text) =>
      lis
        .filter((li) => li.querySelector('.text')?.textContent === text)
        .map((li) => ({
          state: li.getAttribute('data-state') ?? '',
          tag: li.querySelector('.tag')?.textContent ?? '',
        })),
    text,
  );
}

/** Waits until the page shows `text` in exactly one row, in state `state`. */
async function oneRow(page: Page, text: string, state: string): Promise<void> {
  await page.waitForFunction(
    ([text, state]) => {
      const rows = [...document.querySelectorAll('#todos li')].filter(
        (li) => li.querySelector('.text')?.textContent === text,
      );
      return rows.length === 1 && rows[0]!.getAttribute('data-state') === state;
    },
    [text, state],
    WAIT,
  );
}

const shownTexts = (page: Page): Promise<string[]> =>
  page.$$eval('#todos li .text', (els) => els.map((e) => e.textContent ?? ''));

describe('the todo page in Chromium', () => {
  it("shows each signed-in user their own todos: bob's page shows none of alice's", async () => {
    const alice = await signedIn('alice');
    await add(alice, 'alice: milk');
    await add(alice, 'alice: bread');
    await oneRow(alice, 'alice: milk', 'stable');
    await oneRow(alice, 'alice: bread', 'stable');
    expect(await shownTexts(alice)).toEqual(['alice: milk', 'alice: bread']);

    const bob = await signedIn('bob');
    await bob.waitForSelector('#empty:not([hidden])', WAIT);
    expect(await shownTexts(bob)).toEqual([]);
    await add(bob, 'bob: post');
    await oneRow(bob, 'bob: post', 'stable');
    expect(await shownTexts(bob)).toEqual(['bob: post']);

    // Alice toggles one of hers; bob's list is still only his own.
    await alice.click('#todos li:first-child input[type=checkbox]');
    await alice.waitForSelector(
      '#todos li:first-child[data-done="yes"][data-state="stable"]',
      WAIT,
    );
    expect(await shownTexts(alice)).toEqual(['alice: milk', 'alice: bread']);
    expect(await shownTexts(bob)).toEqual(['bob: post']);
    // And removes the other.
    await alice.click('#todos li:nth-child(2) button[data-action=remove]');
    await alice.waitForFunction(
      () => document.querySelectorAll('#todos li').length === 1,
      undefined,
      WAIT,
    );
    expect(await shownTexts(alice)).toEqual(['alice: milk']);
    expect(errors).toEqual([]);
    await alice.close();
    await bob.close();
  });

  it('offline: a todo added while every replica is down shows at once as pending, then as one stable row', async () => {
    const page = await signedIn('alice');
    const before = await shownTexts(page);
    await Promise.all([0, 1, 2].map((i) => cluster.killed(i)));
    try {
      await add(page, 'written offline');
      // The row shows while no replica can answer, marked pending.
      await oneRow(page, 'written offline', 'pending');
      expect(await rowsOf(page, 'written offline')).toEqual([
        { state: 'pending', tag: expect.stringMatching(/saving|offline/) },
      ]);
      await page.waitForSelector('#status[data-status="offline"]', WAIT);
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll('#todos li[data-state="pending"] .tag')].some(
            (t) => t.textContent === 'offline: saved when back online',
          ),
        undefined,
        WAIT,
      );
      expect(await rowsOf(page, 'written offline')).toEqual([
        { state: 'pending', tag: 'offline: saved when back online' },
      ]);
    } finally {
      for (const i of [0, 1, 2]) cluster.startReplica(i);
    }
    await cluster.waitForLeader(60_000);
    await page.waitForSelector('#status[data-status="connected"]', WAIT);
    await oneRow(page, 'written offline', 'stable');
    expect(await shownTexts(page)).toEqual([...before, 'written offline']);

    // Applied once: the cluster holds exactly one such todo of alice's.
    const outside = connect<typeof app>({
      urls: cluster.urls,
      token: cluster.token,
      auth: async () => (await cluster.identity!.mint('alice')).token,
    });
    try {
      const todos = await outside.invokeStrong('todo.list', {});
      expect(todos.filter((t) => t.text === 'written offline')).toHaveLength(1);
    } finally {
      outside.close();
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});
