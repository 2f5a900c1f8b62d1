import { LocalCluster, type LocalClusterOptions } from '@creek/server/node';
import type { App } from '@creek/app';
import { afterEach } from 'vitest';
import { connect, type ConnectOptions, type CreekClient } from '../src/index.js';

/**
 * A cluster of real replica processes started by a test, and the clients it connects to it, all
 * closed after each test of the file that calls this.
 */
export function perTestCluster() {
  let cluster: LocalCluster | null = null;
  const clients: { close(): void }[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await cluster?.stop(1_000);
    cluster = null;
  });
  return {
    async start(options: LocalClusterOptions): Promise<LocalCluster> {
      cluster = await LocalCluster.start(options);
      return cluster;
    },
    connect<A = App>(options: ConnectOptions<A>): CreekClient<A> {
      const c = connect<A>(options);
      clients.push(c);
      return c;
    },
  };
}
