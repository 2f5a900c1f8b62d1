/**
 * The ad-serving page (runs in the browser). Ads appear as soon as the preliminary profile is in,
 * marked "preliminary"; when the final profile arrives they are marked "confirmed", or — when the
 * final profile differs — taken down ("withdrawn") and replaced by the ads of the final profile,
 * marked "corrected" (Correctables §4.2). A strong-only fetch shows nothing until the end.
 *
 * Every transition is also appended to a timeline (#log), which is what the page test reads: it
 * does not depend on catching a short-lived state on screen.
 */
import { connect } from '@creek/client';
import type { AdsApp } from './app.js';
import type { AdsPageConfig } from './page-config.js';
import { fetchAds, fetchAdsStrongOnly, type AdsClient, type AdsPage } from './fetch-ads.js';

// What shared/page-server.ts's pageConfig() reads. Not imported from there: that module also
// imports node:http and esbuild, which cannot be bundled for the browser.
const config = (globalThis as unknown as { CREEK_PAGE: AdsPageConfig }).CREEK_PAGE;
const creek: AdsClient = connect<AdsApp>({ urls: [...config.urls], token: config.token });
let elsewhere: AdsClient | undefined;

const $ = <E extends HTMLElement>(id: string): E => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as E;
};
const userSelect = $<HTMLSelectElement>('user');
const status = $('status');
const adList = $('ads');
const log = $('log');
const buttons = ['fetch', 'fetch-strong', 'retarget'].map((id) => $<HTMLButtonElement>(id));

for (const u of config.users) userSelect.append(new Option(u, u));
$('setup').textContent =
  `${config.urls.length} replicas, ${config.delayMs} ms one-way between them; ` +
  `this page reads through ${config.urls[0]}; ads are read ${config.adReads}ly.`;

type Kind = 'preliminary' | 'withdrawn' | 'confirmed' | 'corrected' | 'strong' | 'error' | 'write';

function note(kind: Kind, t0: number, text: string): void {
  const li = document.createElement('li');
  li.dataset.kind = kind;
  li.textContent = `+${(performance.now() - t0).toFixed(1)} ms  ${kind}: ${text}`;
  log.append(li);
}

function setStatus(state: string, text: string): void {
  status.dataset.state = state;
  status.textContent = text;
}

/** Replaces the shown ads; `marker` is both the class and the label of each. */
function showAds(page: AdsPage, marker: Kind): void {
  adList.replaceChildren(
    ...page.ads.map((ad) => {
      const li = document.createElement('li');
      li.className = `ad ${marker}`;
      li.dataset.id = ad.id;
      const label = document.createElement('span');
      label.className = 'marker';
      label.textContent = marker;
      const head = document.createElement('a');
      head.href = ad.url;
      head.textContent = ad.headline;
      const by = document.createElement('span');
      by.className = 'by';
      by.textContent = ` — ${ad.advertiser}`;
      const text = document.createElement('p');
      text.textContent = ad.text;
      li.append(label, head, by, text);
      return li;
    }),
  );
  if (page.name === null) adList.textContent = `${page.user} has no profile: no ads.`;
}

/** Marks the shown ads as taken down (the abort function's visible side effect). */
function withdrawShown(): void {
  for (const li of adList.querySelectorAll<HTMLElement>('li.ad')) {
    li.className = 'ad withdrawn';
    li.querySelector('.marker')!.textContent = 'withdrawn';
  }
}

function busy(on: boolean): void {
  for (const b of buttons) b.disabled = on;
}

/** The speculative fetchAds, drawn as it goes. */
async function speculative(user: string, t0 = performance.now()): Promise<void> {
  setStatus('fetching', `fetching the ads of ${user} …`);
  adList.replaceChildren();
  const f = fetchAds(creek, user, {
    adReads: config.adReads,
    onAbort: (stale) => {
      withdrawShown();
      note('withdrawn', t0, `the final profile differs from [${stale?.adIds.join(', ') ?? ''}]`);
    },
  });
  f.page.setCallbacks({
    onUpdate: (page) => {
      showAds(page, 'preliminary');
      setStatus('preliminary', `preliminary: ${page.ads.length} ads — waiting for the final view`);
      note('preliminary', t0, `${page.ads.length} ads [${page.adIds.join(', ')}]`);
    },
  });
  try {
    const page = await f.page;
    const kind = f.counts.aborts > 0 ? 'corrected' : 'confirmed';
    showAds(page, kind);
    const ms = (performance.now() - t0).toFixed(1);
    setStatus(
      kind,
      kind === 'confirmed'
        ? `confirmed by the final view after ${ms} ms: ${page.ads.length} ads`
        : `corrected after ${ms} ms: the final profile differed, ${page.ads.length} ads fetched for it`,
    );
    note(kind, t0, `${page.ads.length} ads [${page.adIds.join(', ')}]`);
  } catch (e) {
    failed(t0, e);
  }
}

async function strongOnly(user: string): Promise<void> {
  const t0 = performance.now();
  setStatus('fetching', `fetching the ads of ${user} (strong only) …`);
  adList.replaceChildren();
  try {
    const page = await fetchAdsStrongOnly(creek, user, { adReads: config.adReads });
    showAds(page, 'strong');
    const ms = (performance.now() - t0).toFixed(1);
    setStatus('strong', `strong only: ${page.ads.length} ads after ${ms} ms`);
    note('strong', t0, `${page.ads.length} ads [${page.adIds.join(', ')}]`);
  } catch (e) {
    failed(t0, e);
  }
}

/**
 * Re-targets the user with a weak write at another replica, and fetches at once. Whether this
 * fetch sees the change depends on where the write lands in the order: the final view tells.
 */
async function retarget(user: string): Promise<void> {
  const t0 = performance.now();
  const urls = config.urls.length > 1 ? [...config.urls.slice(1), config.urls[0]!] : config.urls;
  elsewhere ??= connect<AdsApp>({ urls: [...urls], token: config.token });
  const picked = new Set<number>();
  const n = 1 + Math.floor(Math.random() * Math.min(config.refs, config.ads));
  while (picked.size < n) picked.add(Math.floor(Math.random() * config.ads));
  const adIds = [...picked].map((i) => `ad${i}`);
  elsewhere.invokeWeak('profile.setAds', { user, adIds }).setCallbacks({
    onFinal: () =>
      note('write', t0, `${user} now references [${adIds.join(', ')}] (at ${urls[0]})`),
    onError: (e) => note('error', t0, `re-targeting failed: ${e.message}`),
  });
  await speculative(user, t0);
}

function failed(t0: number, e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  setStatus('error', `failed: ${message}`);
  note('error', t0, message);
}

function wire(id: string, action: (user: string) => Promise<void>): void {
  $(id).addEventListener('click', () => {
    busy(true);
    log.replaceChildren();
    void action(userSelect.value).finally(() => busy(false));
  });
}
wire('fetch', (u) => speculative(u));
wire('fetch-strong', strongOnly);
wire('retarget', retarget);
setStatus('idle', 'pick a user and fetch their ads');
