/**
 * `npm run example:bank`: the RedBlue bank (§4.2, §5.3) on a Creek cluster. Starts a local
 * cluster (or uses `--urls/--token`), opens and seeds accounts, runs a concurrent randomized
 * load with progress on stderr, and prints a summary: ops, refusals, revised answers, balances
 * (tentative vs stable vs the clients' own ledger), convergence and latency per op kind.
 * `--serve [port]` serves the bank's page instead and waits for Ctrl-C.
 *
 * On a cluster with dev users (the one it starts, or `--urls` with `--identity`) the clients sign
 * in: client k as LOAD_USERS[k mod 4], and account i belongs to OWNERS[i mod 3] (acct-0 is
 * alice's), opened for them by an admin. So some withdrawals are a non-owner's, and only the
 * admin's accruals go through: the summary counts both and checks that every answer kept the
 * rules. Without users, every client is anonymous and every account nobody's.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ClusterFlagsSchema, parseFlags } from '../shared/flags.js';
import { openCluster, type ExampleCluster } from '../shared/cluster.js';
import { progress } from '../shared/stats.js';
import { Bank } from './bank.js';
import {
  connectBank,
  connectBranches,
  stableBalancesAtEachReplica,
  tentativeAndStable,
} from './clients.js';
import { quiesce, runLoad, seedAccounts } from './load.js';
import { serveBankPage } from './serve.js';
import { visualizerFor } from '../shared/visualizer.js';
import { formatReport, type Report } from './report.js';

const APP = fileURLToPath(new URL('./app.ts', import.meta.url));

/**
 * Whom the load's clients sign in as, round robin. Four, so that with three replicas a user's
 * clients sit at different replicas (client k talks to replica k mod 3) and its withdrawals race.
 */
const LOAD_USERS = ['alice', 'bob', 'carol', 'admin'];
/** Who owns each account, round robin: the plain users. */
const OWNERS = ['alice', 'bob', 'carol'];
/** The dev identity's admin: it opens the accounts for their owners, and it alone accrues. */
const ADMIN = 'admin';

const BankFlagsSchema = ClusterFlagsSchema.extend({
  clients: z.coerce.number().int().min(1).max(256).default(6),
  /** Ops per client. */
  ops: z.coerce.number().int().min(1).max(1_000_000).default(200),
  accounts: z.coerce.number().int().min(1).max(1_000).default(3),
  /** Opening balance of each account, in dollars. */
  initial: z.coerce.number().int().min(0).max(1_000_000_000).default(100),
  /** Largest deposit or withdrawal, in dollars. */
  max: z.coerce.number().int().min(1).max(1_000_000_000).default(40),
  /** Interest rate per accrual, in basis points (100 = 1 %). */
  rate: z.coerce.number().int().min(0).max(10_000).default(100),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(1),
});

const USAGE = `usage: npm run example:bank -- [flags]
  --replicas N      local cluster size (default 3)
  --delay MS        one-way delay between replicas of the local cluster (default 0)
  --urls U1,U2 --token T   use a running cluster instead (its app must be the bank's app.ts)
  --identity DIR    with --urls: the data directory of its dev identity (creek dev's), to sign
                    the clients in as dev users; without it they are anonymous
  --clients N       concurrent clients, spread over the replicas (default 6)
  --ops N           ops per client (default 200)
  --accounts N      accounts they share (default 3)
  --initial D       opening balance per account, dollars (default 100)
  --max D           largest deposit or withdrawal, dollars (default 40)
  --rate BPS        interest per accrual, basis points (default 100 = 1 %)
  --seed N          seed of the op mix (default 1)
  --serve [PORT]    serve the bank's page instead of running the load; Ctrl-C stops`;

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2), BankFlagsSchema, USAGE);
  const cluster = await openCluster(flags, APP);
  try {
    if (flags.serve !== undefined) return await serve(cluster, flags.serve, flags.rate);
    return await loadAndReport(cluster, flags);
  } finally {
    await cluster.close();
  }
}

async function loadAndReport(
  cluster: ExampleCluster,
  flags: z.infer<typeof BankFlagsSchema>,
): Promise<number> {
  const accounts = Array.from({ length: flags.accounts }, (_, i) => `acct-${i}`);
  const { signIn } = cluster;
  const branches = connectBranches(cluster.urls, cluster.token, flags.clients, signIn, LOAD_USERS);
  // The bank's office: an admin, who opens the accounts for their owners.
  const officeClient = connectBank(cluster.urls, cluster.token, signIn, ADMIN);
  const office = new Bank(officeClient);
  try {
    const owners = await seedAccounts(branches.banks, accounts, flags.initial * 100, {
      opener: office,
      ...(signIn === null
        ? {}
        : { owners: new Map(accounts.map((a, i) => [a, OWNERS[i % OWNERS.length]!])) }),
    });
    const opening = await tentativeAndStable(branches.banks[0]!, accounts);
    const total = flags.clients * flags.ops;
    process.stderr.write(
      `load: ${flags.clients} clients × ${flags.ops} ops on ${accounts.length} accounts, seed ${flags.seed}\n`,
    );
    const load = await runLoad(branches.banks, {
      accounts,
      opsPerClient: flags.ops,
      seed: flags.seed,
      maxCents: flags.max * 100,
      rateBps: flags.rate,
      onProgress: progress('bank load', total),
      users: branches.users.map((id) => (id === null ? null : { id, admin: id === ADMIN })),
      owners,
    });
    // Balances right after the load, before anything has settled: tentative and stable views.
    const atEnd = await tentativeAndStable(branches.banks[0]!, accounts);
    await quiesce(branches.banks, accounts);
    const statuses = cluster.local === null ? null : await cluster.local.converged(30_000);
    const perReplica = await stableBalancesAtEachReplica(
      cluster.urls,
      cluster.token,
      accounts,
      signIn,
      ADMIN,
    );
    const report: Report = {
      replicas: cluster.urls.length,
      delayMs: flags.delay,
      clients: flags.clients,
      users: branches.users,
      accounts,
      owners,
      opening: new Map(opening.map((o) => [o.account, o.stable])),
      load,
      atEnd,
      perReplica,
      statuses,
    };
    const { text, ok } = formatReport(report);
    process.stdout.write(text);
    return ok ? 0 : 1;
  } finally {
    branches.close();
    officeClient.close();
  }
}

async function serve(cluster: ExampleCluster, port: number, rateBps: number): Promise<number> {
  const viz = await visualizerFor(cluster);
  const page = await serveBankPage({
    urls: cluster.urls,
    token: cluster.token,
    rateBps,
    port,
    ...(viz === null ? {} : { visualizer: viz.url }),
    ...(cluster.identity === null ? {} : { signIn: cluster.identity }),
  });
  process.stdout.write(
    `bank page: ${page.url}${viz === null ? '' : `  visualizer: ${viz.url}`}  (Ctrl-C stops the page and the cluster)\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stderr.write('stopping ...\n');
  viz?.close();
  await page.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bank: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
