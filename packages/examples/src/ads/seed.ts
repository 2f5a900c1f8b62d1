import { MAX_BATCH } from './app.js';
import type { Dataset } from './data.js';
import type { AdsClient } from './fetch-ads.js';

const BATCH = Math.min(200, MAX_BATCH);

/**
 * Writes a data set: ads first, then the profiles that reference them. Strong ops, awaited in
 * order, so every profile is committed after the ads it names (profile ops check that) and the load
 * starts from a stable state. Seeding the same data set again changes nothing; a different one
 * with the same ad ids fails, because ads are immutable.
 */
export async function seed(
  creek: AdsClient,
  data: Dataset,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  const total = data.ads.length + data.profiles.length;
  let done = 0;
  for (let i = 0; i < data.ads.length; i += BATCH) {
    const ads = data.ads.slice(i, i + BATCH);
    await creek.invokeStrong('ads.create', { ads });
    onProgress?.((done += ads.length), total);
  }
  for (let i = 0; i < data.profiles.length; i += BATCH) {
    const profiles = data.profiles.slice(i, i + BATCH);
    await creek.invokeStrong('profiles.put', { profiles });
    onProgress?.((done += profiles.length), total);
  }
}
