/**
 * `npm run example:ticketing`: ticket selling with Correctables (§4.3, §6.3.2). Starts a local
 * cluster running the ticketing app (or uses the one given by `--urls`), then for each run stocks
 * a new event and lets the retailers sell it out, and prints the audit of the final state, the
 * revocations and the latencies; `--serve` serves the page with a "buy" button instead.
 *
 * Retailers are concurrent async loops in this process, each with its own client connected first
 * to its own replica (retailer i to replica i mod N): separate connections and separate replicas,
 * which is what makes their preliminary views disagree; separate OS processes would add nothing
 * the replicas can see.
 *
 * On a cluster with dev users (the one it starts, or `--urls` with `--identity`) the organizer
 * signs in as `admin` (stocking and the audit's list of sales are the organizer's) and retailer i
 * as `retailer-i`; without users, every client is anonymous.
 */
import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { openCluster, type ExampleCluster } from '../shared/cluster.js';
import { progress } from '../shared/stats.js';
import app from './app.js';
import { parseTicketingFlags, type TicketingFlags } from './flags.js';
import type { TicketClient } from './purchase.js';
import { formatOverall, formatRun } from './report.js';
import { runSale, type SaleResult } from './sale.js';
import { serveTicketingPage } from './serve.js';
import { visualizerFor } from '../shared/visualizer.js';

const APP_MODULE = fileURLToPath(new URL('./app.ts', import.meta.url));

/** `urls` starting at the i-th, so each client prefers its own replica and fails over to the rest. */
function rotate(urls: readonly string[], i: number): string[] {
  const k = i % urls.length;
  return [...urls.slice(k), ...urls.slice(0, k)];
}

/** A client preferring replica i, signed in as `user` where the cluster has dev users. */
function client(cluster: ExampleCluster, i: number, user: string): TicketClient {
  const { signIn } = cluster;
  const urls = rotate(cluster.urls, i);
  if (signIn === null) return connect({ urls, token: cluster.token, app });
  return connect({ urls, token: cluster.token, app, auth: () => signIn(user) });
}

/** The dev user who organizes: the dev identity's admin. */
const ORGANIZER = 'admin';

/** A name no earlier run used, so every run starts from an empty stock, even on a kept cluster. */
function eventName(prefix: string, run: number): string {
  return `${prefix}-${Date.now().toString(36)}-${run}`;
}

async function runLoad(flags: TicketingFlags, cluster: ExampleCluster): Promise<boolean> {
  const organizer = client(cluster, 0, ORGANIZER);
  const retailers = Array.from({ length: flags.retailers }, (_, i) =>
    client(cluster, i, `retailer-${i}`),
  );
  const delay = flags.urls === undefined ? `, ${flags.delay} ms one-way between replicas` : '';
  process.stdout.write(
    `ticketing: ${flags.tickets} tickets, ${flags.retailers} retailers, threshold ${flags.threshold},` +
      ` ${flags.runs} runs, ${cluster.urls.length} replicas${delay}\n`,
  );
  const results: SaleResult[] = [];
  try {
    for (let run = 1; run <= flags.runs; run++) {
      const event = eventName('sale', run);
      const report = progress(`run ${run}/${flags.runs}: tickets handed out`, flags.tickets);
      const result = await runSale({
        organizer,
        retailers,
        event,
        tickets: flags.tickets,
        threshold: flags.threshold,
        // Revoked sales hand out more than the stock on preliminary views: count up to the stock.
        onProgress: (n) => {
          if (n <= flags.tickets) report(n);
        },
      });
      results.push(result);
      const replicas = retailers.map((r) => r.replica() ?? '?').join(', ');
      process.stdout.write(
        `run ${run}/${flags.runs} (event ${event}; retailers on replicas ${replicas}):\n` +
          `${formatRun(result, flags.threshold)}\n`,
      );
    }
    process.stdout.write(`${formatOverall(results, flags.threshold)}\n`);
  } finally {
    organizer.close();
    for (const r of retailers) r.close();
  }
  return results.every((r) => r.audit.ok);
}

async function serve(flags: TicketingFlags, cluster: ExampleCluster): Promise<void> {
  const organizer = client(cluster, 0, ORGANIZER);
  const event = eventName('page', 1);
  try {
    await organizer.invokeStrong('tickets.stock', { event, count: flags.tickets });
  } finally {
    organizer.close();
  }
  const viz = await visualizerFor(cluster);
  const page = await serveTicketingPage({
    urls: cluster.urls,
    token: cluster.token,
    event,
    threshold: flags.threshold,
    ...(cluster.identity === null ? {} : { signIn: cluster.identity }),
    ...(flags.serve !== undefined && flags.serve > 0 ? { port: flags.serve } : {}),
    ...(viz === null ? {} : { visualizer: viz.url }),
  });
  process.stdout.write(
    `ticketing page: ${page.url} (event ${event}, ${flags.tickets} tickets, threshold` +
      ` ${flags.threshold})${viz === null ? '' : `; visualizer: ${viz.url}`}; Ctrl-C stops\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  viz?.close();
  await page.close();
}

async function main(): Promise<number> {
  let flags: TicketingFlags;
  try {
    flags = parseTicketingFlags(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const cluster = await openCluster(flags, APP_MODULE);
  try {
    if (flags.serve !== undefined) {
      await serve(flags, cluster);
      return 0;
    }
    return (await runLoad(flags, cluster)) ? 0 : 1;
  } finally {
    await cluster.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`ticketing: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
