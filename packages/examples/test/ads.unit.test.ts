import { connectInMemory } from '@creek/client/memory';
import { describe, expect, it } from 'vitest';
import app from '../src/ads/app.js';
import { makeDataset, seededRng, Zipf } from '../src/ads/data.js';
import { fetchAds, fetchAdsStrongOnly, renderAds } from '../src/ads/fetch-ads.js';
import { parseAdsFlags } from '../src/ads/flags.js';
import { formatReport } from '../src/ads/report.js';
import { seed } from '../src/ads/seed.js';

/** The parts of the ad-serving example that need no real cluster. */

describe('ads data set', () => {
  it('is the same for the same seed, and profiles reference distinct existing ads', () => {
    const options = { users: 50, ads: 120, minRefs: 1, maxRefs: 40, seed: 3 };
    const a = makeDataset(options);
    expect(makeDataset(options)).toEqual(a);
    expect(makeDataset({ ...options, seed: 4 })).not.toEqual(a);
    const ids = new Set(a.ads.map((ad) => ad.id));
    for (const p of a.profiles) {
      expect(p.adIds.length).toBeGreaterThanOrEqual(1);
      expect(p.adIds.length).toBeLessThanOrEqual(40);
      expect(new Set(p.adIds).size).toBe(p.adIds.length);
      for (const id of p.adIds) expect(ids.has(id)).toBe(true);
    }
  });

  it('draws Zipfian keys in range, the first the most often', () => {
    const z = new Zipf(1_000, seededRng(1));
    const counts = new Array<number>(1_000).fill(0);
    for (let i = 0; i < 20_000; i++) counts[z.next()]!++;
    expect(counts.reduce((a, b) => a + b, 0)).toBe(20_000);
    // θ = 0.99 over 1,000 keys: about 13 % for key 0, and key 0 beats key 1 beats key 10.
    expect(counts[0]! / 20_000).toBeGreaterThan(0.1);
    expect(counts[0]!).toBeGreaterThan(counts[1]!);
    expect(counts[1]!).toBeGreaterThan(counts[10]!);
  });
});

describe('ads ops (in-memory cluster: the real replica code, no processes)', () => {
  it('keep ads immutable, profiles pointing at existing ads, and reads typed', async () => {
    const { client, cluster } = connectInMemory({ app });
    try {
      const data = makeDataset({ users: 5, ads: 10, minRefs: 1, maxRefs: 4, seed: 1 });
      await seed(client, data);
      // Seeding the same data again changes nothing.
      await seed(client, data);
      const ad0 = data.ads[0]!;
      await expect(
        client.invokeStrong('ads.create', { ads: [{ ...ad0, headline: 'changed' }] }),
      ).rejects.toThrow(/ad0 exists with other content; ads are immutable/);
      await expect(
        client.invokeStrong('profile.setAds', { user: 'u0', adIds: ['ad999'] }),
      ).rejects.toThrow(/ad ad999 does not exist/);
      await expect(
        client.invokeStrong('profile.setAds', { user: 'nobody', adIds: [] }),
      ).rejects.toThrow(/no profile for user nobody/);
      await expect(
        client.invokeStrong('profile.setAds', { user: 'u0', adIds: ['ad1', 'ad1'] }),
      ).rejects.toThrow(/same ad twice/);
      expect(await client.invokeWeak('ads.get', { ids: ['ad0', 'ad999'] })).toEqual([ad0, null]);
      const set = await client.invokeStrong('profile.setAds', { user: 'u0', adIds: ['ad2'] });
      expect(set).toEqual({ ...data.profiles[0], adIds: ['ad2'] });
      expect(await client.invokeStrong('profile.get', { user: 'u0' })).toEqual(set);
    } finally {
      cluster.close();
    }
  });

  it('fetchAds and the strong-only fetch give the rendered ads of the profile', async () => {
    const { client, cluster } = connectInMemory({ app });
    try {
      const data = makeDataset({ users: 4, ads: 12, minRefs: 2, maxRefs: 5, seed: 2 });
      await seed(client, data);
      for (const profile of data.profiles) {
        const ads = profile.adIds.map((id) => data.ads.find((a) => a.id === id)!);
        const expected = {
          user: profile.user,
          name: profile.name,
          adIds: profile.adIds,
          ads: renderAds(profile, ads),
        };
        expect(await fetchAds(client, profile.user).page).toEqual(expected);
        expect(await fetchAdsStrongOnly(client, profile.user)).toEqual(expected);
        expect(expected.ads[0]!.text).toContain(profile.name);
      }
      const none = { user: 'nobody', name: null, adIds: [], ads: [] };
      expect(await fetchAds(client, 'nobody').page).toEqual(none);
      expect(await fetchAdsStrongOnly(client, 'nobody')).toEqual(none);
    } finally {
      cluster.close();
    }
  });
});

describe('example:ads flags and report', () => {
  it('has defaults, and names bad flags', () => {
    const f = parseAdsFlags([]);
    expect(f).toMatchObject({ users: 1000, ads: 2300, refs: 40, 'ad-reads': 'weak', delay: 0 });
    expect(parseAdsFlags(['--delay', '20', '--ad-reads', 'strong'])).toMatchObject({
      delay: 20,
      'ad-reads': 'strong',
    });
    expect(() => parseAdsFlags(['--ad-reads', 'sometimes'])).toThrow(/--ad-reads/);
    expect(() => parseAdsFlags(['--ads', '10', '--refs', '20'])).toThrow(/--refs: cannot exceed/);
    expect(() => parseAdsFlags(['--bogus', '1'])).toThrow(/bogus/);
  });

  it('prints latencies of both variants, the change, and the mis-speculation rate', () => {
    const text = formatReport(
      {
        speculative: {
          latencies: [60, 60],
          firstAds: [2, 2],
          misspeculated: 1,
          runs: 3,
          aborts: 1,
        },
        strongOnly: { latencies: [100, 100] },
        inconsistent: 0,
        writes: { sent: 5, failed: 0 },
        durationMs: 1_000,
      },
      {
        replicas: 3,
        delayMs: 20,
        local: true,
        load: {
          fetches: 4,
          warmup: 0,
          concurrency: 1,
          writesPerSec: 5,
          adReads: 'weak',
          seed: 1,
        },
      },
    );
    expect(text).toContain('speculative   n=2 mean 60.0 ms');
    expect(text).toContain('strong-only   n=2 mean 100.0 ms');
    expect(text).toContain('mean −40.0 %');
    expect(text).toContain('1 of 2 speculative fetches (50.0 %)');
  });
});
