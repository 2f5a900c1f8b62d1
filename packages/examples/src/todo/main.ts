/**
 * `npm run example:todo`: the todo page on a local cluster of real replicas that verify users'
 * tokens from a dev identity provider, so the page's "sign in as" picker signs in as anyone.
 * Or on a running `creek dev` cluster: `--urls … --token … --data DIR` (its data directory, whose
 * dev identity signs users in). Ctrl-C stops the page and the cluster it started.
 */
import { fileURLToPath } from 'node:url';
import { DevIdentity, devSignInHandler } from '@creek/server/node';
import { z } from 'zod';
import { openCluster } from '../shared/cluster.js';
import { ClusterFlagsSchema, parseFlags } from '../shared/flags.js';
import { visualizerFor } from '../shared/visualizer.js';
import { serveTodoPage } from './serve.js';

const APP = fileURLToPath(new URL('./app.js', import.meta.url));

const TodoFlagsSchema = ClusterFlagsSchema.extend({
  /** With --urls: the `creek dev` data directory whose dev identity signs users in. */
  data: z.string().min(1).optional(),
});

const USAGE = `usage: npm run example:todo -- [flags]
  --serve PORT      the page's port (default: any free port)
  --replicas N      local cluster size (default 3)
  --delay MS        one-way delay between replicas of the local cluster (default 0)
  --urls U1,U2 --token T --data DIR
                    use a running \`creek dev --app packages/examples/src/todo/app.js\` cluster
                    instead: its client URLs, client token and data directory (its dev identity
                    signs users in)`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const flags = parseFlags(argv, TodoFlagsSchema, USAGE);
  if ((flags.urls === undefined) !== (flags.data === undefined))
    throw new Error(`--urls and --data go together\n\n${USAGE}`);
  if (flags.data !== undefined && !DevIdentity.existsIn(flags.data))
    throw new Error(
      `--data ${flags.data}: no dev identity there; give the data directory of the \`creek dev\` that runs the cluster`,
    );
  const cluster = await openCluster(flags, APP, { devIdentity: true });
  try {
    const identity = cluster.identity ?? (await DevIdentity.open(flags.data!));
    const viz = await visualizerFor(cluster);
    const page = await serveTodoPage({
      urls: cluster.urls,
      token: cluster.token,
      signIn: devSignInHandler(identity),
      port: flags.serve ?? 0,
    });
    process.stdout.write(
      `todo page: ${page.url}  (sign in as alice, bob or admin; Ctrl-C stops the page${cluster.local === null ? '' : ' and the cluster'})\n` +
        (viz === null
          ? ''
          : `visualizer: ${viz.url}  (pause every replica there to see the page offline)\n`),
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    process.stderr.write('stopping ...\n');
    viz?.close();
    await page.close();
    return 0;
  } finally {
    await cluster.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`todo: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
