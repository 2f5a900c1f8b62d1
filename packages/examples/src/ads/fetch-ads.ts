/**
 * fetchAds, twice (Correctables §4.2, Listing 4, and its baseline in §6.3.2):
 *
 * - {@link fetchAds} reads the user's profile — the references to their ads — with `invoke`, and
 *   `speculate`s on it: the ads are fetched and rendered from the preliminary view while the final
 *   one is on its way. When the final view confirms the references, the speculative result is
 *   delivered at once; when it does not, the stale work is aborted and redone on the final view.
 * - {@link fetchAdsStrongOnly} waits for the stable profile (`invokeStrong`) and only then fetches
 *   the ads: one commit plus one ad read, in sequence.
 *
 * Both end with the ads of the stable profile, so they return the same thing for the same state.
 * Browser-safe: it imports only types from the app module.
 */
import type { Correctable, CreekClient } from '@creek/client';
import type { Ad, AdsApp, Profile } from './app.js';

export type AdsClient = CreekClient<AdsApp>;

/**
 * How ads are read. `weak` (default): ads are immutable, so whatever version a replica has is the
 * only one there is, and Creek answers a weak read-only op from the replica's own state without a
 * round trip to the others. `strong`: a linearizable read, which costs a commit like the profile
 * read does — what the paper's ad fetch cost (a quorum read, R = 2, §6.3.2).
 */
export type AdReads = 'weak' | 'strong';

/** One ad as shown to one user: personalized with their name. */
export interface RenderedAd {
  readonly id: string;
  readonly advertiser: string;
  readonly headline: string;
  readonly text: string;
  readonly url: string;
}

/** What fetchAds gives: the references it used and the ads rendered from them. */
export interface AdsPage {
  readonly user: string;
  /** null when the user has no profile (then no ads). */
  readonly name: string | null;
  readonly adIds: readonly string[];
  readonly ads: readonly RenderedAd[];
}

export interface FetchOptions {
  readonly adReads?: AdReads;
  /**
   * Called with the profile a discarded speculation ran on (§4.2's abortFunc), e.g. to take down
   * ads already shown from it.
   */
  readonly onAbort?: (stale: Profile | null) => void;
}

/** Live counts of one speculative fetch: the speculation ran `runs` times, `aborts` were discarded. */
export interface SpeculationCounts {
  runs: number;
  aborts: number;
}

export interface SpeculativeFetch {
  /**
   * Preliminary views: ads rendered from a preliminary profile. Final view: the ads of the stable
   * profile (the speculative ones if it confirmed them, else the ones redone on it).
   */
  readonly page: Correctable<AdsPage>;
  /** The profile read itself; its final view is the stable profile. */
  readonly profile: Correctable<Profile | null>;
  readonly counts: Readonly<SpeculationCounts>;
}

/** Speculative fetchAds (Listing 4): ads from the preliminary profile, confirmed or redone. */
export function fetchAds(
  creek: AdsClient,
  user: string,
  options: FetchOptions = {},
): SpeculativeFetch {
  const counts: SpeculationCounts = { runs: 0, aborts: 0 };
  let inFlight: AbortController | undefined;
  const profile = creek.invoke('profile.get', { user });
  const page = profile.speculate(
    (p) => {
      counts.runs++;
      inFlight = new AbortController();
      return loadAds(creek, user, p, options.adReads, inFlight.signal);
    },
    (stale) => {
      counts.aborts++;
      // speculate ignores a stale run's result anyway; cancelling stops waiting for it.
      inFlight?.abort();
      options.onAbort?.(stale);
    },
  );
  return { page, profile, counts };
}

/** The baseline of §6.3.2: the stable profile first, then its ads. */
export async function fetchAdsStrongOnly(
  creek: AdsClient,
  user: string,
  options: Pick<FetchOptions, 'adReads'> = {},
): Promise<AdsPage> {
  const profile = await creek.invokeStrong('profile.get', { user });
  return loadAds(creek, user, profile, options.adReads);
}

/** Fetches and renders the ads a profile references (Listing 4's getAds). */
export async function loadAds(
  creek: AdsClient,
  user: string,
  profile: Profile | null,
  adReads: AdReads = 'weak',
  signal?: AbortSignal,
): Promise<AdsPage> {
  if (profile === null) return { user, name: null, adIds: [], ads: [] };
  const ids = profile.adIds;
  const read = (which: readonly string[], level: AdReads): Promise<(Ad | null)[]> => {
    const args = { ids: [...which] };
    const c =
      level === 'strong'
        ? creek.invokeStrong('ads.get', args, { signal })
        : creek.invokeWeak('ads.get', args, { signal });
    return Promise.resolve(c);
  };
  const found = await read(ids, adReads);
  // A replica that showed us the profile has the ads it references (profile ops check that ads
  // exist, and ads are never removed). Another one might not yet — after a fail-over, say — so
  // what a weak read misses is read strongly: ordered after everything committed, it sees every
  // ad a stable profile references.
  const missing = ids.filter((_, i) => found[i] === null);
  if (missing.length > 0 && adReads === 'weak') {
    const again = await read(missing, 'strong');
    missing.forEach((id, j) => (found[ids.indexOf(id)] = again[j] ?? null));
  }
  const ads = found.map((ad, i) => {
    if (ad === null)
      throw new Error(`the profile of ${user} references ad ${ids[i]}, which does not exist`);
    return ad;
  });
  return { user, name: profile.name, adIds: ids, ads: renderAds(profile, ads) };
}

/** Personalizes ads for a profile: the post-processing step of Listing 4's getAds. */
export function renderAds(profile: Profile, ads: readonly Ad[]): RenderedAd[] {
  return ads.map((ad) => ({
    id: ad.id,
    advertiser: ad.advertiser,
    headline: ad.headline,
    text: ad.body.replaceAll('{name}', profile.name),
    url: ad.url,
  }));
}
