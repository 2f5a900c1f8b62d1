import { fileURLToPath } from 'node:url';
import { connect } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import app, { type AdsApp } from '../src/ads/app.js';
import { makeDataset, type Dataset } from '../src/ads/data.js';
import type { AdsClient } from '../src/ads/fetch-ads.js';
import { seed } from '../src/ads/seed.js';

const APP_MODULE = fileURLToPath(new URL('../src/ads/app.ts', import.meta.url));

/** A real 3-replica cluster running the ads app, seeded with a small data set. */
export interface AdsCluster {
  readonly cluster: LocalCluster;
  readonly data: Dataset;
  /** A replica that is not the leader: cutting it off leaves a majority that can commit. */
  readonly follower: number;
  /** Another replica, where "someone else" writes. */
  readonly other: number;
  /** A client of `replica` only (no fail-over: the tests decide where ops go). */
  client(replica: number): AdsClient;
  /** Cuts `replica` off from the other replicas (clients still reach it), or reconnects it. */
  isolate(replica: number): Promise<void>;
  heal(replica: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startAdsCluster(): Promise<AdsCluster> {
  const cluster = await LocalCluster.start({ replicas: 3, app: APP_MODULE, logLevel: 'error' });
  const clients: AdsClient[] = [];
  const client = (replica: number): AdsClient => {
    const c = connect<AdsApp>({ urls: [cluster.url(replica)], token: cluster.token, app });
    clients.push(c);
    return c;
  };
  try {
    const data = makeDataset({ users: 30, ads: 80, minRefs: 1, maxRefs: 8, seed: 7 });
    await seed(client(0), data);
    const [status] = await cluster.converged();
    const leader = status!.leader!;
    const follower = (leader + 1) % cluster.size;
    const other = (leader + 2) % cluster.size;
    const peers = (r: number): number[] =>
      Array.from({ length: cluster.size }, (_, i) => i).filter((i) => i !== r);
    return {
      cluster,
      data,
      follower,
      other,
      client,
      isolate: async (r) => {
        for (const peer of peers(r)) await cluster.admin(r, 'block', { peer });
      },
      heal: async (r) => {
        await cluster.admin(r, 'unblock');
      },
      stop: async () => {
        for (const c of clients) c.close();
        await cluster.stop(1_000);
      },
    };
  } catch (e) {
    for (const c of clients) c.close();
    await cluster.stop(1_000);
    throw e;
  }
}

/** Ad ids of `data` that `current` does not reference: a re-targeting that surely differs. */
export function otherRefs(data: Dataset, current: readonly string[], n = 3): string[] {
  return data.ads
    .map((a) => a.id)
    .filter((id) => !current.includes(id))
    .slice(0, n);
}
