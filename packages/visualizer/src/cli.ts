import { readFileSync } from 'node:fs';
import { PROFILE_NAMES, profileNamed, type NetworkProfile } from '@creek/server/geo';
import { defaultReplicas, startDevCluster } from './dev-cluster.js';
import { serveVisualizer, type LiveCluster } from './serve.js';

/**
 * `npm run visualizer [-- --port 7300] [--host 127.0.0.1] [--urls URL,URL,... --admin-token-file F
 * [--token-file F]]`: serves the visualizer and prints its URL. A seed opens with
 * `?seed=42&replicas=5&faults=all` (what `npm run sim` prints for a failing seed); with `--urls`
 * (the replicas' client URLs, as `creek dev` prints them) the page shows that cluster live. With
 * `--dev [--app F] [--replicas N] [--data DIR] [--dev-identity on|off]` it runs a local cluster
 * itself (what `creek dev` runs) and the page may also kill and restart its replicas: what `npm
 * start` does. As in `creek dev`, with an app the replicas verify users' tokens from a dev identity
 * provider, and the page's workload signs in as a dev user through this server's /dev/sign-in.
 * `--profile lan|us-eu|global` puts a network profile's delays on the replicas' links (one replica
 * per region by default) and the page shows the regions and each link's round trip. Ctrl-C stops
 * it all.
 */
const USAGE = `usage: npm run visualizer [-- --port 7300] [--host 127.0.0.1] [--urls ws://127.0.0.1:7100/client,... --admin-token-file FILE [--token-file FILE] | --dev [--app FILE] [--replicas 3] [--data .creek/dev] [--dev-identity on|off] [--profile ${PROFILE_NAMES.join('|')}]]`;

function fail(message: string): never {
  console.error(`visualizer: ${message}\n${USAGE}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let port = 7300;
let host = '127.0.0.1';
let urls: string[] | null = null;
let adminTokenFile: string | null = null;
let tokenFile: string | null = null;
let devMode = false;
let app: string | undefined;
/** null: 3, or one per region of the profile if it has more. */
let replicas: number | null = null;
let profile: NetworkProfile | undefined;
let dataDir = '.creek/dev';
/** undefined: on with an app (as `creek dev`). */
let devIdentity: boolean | undefined;
for (let i = 0; i < argv.length; i++) {
  const flag = argv[i]!;
  if (flag === '--help' || flag === '-h') {
    console.log(USAGE);
    process.exit(0);
  }
  if (flag === '--dev') {
    devMode = true;
    continue;
  }
  const value = argv[++i];
  if (value === undefined || value === '') fail(`${flag} needs a value`);
  if (flag === '--port') {
    if (!/^\d+$/.test(value) || Number(value) > 65_535)
      fail(`--port must be a port number from 0 to 65535, not "${value}"`);
    port = Number(value);
  } else if (flag === '--host') host = value;
  else if (flag === '--urls') urls = value.split(',').map((u) => u.trim());
  else if (flag === '--admin-token-file') adminTokenFile = value;
  else if (flag === '--token-file') tokenFile = value;
  else if (flag === '--app') app = value;
  else if (flag === '--data') dataDir = value;
  else if (flag === '--dev-identity') {
    if (value !== 'on' && value !== 'off') fail(`--dev-identity must be on or off, not "${value}"`);
    devIdentity = value === 'on';
  } else if (flag === '--profile') {
    if (!(PROFILE_NAMES as readonly string[]).includes(value))
      fail(`--profile must be one of ${PROFILE_NAMES.join(', ')}, not "${value}"`);
    profile = profileNamed(value);
  } else if (flag === '--replicas') {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 15)
      fail(`--replicas must be a whole number from 1 to 15, not "${value}"`);
    replicas = Number(value);
  } else fail(`unknown option ${flag}`);
}

/** A token file's first line, or exit 2 naming the file and the flag. */
function token(file: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    fail(`${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const t = text.split('\n')[0]!.trim();
  if (t === '') fail(`${flag} ${file} is empty`);
  return t;
}

let live: LiveCluster | undefined;
let stopCluster: () => Promise<void> = async () => undefined;
if (devMode && (urls !== null || adminTokenFile !== null || tokenFile !== null))
  fail('--dev runs its own cluster: leave out --urls and the token files');
if (
  !devMode &&
  (app !== undefined ||
    devIdentity !== undefined ||
    profile !== undefined ||
    ['--replicas', '--data'].some((f) => argv.includes(f)))
)
  fail('--app, --replicas, --data, --dev-identity and --profile go with --dev');
if (devMode) {
  try {
    const size = replicas ?? defaultReplicas(profile);
    const dev = await startDevCluster({
      replicas: size,
      dataDir,
      basePort: 7100,
      ...(app === undefined ? {} : { app }),
      devIdentity: devIdentity ?? app !== undefined,
      ...(profile === undefined ? {} : { profile }),
    });
    live = dev.live;
    stopCluster = () => dev.cluster.stop(2_000);
    console.log(
      `visualizer: ${size} replicas of cluster ${dev.cluster.clusterId}, data in ${dev.cluster.dir}`,
    );
    if (profile !== undefined)
      console.log(
        `  network profile ${profile.name}: ${profile.description}; each link delayed by half its round trip, without jitter`,
      );
    for (let i = 0; i < dev.cluster.size; i++)
      console.log(
        `  replica ${i}: ${dev.cluster.url(i)}   ready: ${dev.cluster.httpUrl(i)}/ready${dev.live.profile === undefined ? '' : `   region: ${dev.live.profile.regions[i]}`}`,
      );
    console.log(`  client token: ${dev.cluster.token}`);
    console.log(
      dev.cluster.identity === null
        ? '  users: none: every op is open to any client with the client token'
        : `  users: signed in by the dev identity provider (the page's workload signs in as one); a user's token: npm run creek -- dev token --user alice${dataDir === '.creek/dev' ? '' : ` --data ${dataDir}`}`,
    );
    console.log(`  admin token:  ${dev.cluster.adminToken}   (the operator's, not an end user's)`);
  } catch (err) {
    console.error(`visualizer: the cluster did not start: ${(err as Error).message}`);
    process.exit(1);
  }
} else if (urls !== null) {
  for (const u of urls)
    if (!/^wss?:\/\/[^/\s]+\/client$/.test(u))
      fail(`--urls takes the replicas' client URLs, like ws://127.0.0.1:7100/client, not "${u}"`);
  if (adminTokenFile === null)
    fail('--urls needs --admin-token-file: the page watches each replica with the admin token');
  live = {
    urls,
    adminToken: token(adminTokenFile, '--admin-token-file'),
    token: tokenFile === null ? null : token(tokenFile, '--token-file'),
  };
} else if (adminTokenFile !== null || tokenFile !== null)
  fail('--admin-token-file and --token-file go with --urls (the cluster to watch)');

try {
  const served = await serveVisualizer({ port, host, ...(live === undefined ? {} : { live }) });
  console.log(
    `visualizer: ${served.url} (${live === undefined ? '' : `live: ${live.urls.length} replicas; `}a seed: ${served.url}?seed=42&replicas=3&faults=all)`,
  );
  const close = (): void =>
    void Promise.all([served.close(), stopCluster()]).then(() => process.exit(0));
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  await stopCluster();
  fail(
    e.code === 'EADDRINUSE'
      ? `port ${port} on ${host} is taken: pass --port with another (0 picks a free one)`
      : e.message,
  );
}
