import { resolve } from 'node:path';
import { DEV_OPTIONS, DevSettingsSchema } from './config.js';
import { ensureWritableDir } from './data-dir.js';
import { loadApp } from '../exec/load-app.js';
import { isFree, LocalCluster } from './local-cluster.js';
import { commandUsage, readSettings } from './settings.js';

export const DEV_USAGE = commandUsage(
  'dev',
  `A local cluster of real replica processes on one machine, with generated secrets; prints the
client URLs and tokens once every replica takes ops. Ctrl-C stops every replica.`,
  DEV_OPTIONS,
);

/** `creek dev`: runs a LocalCluster until Ctrl-C, or until one of its replicas exits. */
export async function dev(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('dev', argv, env, DEV_OPTIONS, DevSettingsSchema);
  if (read.help) {
    process.stdout.write(DEV_USAGE);
    return;
  }
  const s = read.settings;
  // Everything that can be wrong before a replica starts is found here, in this process, and said
  // once: otherwise each replica would fail on it and report it in its own words.
  const app = s.app === undefined ? undefined : resolve(s.app);
  const ops = Object.keys((await loadApp(s.app)).definitions);
  const ports = Array.from({ length: s.replicas }, (_, i) => s.port + i);
  const free = await Promise.all(ports.map((p) => isFree(p, s.host)));
  const held = ports.filter((_, i) => !free[i]);
  if (held.length > 0)
    throw new Error(
      `--port ${s.port}: port ${held.join(', ')} on ${s.host} already in use (${s.replicas} replicas use ports ${ports[0]}-${ports.at(-1)}); stop what holds it or choose another --port`,
    );
  ensureWritableDir(s.data);

  let cluster: LocalCluster | null = null;
  let stopping = false;
  const stopAll = (status: number): void => {
    if (stopping || cluster === null) return;
    stopping = true;
    void cluster.stop(2_000).then(() => process.exit(status));
  };
  cluster = await LocalCluster.start({
    replicas: s.replicas,
    dataDir: s.data,
    basePort: s.port,
    host: s.host,
    ...(app === undefined ? {} : { app }),
    logLevel: s['log-level'],
    stdio: 'inherit',
    onExit: (i, code, signal) => {
      console.error(`creek dev: replica ${i} exited (${signal ?? code}); stopping the cluster`);
      stopAll(1);
    },
  });
  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));
  console.log(
    `creek dev: ${s.replicas} replicas of cluster ${cluster.clusterId}, data in ${cluster.dir}`,
  );
  console.log(`  app: ${app ?? 'none'} (ops: ${[...ops, 'kv.*', 'queue.*'].join(', ')})`);
  for (let i = 0; i < cluster.size; i++)
    console.log(`  replica ${i}: ${cluster.url(i)}   ready: ${cluster.httpUrl(i)}/ready`);
  console.log(`  client token: ${cluster.token}`);
  console.log(`  admin token:  ${cluster.adminToken}`);
  console.log(
    `  /status and /metrics take the admin token: curl -H 'authorization: Bearer ${cluster.adminToken}' ${cluster.httpUrl(0)}/status`,
  );
  console.log('Press Ctrl-C to stop.');
}
