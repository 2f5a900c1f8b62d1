/**
 * `npm run example:ads`: ad serving with speculation (Correctables §4.2) against the strong-only
 * baseline (§6.3.2). Starts a local cluster running the ads app (or uses `--urls`), seeds profiles
 * and ads, then either runs the load and prints latencies and mis-speculations, or (`--serve`)
 * serves the page. `--help` lists the flags.
 */
import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import app, { type AdsApp } from './app.js';
import { makeDataset } from './data.js';
import type { AdsClient } from './fetch-ads.js';
import { parseAdsFlags, USAGE, type AdsFlags } from './flags.js';
import { runLoad, type LoadOptions } from './load.js';
import { formatReport } from './report.js';
import { seed } from './seed.js';
import { serveAdsPage } from './serve.js';
import { visualizerFor } from '../shared/visualizer.js';
import { openCluster } from '../shared/cluster.js';
import { progress } from '../shared/stats.js';

const APP_MODULE = fileURLToPath(new URL('./app.ts', import.meta.url));
/** Users offered on the page: the most popular ones (the load draws users Zipf-distributed). */
const PAGE_USERS = 50;

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let flags: AdsFlags;
  try {
    flags = parseAdsFlags(argv);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
    return;
  }
  // Without users: the ads' ops say nothing of who calls them yet, and on a cluster that
  // verifies tokens every op needs a signed-in user (deny by default).
  const cluster = await openCluster(flags, APP_MODULE, { devIdentity: false });
  // One client per replica, each preferring its own (and failing over to the others), so readers
  // and the writer spread over the cluster: a write made at one replica reaches the others later.
  const clients: AdsClient[] = cluster.urls.map((_, i) =>
    connect<AdsApp>({ urls: rotate(cluster.urls, i), token: cluster.token, app }),
  );
  try {
    const data = makeDataset({
      users: flags.users,
      ads: flags.ads,
      minRefs: 1,
      maxRefs: flags.refs,
      seed: flags.seed,
    });
    const seeding = progress('seeding', data.ads.length + data.profiles.length);
    await seed(clients[0]!, data, (done) => seeding(done));
    // Start from one stable state everywhere, not from replicas still applying the seed.
    await cluster.local?.converged(60_000);

    if (flags.serve !== undefined) {
      const viz = await visualizerFor(cluster);
      const page = await serveAdsPage(
        {
          urls: cluster.urls,
          token: cluster.token,
          users: data.profiles.slice(0, PAGE_USERS).map((p) => p.user),
          ads: flags.ads,
          refs: flags.refs,
          adReads: flags['ad-reads'],
          delayMs: flags.delay,
        },
        { port: flags.serve, ...(viz === null ? {} : { visualizer: viz.url }) },
      );
      process.stdout.write(
        `ad-serving page: ${page.url}${viz === null ? '' : `  visualizer: ${viz.url}`}  (Ctrl-C stops)\n`,
      );
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
      viz?.close();
      await page.close();
      return;
    }

    const load: LoadOptions = {
      fetches: flags.fetches,
      warmup: flags.warmup,
      concurrency: flags.concurrency,
      writesPerSec: flags.writes,
      adReads: flags['ad-reads'],
      seed: flags.seed,
      onProgress: progress('fetches', flags.fetches),
    };
    const report = await runLoad(clients, clients, data, load);
    process.stdout.write(
      `${formatReport(report, {
        replicas: cluster.urls.length,
        delayMs: flags.delay,
        local: cluster.local !== null,
        load,
      })}\n`,
    );
    if (report.inconsistent > 0) process.exitCode = 1;
  } finally {
    for (const c of clients) c.close();
    await cluster.close();
  }
}

/** `urls` starting at index i. */
function rotate<T>(xs: readonly T[], i: number): T[] {
  return [...xs.slice(i), ...xs.slice(0, i)];
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`example:ads failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
