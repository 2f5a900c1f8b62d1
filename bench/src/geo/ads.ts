/**
 * The ad-serving example's end-to-end latency across regions (Correctables §6.3.2): a client
 * next to each replica fetches a user's ads, speculating on the preliminary profile (`fetchAds`,
 * done at the page's final view: the speculative result confirmed, or redone) and waiting for the
 * stable profile first (`fetchAdsStrongOnly`). Ads are read both ways the example offers: `strong`
 * (a linearizable read, what the paper's quorum read cost) and `weak` (immutable ads from the
 * local replica). No writer re-targets users meanwhile, so every speculation is confirmed: this
 * is the latency speculation saves when it is right, not its accuracy under contention.
 */
import { connect } from '@creek/client';
import type { AdsApp } from '../../../packages/examples/src/ads/app.js';
import { makeDataset, userId } from '../../../packages/examples/src/ads/data.js';
import {
  fetchAds,
  fetchAdsStrongOnly,
  type AdReads,
  type AdsClient,
} from '../../../packages/examples/src/ads/fetch-ads.js';
import { seed } from '../../../packages/examples/src/ads/seed.js';
import { sequential, type Samples } from './measure.js';

const USERS = 200;

/** Per ad-read mode, per region: the speculative and the strong-only fetch's samples. */
export type AdsSamples = Record<AdReads, { speculative: Samples; strongOnly: Samples }[]>;

export async function measureAds(
  urls: readonly string[],
  token: string,
  fetches: number,
  log: (line: string) => void,
): Promise<AdsSamples> {
  const clients: AdsClient[] = urls.map((url) => connect<AdsApp>({ urls: [url], token }));
  try {
    await seed(
      clients[0]!,
      makeDataset({ users: USERS, ads: 600, minRefs: 1, maxRefs: 40, seed: 45 }),
    );
    const out: AdsSamples = { strong: [], weak: [] };
    for (const adReads of ['strong', 'weak'] as const) {
      log(`ads: ${fetches} fetches per variant and region, ads read ${adReads}ly`);
      out[adReads] = await Promise.all(
        clients.map(async (c, r) => {
          const user = (i: number): string => userId((i * 7 + r * 31) % USERS);
          const speculative = await sequential(
            (i) => fetchAds(c, user(i), { adReads }).page,
            fetches,
          );
          const strongOnly = await sequential(
            (i) => fetchAdsStrongOnly(c, user(i), { adReads }),
            fetches,
          );
          return { speculative, strongOnly };
        }),
      );
    }
    return out;
  } finally {
    for (const c of clients) c.close();
  }
}
