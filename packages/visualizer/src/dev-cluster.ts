import { devSignInHandler, LocalCluster } from '@creek/server/node';
import type { LiveCluster } from './serve.js';

export interface DevClusterOptions {
  readonly replicas: number;
  /** The app module the replicas serve (besides the built-in kv.* and queue.* ops). */
  readonly app?: string;
  /** Where the replicas keep their data and the generated tokens. */
  readonly dataDir: string;
  /** Replica i listens on basePort + i (creek dev's default: 7100). */
  readonly basePort?: number;
  /**
   * The replicas verify users' tokens from a dev identity provider kept in `dataDir`, and the
   * visualizer serves its sign-in (what `creek dev` does with an app); default false.
   */
  readonly devIdentity?: boolean;
}

/**
 * `npm run visualizer -- --dev`: a local cluster of real replica processes (the LocalCluster that
 * `creek dev` runs), run by this process so that the page can kill and restart them. A replica
 * that exits is reported, not fatal: the page shows it down, and Restart brings it back on its
 * data directory.
 */
export async function startDevCluster(
  o: DevClusterOptions,
): Promise<{ cluster: LocalCluster; live: LiveCluster }> {
  const cluster = await LocalCluster.start({
    replicas: o.replicas,
    dataDir: o.dataDir,
    ...(o.basePort === undefined ? {} : { basePort: o.basePort }),
    ...(o.app === undefined ? {} : { app: o.app }),
    devIdentity: o.devIdentity === true,
    logLevel: 'warn',
    stdio: 'inherit',
    onExit: (i, code, signal) =>
      console.error(
        `visualizer: replica ${i} exited (${signal ?? `status ${code}`}); Restart on its card brings it back`,
      ),
  });
  return {
    cluster,
    live: {
      urls: cluster.urls,
      token: cluster.token,
      adminToken: cluster.adminToken,
      supervisor: {
        kill: (i) => cluster.kill(i),
        restart: (i) => cluster.startReplica(i),
        running: (i) => cluster.isRunning(i),
      },
      ...(cluster.identity === null ? {} : { signIn: devSignInHandler(cluster.identity) }),
    },
  };
}
