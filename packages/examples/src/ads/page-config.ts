import type { AdReads } from './fetch-ads.js';

/** What the page server hands the ad-serving page (`window.CREEK_PAGE`). */
export interface AdsPageConfig {
  /** Client URLs; the page reads through urls[0] and re-targets users through urls[1] (if any). */
  readonly urls: readonly string[];
  readonly token: string;
  /** Users to pick from. */
  readonly users: readonly string[];
  /** Ads in the data set (ad0 … ad{n-1}) and the most each profile references: for re-targeting. */
  readonly ads: number;
  readonly refs: number;
  readonly adReads: AdReads;
  /** The injected one-way delay between replicas, for the page's explanation only. */
  readonly delayMs: number;
}
