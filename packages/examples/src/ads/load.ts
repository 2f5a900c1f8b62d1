/**
 * The load of §6.3.2: closed-loop readers serving ads, the speculative fetchAds and the strong-only
 * baseline alternating in every reader so that both see the same cluster, the same background
 * writes and the same machine load; meanwhile a writer re-targets users (weak `profile.setAds` at
 * any replica), so that preliminary profiles are sometimes stale and speculation sometimes wrong.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomInt, randomRefs, seededRng, Zipf, type Dataset } from './data.js';
import { fetchAds, fetchAdsStrongOnly, type AdReads, type AdsClient } from './fetch-ads.js';

export interface LoadOptions {
  /** Fetches measured, both variants together (half each). */
  readonly fetches: number;
  /** Fetches done first and not measured: connections, JIT and caches warm up. */
  readonly warmup: number;
  /** Readers, each with one fetch outstanding. */
  readonly concurrency: number;
  /** Weak profile writes per second in the background; 0 for none. */
  readonly writesPerSec: number;
  readonly adReads: AdReads;
  readonly seed: number;
  /** Called after each measured fetch with how many are done. */
  readonly onProgress?: (done: number) => void;
}

export interface LoadReport {
  readonly speculative: {
    /** Time to the final result, ms. */
    readonly latencies: number[];
    /** Time until the first ads could be shown (the first preliminary result, else the final), ms. */
    readonly firstAds: number[];
    /** Fetches where the final profile differed from one speculated on. */
    readonly misspeculated: number;
    /** Speculation runs and aborts, summed over fetches. */
    readonly runs: number;
    readonly aborts: number;
  };
  readonly strongOnly: { readonly latencies: number[] };
  /** Speculative results not made from the stable profile: a bug if ever above 0. */
  readonly inconsistent: number;
  readonly writes: { readonly sent: number; readonly failed: number; readonly firstError?: string };
  readonly durationMs: number;
}

type Variant = 'speculative' | 'strongOnly';

export async function runLoad(
  readers: readonly AdsClient[],
  writers: readonly AdsClient[],
  data: Dataset,
  options: LoadOptions,
): Promise<LoadReport> {
  if (readers.length === 0) throw new Error('runLoad needs at least one reader client');
  const { users, ads, minRefs, maxRefs } = data.options;
  const pickUser = new Zipf(users, seededRng(options.seed));
  const spec = { latencies: [] as number[], firstAds: [] as number[], misspeculated: 0 };
  let runs = 0;
  let aborts = 0;
  const strongOnly = { latencies: [] as number[] };
  let inconsistent = 0;
  const total = options.warmup + options.fetches;
  let issued = 0;
  let measured = 0;

  const speculative = async (creek: AdsClient, user: string, record: boolean): Promise<void> => {
    const t0 = performance.now();
    let first: number | undefined;
    const f = fetchAds(creek, user, { adReads: options.adReads });
    f.page.setCallbacks({ onUpdate: () => (first ??= performance.now() - t0) });
    const page = await f.page;
    const ms = performance.now() - t0;
    // The page closed on the final profile view, so this is the stable profile.
    const stable = await f.profile;
    if (JSON.stringify(page.adIds) !== JSON.stringify(stable?.adIds ?? [])) inconsistent++;
    if (!record) return;
    spec.latencies.push(ms);
    spec.firstAds.push(first ?? ms);
    runs += f.counts.runs;
    aborts += f.counts.aborts;
    if (f.counts.aborts > 0) spec.misspeculated++;
  };
  const strong = async (creek: AdsClient, user: string, record: boolean): Promise<void> => {
    const t0 = performance.now();
    await fetchAdsStrongOnly(creek, user, { adReads: options.adReads });
    if (record) strongOnly.latencies.push(performance.now() - t0);
  };

  const reader = async (k: number): Promise<void> => {
    const creek = readers[k % readers.length]!;
    while (issued < total) {
      const ticket = issued++;
      const record = ticket >= options.warmup;
      // Alternate fetch by fetch, across readers: the two variants are interleaved in time (same
      // cluster, writes and machine load) and measured equally often.
      const variant: Variant = ticket % 2 === 0 ? 'speculative' : 'strongOnly';
      const user = data.profiles[pickUser.next()]!.user;
      await (variant === 'speculative' ? speculative : strong)(creek, user, record);
      if (record) options.onProgress?.(++measured);
    }
  };

  const writes = { sent: 0, failed: 0, firstError: undefined as string | undefined };
  let stopWriting = false;
  const writer = async (): Promise<void> => {
    if (options.writesPerSec <= 0 || writers.length === 0) return;
    const rng = seededRng(options.seed + 1);
    const pick = new Zipf(users, rng);
    const interval = 1_000 / options.writesPerSec;
    const outstanding = new Set<Promise<unknown>>();
    const start = performance.now();
    for (let n = 0; !stopWriting; n++) {
      // On a schedule, not "sleep after each": timer lateness does not lower the rate.
      const wait = start + n * interval - performance.now();
      if (wait > 0) await sleep(wait);
      if (stopWriting) break;
      const user = data.profiles[pick.next()]!.user;
      const adIds = randomRefs(rng, ads, randomInt(rng, minRefs, maxRefs));
      const p = Promise.resolve(
        writers[n % writers.length]!.invokeWeak('profile.setAds', { user, adIds }),
      ).then(
        () => undefined,
        (e: unknown) => {
          writes.failed++;
          writes.firstError ??= e instanceof Error ? e.message : String(e);
        },
      );
      writes.sent++;
      outstanding.add(p);
      void p.finally(() => outstanding.delete(p));
    }
    await Promise.all(outstanding);
  };

  const t0 = performance.now();
  const writing = writer();
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, k) => reader(k)));
  } finally {
    stopWriting = true;
    await writing;
  }
  return {
    speculative: { ...spec, runs, aborts },
    strongOnly,
    inconsistent,
    writes,
    durationMs: performance.now() - t0,
  };
}
