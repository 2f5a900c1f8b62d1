import { edgeLimitsFromEnv } from './edge-limits.js';
import { pino } from 'pino';
import { readPemFile, readSecretFile, START_OPTIONS, StartSettingsSchema } from './config.js';
import type { StartSettings } from './config.js';
import { ensureWritableDir } from './data-dir.js';
import { loadApp } from '../exec/load-app.js';
import { userTokenSettings } from './auth-settings.js';
import { UserTokenVerifier } from './user-tokens.js';
import {
  clientVersionsFromEnv,
  CLIENT_VERSIONS_ENV,
  peerVersionsFromEnv,
  PEER_VERSIONS_ENV,
} from './peer-versions-env.js';
import { ReplicaServer } from './replica-server.js';
import { timersOf } from './timer-settings.js';
import { TRANSFER_PACING } from '../geo/index.js';
import { commandUsage, readSettings } from './settings.js';

export const START_USAGE = commandUsage(
  'start',
  `One replica of a cluster whose replicas run on their own hosts. Required: --id, --listen,
--peers, --data, --secret-file. Every --checkpoint-every finalized ops it writes a checkpoint and
deletes the records before it. SIGTERM drains the ops in flight, then exits; a replica that finds
it lost durable state exits with status 3, and one removed from the cluster (creek member remove)
exits with status 0. A replica added with creek member add starts with --join: on an empty
--data it takes the cluster's state and members from the running replicas in --peers.`,
  START_OPTIONS,
);

/** `creek start`'s exit status when the replica halts because it lost durable state. */
const EXIT_HALTED = 3;

/** `creek start`: runs one replica until SIGTERM or SIGINT (or until it halts). */
export async function start(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('start', argv, env, START_OPTIONS, StartSettingsSchema);
  if (read.help) {
    process.stdout.write(START_USAGE);
    return;
  }
  const s = read.settings;
  const optionalSecret = (setting: 'token-file' | 'admin-token-file' | 'monitor-token-file') => {
    const file = s[setting];
    return file === undefined ? null : readSecretFile(file, setting);
  };
  const secret = readSecretFile(s['secret-file'], 'secret-file');
  const token = optionalSecret('token-file');
  const adminToken = optionalSecret('admin-token-file');
  const monitorToken = optionalSecret('monitor-token-file');
  const tls =
    s['tls-cert'] === undefined || s['tls-key'] === undefined
      ? null
      : {
          cert: readPemFile(s['tls-cert'], 'tls-cert'),
          key: readPemFile(s['tls-key'], 'tls-key'),
          ca: s['tls-ca'] === undefined ? null : readPemFile(s['tls-ca'], 'tls-ca'),
        };
  const peerVersions = peerVersionsFromEnv(env);
  const clientVersions = clientVersionsFromEnv(env);
  const tokenSettings = userTokenSettings(s);
  const userTokens = tokenSettings === null ? null : new UserTokenVerifier(tokenSettings);
  const app = await loadApp(s.app);
  const dataDir = ensureWritableDir(s.data);
  const log = pino({ name: `creek-${s.id}`, level: s['log-level'] });
  const paxosTimers = timersOf(s);
  if (peerVersions !== null)
    log.warn(
      { speaks: peerVersions },
      `${PEER_VERSIONS_ENV} is set: this replica claims the peer protocol versions it names (for testing upgrades only)`,
    );
  if (clientVersions !== null)
    log.warn(
      { speaks: clientVersions },
      `${CLIENT_VERSIONS_ENV} is set: this replica claims the client protocol versions it names (for testing upgrades only)`,
    );
  const server = new ReplicaServer(
    {
      id: s.id,
      host: s.listen.host,
      port: s.listen.port,
      peers: s.peers,
      dataDir,
      app,
      secret,
      tokens: token === null ? null : new Set([token]),
      userTokens,
      adminToken,
      monitorToken,
      tls,
      clusterId: s['cluster-id'] ?? null,
      fsync: s.fsync,
      join: s.join,
      edgeLimits: edgeLimitsFromEnv(process.env),
      ...(peerVersions === null ? {} : { peerVersions }),
      ...(clientVersions === null ? {} : { clientVersions }),
      ...(s['checkpoint-every'] === undefined ? {} : { checkpointEvery: s['checkpoint-every'] }),
      workers: s.workers,
      speculative: s.speculation === 'on',
      quorumReads: s.reads === 'quorum',
      checkInvariants: s['check-invariants'],
      paxosTimers,
      transferPacing: TRANSFER_PACING[s.network],
      ...(s['preferred-leader'] === undefined ? {} : { preferredLeader: s['preferred-leader'] }),
      appPath: s.app,
    },
    log,
  );
  let url: string;
  try {
    ({ url } = await server.start());
  } catch (err) {
    throw explainStartFailure(err, s, dataDir);
  }
  // The timers in force, so that an operator can see what --network and its overrides made, and
  // the execution settings (from flags, CREEK_* variables or a --config file).
  log.info(
    {
      url: `${url}/client`,
      network: s.network,
      ...paxosTimers,
      reads: s.reads,
      workers: s.workers,
      speculation: s.speculation,
    },
    'replica ready',
  );
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down: draining ops in flight');
    // The drain is bounded inside stop(); this bounds closing as well.
    setTimeout(() => process.exit(0), 10_000).unref();
    void server.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  void server.removed.then((reason) => {
    console.error(`creek: replica ${s.id}: ${reason}`);
    setTimeout(() => process.exit(0), 5_000).unref();
    void server.stop(0).then(() => process.exit(0));
  });
  void server.halted.then((reason) => {
    // Also on stderr: `creek dev` shows its replicas' stderr, not their logs.
    console.error(`creek: replica ${s.id} halted: ${reason}`);
    setTimeout(() => process.exit(EXIT_HALTED), 5_000).unref();
    void server.stop(0).then(() => process.exit(EXIT_HALTED));
  });
}

/**
 * What failed when the replica opened its storage or its port, said with the setting at fault: the
 * errors themselves (EADDRINUSE, SQLite's "unable to open database file") name neither.
 */
function explainStartFailure(err: unknown, s: StartSettings, dataDir: string): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const message = err instanceof Error ? err.message : String(err);
  const { host, port } = s.listen;
  const listen = `--listen ${host}:${port}`;
  if (code === 'EADDRINUSE')
    return new Error(
      `${listen}: port ${port} is already in use on ${host}; stop what holds it or choose another port`,
    );
  if (code === 'EACCES' && port < 1024)
    return new Error(
      `${listen}: not allowed to listen on port ${port} (ports below 1024 need root or CAP_NET_BIND_SERVICE); use a port from 1024 to 65535`,
    );
  if (code === 'EADDRNOTAVAIL')
    return new Error(
      `${listen}: ${host} is no address of this machine; use one of its addresses or 0.0.0.0`,
    );
  if (typeof code === 'string' && code.startsWith('SQLITE_'))
    return new Error(
      `--data ${s.data}: cannot use the database in ${dataDir} (${message}); check that this user can write the directory and its files`,
    );
  return err instanceof Error ? err : new Error(message);
}
