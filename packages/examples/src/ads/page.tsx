/**
 * The ad-serving page, a React app on @creek/react. Ads appear as soon as the user's profile is
 * read (its preliminary view), marked "checking"; when the confirmed profile arrives they are
 * marked "confirmed", or — when it differs — taken down ("withdrawn") and replaced by the ads of
 * the confirmed profile, marked "updated" (Correctables' speculation: `speculate(fn, abort)`,
 * see fetch-ads.ts). "Wait for confirmation" reads the confirmed profile first and shows nothing
 * before it.
 *
 * The speculative fetch's Correctable drives the ad list (`useCorrectable`); every transition is
 * also appended to a timeline (#log, `data-kind` on each entry), which is what the page test
 * reads: it does not depend on catching a short-lived state on screen. `#status` has
 * `data-state` (idle | fetching | preliminary | withdrawn | confirmed | corrected | strong |
 * error); each ad `data-id`.
 */
import { connect, type CreekClient } from '@creek/client';
import { createCreekHooks, useCorrectable } from '@creek/react';
import { useRef, useState } from 'react';
import { z } from 'zod';
import { ConnectionBadge } from '../shared/ui/connection-badge.js';
import { mountApp, readPageConfig } from '../shared/ui/mount.js';
import { errorText } from '../shared/ui/phase.js';
import type { AdsApp } from './app.js';
import { fetchAds, fetchAdsStrongOnly, type AdsPage, type SpeculativeFetch } from './fetch-ads.js';

const config = readPageConfig(
  z.object({
    urls: z.array(z.string()).min(1),
    token: z.string(),
    users: z.array(z.string()).min(1),
    ads: z.number().int().min(1),
    refs: z.number().int().min(1),
    adReads: z.enum(['weak', 'strong']),
    delayMs: z.number().min(0),
  }),
);
const { CreekProvider, useStatus } = createCreekHooks<AdsApp>();
// The page reads through the first URL it is given (its region's replica; the others are the
// failover order). It keeps to that order (`nearest: false`): the example's replicas share one
// machine, where a probe's round trips differ by load, not distance.
const creek: CreekClient<AdsApp> = connect<AdsApp>({
  urls: [...config.urls],
  token: config.token,
  nearest: false,
});
/** Another region's client, for re-targeting: made on first use. */
let elsewhere: CreekClient<AdsApp> | undefined;

type Kind = 'preliminary' | 'withdrawn' | 'confirmed' | 'corrected' | 'strong' | 'error' | 'write';

const MARKER: Record<string, string> = {
  preliminary: 'checking',
  withdrawn: 'withdrawn',
  confirmed: 'confirmed',
  corrected: 'updated',
  strong: 'confirmed',
};

interface LogEntry {
  readonly n: number;
  readonly kind: Kind;
  readonly ms: number;
  readonly text: string;
  readonly adIds: readonly string[];
}

/** What is on screen: a speculative fetch (its Correctable drives the list) or a strong-only one. */
type Shown =
  | { readonly mode: 'idle' }
  | { readonly mode: 'speculative'; readonly fetch: SpeculativeFetch; readonly user: string }
  | {
      readonly mode: 'strong';
      readonly user: string;
      readonly page?: AdsPage;
      readonly error?: Error;
    };

const count = (n: number): string => `${n} ${n === 1 ? 'ad' : 'ads'}`;

function App() {
  const [user, setUser] = useState(config.users[0]!);
  const [shown, setShown] = useState<Shown>({ mode: 'idle' });
  const [log, setLog] = useState<readonly LogEntry[]>([]);
  const [busy, setBusy] = useState(false);
  const [withdrawnAt, setWithdrawnAt] = useState<SpeculativeFetch | null>(null);
  const seq = useRef(0);

  const note = (t0: number, kind: Kind, text: string, adIds: readonly string[] = []): void => {
    const entry = { n: ++seq.current, kind, ms: performance.now() - t0, text, adIds };
    setLog((l) => [...l, entry]);
  };

  function speculative(u: string, t0 = performance.now()): void {
    setBusy(true);
    let fetch: SpeculativeFetch | null = null;
    fetch = fetchAds(creek, u, {
      adReads: config.adReads,
      onAbort: (stale) => {
        setWithdrawnAt(fetch);
        note(
          t0,
          'withdrawn',
          `the confirmed profile differs from the one read first`,
          stale?.adIds,
        );
      },
    });
    const f = fetch;
    f.page.subscribe({
      onUpdate: (page) => note(t0, 'preliminary', count(page.ads.length), page.adIds),
      onFinal: (page) => {
        const kind = f.counts.aborts > 0 ? 'corrected' : 'confirmed';
        note(t0, kind, count(page.ads.length), page.adIds);
        setBusy(false);
      },
      onError: (e) => {
        note(t0, 'error', errorText(e));
        setBusy(false);
      },
    });
    setShown({ mode: 'speculative', fetch: f, user: u });
  }

  function strongOnly(u: string): void {
    const t0 = performance.now();
    setBusy(true);
    setLog([]);
    setShown({ mode: 'strong', user: u });
    fetchAdsStrongOnly(creek, u, { adReads: config.adReads }).then(
      (page) => {
        setShown({ mode: 'strong', user: u, page });
        note(t0, 'strong', count(page.ads.length), page.adIds);
        setBusy(false);
      },
      (e: unknown) => {
        const error = e instanceof Error ? e : new Error(String(e));
        setShown({ mode: 'strong', user: u, error });
        note(t0, 'error', errorText(error));
        setBusy(false);
      },
    );
  }

  /**
   * Re-targets the user with a weak write through another region, and fetches at once: whether
   * this fetch sees the change depends on where the write lands in the order; the confirmed
   * profile tells.
   */
  function retarget(u: string): void {
    const t0 = performance.now();
    const urls = config.urls.length > 1 ? [...config.urls.slice(1), config.urls[0]!] : config.urls;
    // It stands for another region, so it keeps to it rather than moving to the nearest replica.
    elsewhere ??= connect<AdsApp>({ urls: [...urls], token: config.token, nearest: false });
    const picked = new Set<number>();
    const n = 1 + Math.floor(Math.random() * Math.min(config.refs, config.ads));
    while (picked.size < n) picked.add(Math.floor(Math.random() * config.ads));
    const adIds = [...picked].map((i) => `ad${i}`);
    elsewhere.invokeWeak('profile.setAds', { user: u, adIds }).setCallbacks({
      onFinal: () => note(t0, 'write', `${u} is now shown ${count(adIds.length)}`, adIds),
      onError: (e) => note(t0, 'error', `re-targeting failed: ${errorText(e)}`),
    });
    setLog([]);
    speculative(u, t0);
  }

  return (
    <CreekProvider client={creek}>
      <header>
        <h1>Ads, at once</h1>
        <Connection />
      </header>
      <p>
        Each user's profile says which ads they see. <b>Fetch ads</b> shows them as soon as the
        profile is read, marked <span className="tentative">checking</span>, and checks them against
        the confirmed profile a moment later: <span className="confirmed">confirmed</span> when it
        agrees, or <span className="revoked">withdrawn</span> and replaced by the right ads, marked{' '}
        <span className="corrected">updated</span>, when the profile had changed.{' '}
        <b>Wait for confirmation</b> shows nothing until the profile is confirmed.{' '}
        <b>Re-target, then fetch</b> changes the user's ads from another region and fetches at once.
      </p>
      <p className="hint">
        {config.urls.length} servers, {config.delayMs} ms apart.
      </p>
      <p>
        <label>
          User{' '}
          <select id="user" value={user} onChange={(e) => setUser(e.target.value)}>
            {config.users.map((u) => (
              <option key={u} value={u}>
                {u}
              </option>
            ))}
          </select>
        </label>{' '}
        <button
          id="fetch"
          disabled={busy}
          onClick={() => {
            setLog([]);
            speculative(user);
          }}
        >
          Fetch ads
        </button>{' '}
        <button id="fetch-strong" disabled={busy} onClick={() => strongOnly(user)}>
          Wait for confirmation
        </button>{' '}
        <button id="retarget" disabled={busy} onClick={() => retarget(user)}>
          Re-target, then fetch
        </button>
      </p>
      {shown.mode === 'speculative' ? (
        <SpeculativeAds
          fetch={shown.fetch}
          user={shown.user}
          withdrawn={withdrawnAt === shown.fetch}
        />
      ) : shown.mode === 'strong' ? (
        <StrongAds {...shown} />
      ) : (
        <Status state="idle" text="Pick a user and fetch their ads." />
      )}
      <h2>Timeline</h2>
      <ol id="log">
        {log.map((e) => (
          <li key={e.n} data-kind={e.kind} data-ads={e.adIds.join(' ')}>
            +{e.ms.toFixed(1)} ms {e.kind}: {e.text}
          </li>
        ))}
      </ol>
    </CreekProvider>
  );
}

function Connection() {
  return <ConnectionBadge status={useStatus()} />;
}

function SpeculativeAds(p: { fetch: SpeculativeFetch; user: string; withdrawn: boolean }) {
  const s = useCorrectable(p.fetch.page);
  if (s.error !== undefined) return <Status state="error" text={errorText(s.error)} />;
  if (s.value === undefined)
    return <Status state="fetching" text={`Fetching the ads of ${p.user}…`} />;
  const marker = !s.pending
    ? p.fetch.counts.aborts > 0
      ? 'corrected'
      : 'confirmed'
    : p.withdrawn
      ? 'withdrawn'
      : 'preliminary';
  const text: Record<string, string> = {
    preliminary: `${count(s.value.ads.length)} shown, checking against the confirmed profile…`,
    withdrawn: 'The profile had changed: taking these down…',
    confirmed: `${count(s.value.ads.length)}, confirmed`,
    corrected: `The profile had changed: ${count(s.value.ads.length)} for the confirmed one`,
  };
  return (
    <>
      <Status state={marker} text={text[marker]!} />
      <AdList page={s.value} marker={marker} />
    </>
  );
}

function StrongAds(p: { user: string; page?: AdsPage; error?: Error }) {
  if (p.error !== undefined) return <Status state="error" text={errorText(p.error)} />;
  if (p.page === undefined)
    return <Status state="fetching" text={`Waiting for ${p.user}'s confirmed profile…`} />;
  return (
    <>
      <Status state="strong" text={`${count(p.page.ads.length)}, from the confirmed profile`} />
      <AdList page={p.page} marker="strong" />
    </>
  );
}

function Status({ state, text }: { state: string; text: string }) {
  return (
    <p id="status" data-state={state}>
      {text}
    </p>
  );
}

function AdList({ page, marker }: { page: AdsPage; marker: string }) {
  if (page.name === null) return <p id="ads">{page.user} has no profile: no ads.</p>;
  return (
    <ol id="ads">
      {page.ads.map((ad) => (
        <li key={ad.id} className={`ad ${marker}`} data-id={ad.id}>
          <span className="marker">{MARKER[marker]}</span>
          <a href={ad.url}>{ad.headline}</a>
          <span className="by"> — {ad.advertiser}</span>
          <p>{ad.text}</p>
        </li>
      ))}
    </ol>
  );
}

mountApp(<App />);
