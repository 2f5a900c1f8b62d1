import { resolve } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { formatIssues, parseFlags, readSecretFile, readTls, StartFlagsSchema } from './config.js';
import { edgeLimitsFromEnv } from './edge-limits.js';
import { loadApp } from './load-app.js';
import { LocalCluster } from './local-cluster.js';
import { ReplicaServer } from './replica-server.js';

const USAGE = `creek — run a Creek cluster

  creek dev   [--replicas 3] [--app module] [--data .creek/dev] [--port 7100] [--host 127.0.0.1]
      A local cluster of real replica processes on one machine; prints the client URLs and token.
      Ctrl-C stops every replica.

  creek start --id N --listen host:port --peers 0=ws://h0:p0,1=ws://h1:p1,... --data DIR
              --secret-file F [--app module] [--token-file F] [--admin-token-file F] [--fsync]
              [--checkpoint-every 10000]
      One replica of a cluster whose replicas run on their own hosts. Every --checkpoint-every
      finalized ops it writes a checkpoint and deletes the records before it (0: never).
`;

async function start(argv: string[]): Promise<void> {
  const parsed = StartFlagsSchema.safeParse(parseFlags(argv, ['fsync']));
  if (!parsed.success) throw new Error(`${formatIssues(parsed.error)}\n\n${USAGE}`);
  const f = parsed.data;
  if (!f.peers.some((p) => p.id === f.id))
    throw new Error(`--peers must include this replica (id ${f.id})`);
  const [host, port] = f.listen.split(':') as [string, string];
  const log = pino({ name: `creek-${f.id}`, level: process.env.CREEK_LOG_LEVEL ?? 'info' });
  const tokens =
    f['token-file'] === undefined ? null : new Set([readSecretFile(f['token-file'], 'token')]);
  const server = new ReplicaServer(
    {
      id: f.id,
      host,
      port: Number(port),
      peers: f.peers,
      dataDir: resolve(f.data),
      app: await loadApp(f.app),
      secret: readSecretFile(f['secret-file'], 'cluster secret'),
      tokens,
      adminToken:
        f['admin-token-file'] === undefined
          ? null
          : readSecretFile(f['admin-token-file'], 'admin token'),
      fsync: f.fsync,
      monitorToken:
        f['monitor-token-file'] === undefined
          ? null
          : readSecretFile(f['monitor-token-file'], 'monitor token'),
      clusterId: f['cluster-id'] ?? null,
      tls: readTls(f),
      edgeLimits: edgeLimitsFromEnv(process.env),
      ...(f['checkpoint-every'] === undefined ? {} : { checkpointEvery: f['checkpoint-every'] }),
    },
    log,
  );
  const { url } = await server.start();
  log.info({ url: `${url}/client` }, 'replica ready');
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down: draining ops in flight');
    // The drain is bounded inside stop(); this bounds closing as well.
    setTimeout(() => process.exit(0), 10_000).unref();
    void server.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  void server.halted.then((reason) => {
    // Also on stderr: `creek dev` shows its replicas' stderr, not their logs.
    console.error(`creek: replica ${f.id} halted: ${reason}`);
    setTimeout(() => process.exit(EXIT_HALTED), 5_000).unref();
    void server.stop(0).then(() => process.exit(EXIT_HALTED));
  });
}

/** `creek start`'s exit status when the replica halts because it lost durable state. */
const EXIT_HALTED = 3;

const DevFlagsSchema = z.object({
  replicas: z.coerce
    .number({ message: '--replicas must be a number' })
    .int()
    .min(1, '--replicas must be at least 1')
    .max(15, '--replicas must be at most 15')
    .default(3),
  app: z.string().optional(),
  data: z.string().default('.creek/dev'),
  port: z.coerce
    .number({ message: '--port must be a number' })
    .int()
    .min(1024)
    .max(65000)
    .default(7100),
  host: z.string().default('127.0.0.1'),
});

async function dev(argv: string[]): Promise<void> {
  const parsed = DevFlagsSchema.safeParse(parseFlags(argv, []));
  if (!parsed.success) throw new Error(`${formatIssues(parsed.error)}\n\n${USAGE}`);
  const f = parsed.data;
  let stopping = false;
  const cluster = await LocalCluster.start({
    replicas: f.replicas,
    dataDir: f.data,
    basePort: f.port,
    host: f.host,
    ...(f.app === undefined ? {} : { app: f.app }),
    logLevel: process.env.CREEK_LOG_LEVEL ?? 'warn',
    stdio: 'inherit',
    onExit: (i, code, signal) => {
      console.error(`creek dev: replica ${i} exited (${signal ?? code}); stopping the cluster`);
      stopAll();
    },
  });
  const stopAll = (): void => {
    if (stopping) return;
    stopping = true;
    void cluster.stop(2_000).then(() => process.exit(0));
  };
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  console.log(`creek dev: ${f.replicas} replicas, data in ${cluster.dir}`);
  for (let i = 0; i < cluster.size; i++)
    console.log(`  replica ${i}: ${cluster.url(i)}   status: ${cluster.httpUrl(i)}/status`);
  console.log(`  client token: ${cluster.token}`);
  console.log(`  admin token:  ${cluster.adminToken}`);
  console.log('Press Ctrl-C to stop.');
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'start') return start(rest);
  if (command === 'dev') return dev(rest);
  console.log(USAGE);
  process.exit(command === undefined || command === '--help' || command === 'help' ? 0 : 2);
}

main().catch((err: unknown) => {
  console.error(`creek: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
});
