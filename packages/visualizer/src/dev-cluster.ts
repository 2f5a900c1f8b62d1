import { regionOf, type NetworkProfile } from '@creek/server/geo';
import { devSignInHandler, LocalCluster, profileDelays } from '@creek/server/node';
import type { LiveProfile } from './page/live-model.js';
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
  /** The replicas' links carry this profile's delays (LocalCluster's `profile`). */
  readonly profile?: NetworkProfile;
}

/**
 * How many replicas `--dev` runs when `--replicas` does not say: 3, or one per region of the
 * network profile where it has more (`global`: 5), so that every region holds one.
 */
export function defaultReplicas(profile?: NetworkProfile): number {
  return Math.max(3, profile?.regions.length ?? 0);
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
    ...(o.profile === undefined ? {} : { profile: o.profile }),
    // Loopback's timers elect again whenever a round trip between regions outlasts a heartbeat
    // gap plus jitter; a profile across regions takes the WAN timers (`creek start --network`).
    ...(o.profile !== undefined && o.profile.regions.length > 1 ? { network: 'wan' } : {}),
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
        restart: (i) => {
          cluster.startReplica(i);
          // It comes back without its links' delays; the cluster sets them once it answers.
          cluster
            .profileInForce()
            .catch((err: unknown) => console.error(`visualizer: ${(err as Error).message}`));
        },
        running: (i) => cluster.isRunning(i),
      },
      ...(cluster.identity === null ? {} : { signIn: devSignInHandler(cluster.identity) }),
      ...(o.profile === undefined ? {} : { profile: liveProfile(o.profile, cluster.members) }),
    },
  };
}

/** `profile` as the page shows it for replicas `ids`: their regions and their links' delays. */
function liveProfile(profile: NetworkProfile, ids: readonly number[]): LiveProfile {
  return {
    name: profile.name,
    description: profile.description,
    regions: ids.map((i) => profile.regions[regionOf(profile, i)]!),
    delays: profileDelays(profile, ids),
  };
}
