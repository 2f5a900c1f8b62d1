import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DevIdentity, LocalCluster } from '@creek/server/node';
import type { ClusterFlags } from './flags.js';

/**
 * How an example's clients sign in, on a cluster that verifies users' tokens: a fresh token for a
 * dev user, asked at every connection and whenever a replica wants a new one. Null: clients are
 * anonymous (a cluster that verifies no tokens).
 */
export type SignIn = ((user: string) => Promise<string>) | null;

/** The cluster an example talks to: one it started itself, or one named by `--urls`. */
export interface ExampleCluster {
  readonly urls: string[];
  readonly token: string;
  /** Set only when the example started the cluster (so it can inject faults). */
  readonly local: LocalCluster | null;
  /**
   * The dev identity provider whose tokens the replicas verify: the one of the example's own
   * cluster, or the one `--identity` names for a cluster given by `--urls`; null: none, users are
   * anonymous.
   */
  readonly identity: DevIdentity | null;
  /** Tokens of `identity` for its dev users; null when there is no identity. */
  readonly signIn: SignIn;
  close(): Promise<void>;
}

/**
 * Starts a local cluster running `appModule` (its default export is the app), or uses the one
 * given by flags. `--delay` is applied to a local cluster only: a running one is the operator's.
 *
 * The local cluster runs with its dev identity provider (`devIdentity`), so its replicas verify
 * users' tokens and the app's access rules apply; `devIdentity: false` starts one without users,
 * for an example whose ops say nothing of who calls them.
 */
export async function openCluster(
  flags: ClusterFlags,
  appModule: string,
  options: { devIdentity?: boolean } = {},
): Promise<ExampleCluster> {
  if (flags.urls !== undefined) {
    if (flags.delay > 0)
      throw new Error('--delay works on a cluster the example starts itself; leave out --urls');
    const identity = flags.identity === undefined ? null : await openIdentity(flags.identity);
    return {
      urls: flags.urls,
      token: flags.token!,
      local: null,
      identity,
      signIn: signInWith(identity),
      close: async () => {},
    };
  }
  const devIdentity = options.devIdentity ?? true;
  process.stderr.write(
    `starting a local cluster of ${flags.replicas} replicas${devIdentity ? ' with dev users' : ''} ...\n`,
  );
  const local = await LocalCluster.start({
    replicas: flags.replicas,
    app: appModule,
    logLevel: 'error',
    devIdentity,
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
    identity: local.identity,
    signIn: signInWith(local.identity),
    close: async () => {
      process.off('exit', stop);
      await local.stop(2_000);
    },
  };
}

/**
 * The dev identity kept in `dir`. Only one that is there: `DevIdentity.open` would make a new key
 * in a mistyped directory, whose tokens the cluster refuses, which says less than this does.
 */
async function openIdentity(dir: string): Promise<DevIdentity> {
  if (!existsSync(join(dir, 'dev-identity')))
    throw new Error(
      `--identity ${dir}: no dev identity there (a dev-identity folder, which creek dev makes in its data directory)`,
    );
  return DevIdentity.open(dir);
}

/** Dev users' tokens from `identity`, each minted afresh (valid an hour). */
export function signInWith(identity: DevIdentity | null): SignIn {
  if (identity === null) return null;
  return async (user) => (await identity.mint(user)).token;
}
