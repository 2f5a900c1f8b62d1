import { resolve } from 'node:path';
import type { LocalClusterOptions } from './local-cluster.js';
import { DEV_OPTIONS, DevSettingsSchema, type DevSettings } from './config.js';
import { ensureWritableDir } from './data-dir.js';
import { loadApp } from '../exec/load-app.js';
import { isFree, LocalCluster } from './local-cluster.js';
import { commandUsage, readSettings } from './settings.js';
import { devToken } from './dev-token-command.js';

export const DEV_USAGE = commandUsage(
  'dev',
  `A local cluster of real replica processes on one machine, with generated secrets; prints the
client URLs and tokens once every replica takes ops. A replica that dies (kill -9 one to try
failover) is restarted on its data directory a second later while the others keep serving; one
that dies 3 times within a minute is left down. Ctrl-C stops every replica.

With an --app (and no --auth-* setting), the replicas verify users' tokens from a local dev
identity provider whose key is kept in the data directory: creek dev token --user alice prints
one (creek dev token --help), and ops are closed to anonymous callers unless the app opens them,
as in production. --dev-identity off turns users off.`,
  DEV_OPTIONS,
);

/** A dead replica restarts after this pause (long enough to read that it died). */
const RESTART_AFTER_MS = 1_000;
/** A replica that exits this often within `CRASH_LOOP_MS` is left down: it would only die again. */
const CRASH_LOOP_EXITS = 3;
const CRASH_LOOP_MS = 60_000;

/**
 * `creek dev`: runs a LocalCluster until Ctrl-C. A replica that dies is reported and restarted,
 * so failover and rejoin can be tried on a laptop (the thing to try first); the others serve on.
 * One that keeps dying (a halted replica, an app that throws at load) is left down, and the
 * cluster stops only when no replica is left.
 */
export async function dev(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  if (argv[0] === 'token') return devToken(argv.slice(1), env);
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
  const auth = devAuth(s);
  // On by default only with an app: without one, the built-in ops are all there is, and they stay
  // closed to end users once tokens are verified, so every call would be refused.
  const devIdentity =
    s['dev-identity'] === 'on' ||
    (s['dev-identity'] === undefined && auth === undefined && app !== undefined);

  let cluster: LocalCluster | null = null;
  let stopping = false;
  const stopAll = (status: number): void => {
    if (stopping || cluster === null) return;
    stopping = true;
    void cluster.stop(2_000).then(() => process.exit(status));
  };
  const exits = new Map<number, number[]>();
  const restarting = new Set<number>();
  const replicaExited = (i: number, how: string): void => {
    const c = cluster;
    if (c === null || stopping) return;
    const now = Date.now();
    const recent = [...(exits.get(i) ?? []), now].filter((t) => now - t < CRASH_LOOP_MS);
    exits.set(i, recent);
    if (recent.length >= CRASH_LOOP_EXITS) {
      console.error(
        `creek dev: replica ${i} exited (${how}), ${recent.length} times within a minute; leaving it down (its log above says why)`,
      );
      const left = Array.from({ length: c.size }, (_, k) => k).filter(
        (k) => c.isRunning(k) || restarting.has(k),
      );
      if (left.length === 0) {
        console.error('creek dev: no replica is left; stopping');
        stopAll(1);
      } else console.error(`creek dev: replicas ${left.join(', ')} keep serving`);
      return;
    }
    console.error(
      `creek dev: replica ${i} exited (${how}); the others keep serving, and it restarts on its data directory in ${RESTART_AFTER_MS / 1000} s (Ctrl-C stops all)`,
    );
    restarting.add(i);
    setTimeout(() => {
      restarting.delete(i);
      if (stopping || c.isRunning(i)) return;
      c.startReplica(i);
      console.error(`creek dev: replica ${i} restarted`);
    }, RESTART_AFTER_MS);
  };
  cluster = await LocalCluster.start({
    replicas: s.replicas,
    dataDir: s.data,
    basePort: s.port,
    host: s.host,
    ...(app === undefined ? {} : { app }),
    logLevel: s['log-level'],
    ...(auth === undefined ? {} : { auth }),
    devIdentity,
    stdio: 'inherit',
    onExit: (i, code, signal) => replicaExited(i, signal ?? `status ${code}`),
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
  console.log(`  users: ${usersLine(s, auth, cluster, app !== undefined)}`);
  console.log(`  admin token:  ${cluster.adminToken}   (the operator's, not an end user's)`);
  console.log(
    `  /status and /metrics take the admin token: curl -H 'authorization: Bearer ${cluster.adminToken}' ${cluster.httpUrl(0)}/status`,
  );
  console.log('Press Ctrl-C to stop.');
}

/** How end users sign in to this `creek dev`, for its banner. */
function usersLine(
  s: DevSettings,
  auth: LocalClusterOptions['auth'],
  cluster: LocalCluster,
  hasApp: boolean,
): string {
  if (cluster.identity !== null) {
    const data = s.data === '.creek/dev' ? '' : ` --data ${s.data}`;
    return [
      `signed in by the dev identity provider; ops are closed to anonymous clients unless public`,
      `    a user's token (any name; admin gets role admin): creek dev token --user alice${data}`,
      ...(hasApp
        ? []
        : ['    no --app: the built-in kv.* and queue.* ops stay closed to end users']),
    ].join('\n');
  }
  if (auth !== undefined)
    return `tokens verified with ${auth.jwks ?? `the HS256 secret in ${auth.secretFile}`}; ops are closed to anonymous clients unless public`;
  return hasApp
    ? 'none (--dev-identity off): every op is open to any client with the client token'
    : 'none: every op is open to any client with the client token (with --app, creek dev signs dev users in)';
}

/** The auth settings `creek dev` passes to each replica, as flags of `creek start`. */
function devAuth(s: DevSettings): LocalClusterOptions['auth'] {
  const keys = s['auth-jwks'];
  // Replicas run in other directories: files go as absolute paths, URLs as they are.
  const jwks =
    keys === undefined
      ? undefined
      : keys.kind === 'jwks-url'
        ? keys.url.href
        : keys.kind === 'jwks-file'
          ? resolve(keys.file)
          : undefined;
  const secretFile = s['auth-secret-file'];
  if (jwks === undefined && secretFile === undefined) return undefined;
  return {
    ...(jwks === undefined ? {} : { jwks }),
    ...(secretFile === undefined ? {} : { secretFile: resolve(secretFile) }),
    ...(s['auth-issuer'] === undefined ? {} : { issuer: s['auth-issuer'] }),
    ...(s['auth-audience'] === undefined ? {} : { audience: s['auth-audience'] }),
    ...(s['auth-clock-skew'] === undefined ? {} : { clockSkewS: s['auth-clock-skew'] }),
  };
}
