import { LocalCluster } from '@creek/server/node';
import type { ClusterFlags } from './flags.js';

/** The cluster an example talks to: one it started itself, or one named by `--urls`. */
export interface ExampleCluster {
  readonly urls: string[];
  readonly token: string;
  /** Set only when the example started the cluster (so it can inject faults). */
  readonly local: LocalCluster | null;
  close(): Promise<void>;
}

/**
 * Starts a local cluster running `appModule` (its default export is the app), or uses the one
 * given by flags. `--delay` is applied to a local cluster only: a running one is the operator's.
 */
export async function openCluster(flags: ClusterFlags, appModule: string): Promise<ExampleCluster> {
  if (flags.urls !== undefined) {
    if (flags.delay > 0)
      throw new Error('--delay works on a cluster the example starts itself; leave out --urls');
    return { urls: flags.urls, token: flags.token!, local: null, close: async () => {} };
  }
  process.stderr.write(`starting a local cluster of ${flags.replicas} replicas ...\n`);
  const local = await LocalCluster.start({
    replicas: flags.replicas,
    app: appModule,
    logLevel: 'error',
  });
  if (flags.delay > 0) await local.delayBetweenReplicas(flags.delay);
  process.stderr.write(
    `cluster ready: ${local.urls.join(', ')}${flags.delay > 0 ? `, ${flags.delay} ms one-way between replicas` : ''}\n`,
  );
  const stop = (): void => local.killAll();
  process.once('exit', stop);
  return {
    urls: local.urls,
    token: local.token,
    local,
    close: async () => {
      process.off('exit', stop);
      await local.stop(2_000);
    },
  };
}
