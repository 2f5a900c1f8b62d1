/**
 * What `creek backup` costs on a real local cluster: its time and file size for a store of
 * `--keys` keys, and what it does to the backed-up replica's clients meanwhile.
 *
 *   npm run bench:backup [-- --keys 100000 --value-bytes 32 --in-flight 256]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops), writes `--keys` keys with weak
 * kv.put through one SDK client per replica, and waits until the replicas agree. Then a probe
 * client on replica 1 invokes weak kv.put one at a time, first for 5 s with no backup (the
 * baseline), then while `creek backup --url <replica 1>` runs (the built binary, as an operator
 * runs it: the stream, the file, and the check of the file read back). Reported: the backup's
 * wall time and file size, and the probe's p50 and p99 without and during the backup. One run:
 * the figures of one backup, not a distribution over many.
 *
 * Progress on stderr, the figures on stdout. Nothing is asserted: this measures.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connect, type CreekClient } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { clientsOnEachReplica } from './open-loop-load.js';
import { recordResults } from './results.js';
import { quantile } from './stats.js';
import { parseStoreFlags, writeKeys } from './write-keys.js';

const out = recordResults('backup', 'text');
const USAGE = 'npm run bench:backup [-- --keys 100000 --value-bytes 32 --in-flight 256]';
const TIMEOUT_MS = 600_000;
const BASELINE_MS = 5_000;
const BIN = fileURLToPath(new URL('../../packages/server/bin/creek.js', import.meta.url));

const log = (line: string): void => void process.stderr.write(`bench:backup: ${line}\n`);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (x: number): string => `${x.toFixed(2)} ms`;

/** Sequential weak puts on `client` until `until` resolves: each one's latency in ms. */
async function probe(client: CreekClient, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  for (let i = 0; !done; i++) {
    const t0 = performance.now();
    await client.invokeWeak('kv.put', { key: `probe/${i % 100}`, value: i });
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

/** `creek backup` of replica `i` to `file`: its exit status and what it printed. */
function runBackup(
  cluster: LocalCluster,
  i: number,
  file: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [
      BIN,
      'backup',
      '--url',
      cluster.httpUrl(i),
      '--admin-token-file',
      join(cluster.dir, 'admin.token'),
      '--out',
      file,
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, out: stdout, err: stderr }));
  });
}

async function main(): Promise<void> {
  const flags = parseStoreFlags('bench:backup', USAGE, process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  const clients = clientsOnEachReplica(cluster);
  const probeClient = connect({ urls: [cluster.url(1)], token: cluster.token });
  const scratch = mkdtempSync(join(tmpdir(), 'creek-bench-backup-'));
  try {
    await writeKeys(clients, flags.keys, flags['value-bytes'], flags['in-flight'], log);
    log('waiting for agreement');
    const agreed = await cluster.converged(TIMEOUT_MS);
    log(
      `agreed at ${agreed[1]!.committed} committed ops; probing replica 1 for ${BASELINE_MS / 1000} s`,
    );
    const without = await probe(probeClient, new Promise((r) => setTimeout(r, BASELINE_MS)));
    log('backing up replica 1 under the probe');
    const file = join(scratch, 'bench.creek-backup');
    const t0 = performance.now();
    const backup = runBackup(cluster, 1, file);
    const during = await probe(probeClient, backup);
    const took = performance.now() - t0;
    const result = await backup;
    if (result.code !== 0) throw new Error(`creek backup failed: ${result.err}`);
    const keys = /: (\d+) keys,/.exec(result.out)?.[1] ?? '?';
    out.print(
      `creek backup of ${keys} keys (${flags['keys']} written with ${flags['value-bytes']}-byte values; the count includes the client sessions' records), 3 replicas on one machine`,
    );
    out.print(
      `  time                 ${(took / 1000).toFixed(2)} s (the command, from start to exit: its start, the stream, the file and its check; it runs on this machine, sharing its cores)`,
    );
    out.print(`  file                 ${mib(statSync(file).size)}`);
    out.print(`  replica 1 said       ${result.out.trim()}`);
    out.print(
      `  probe on replica 1, sequential weak kv.put: without a backup p50 ${ms(quantile(without, 0.5))} p99 ${ms(quantile(without, 0.99))} (${without.length} ops in ${BASELINE_MS / 1000} s); during the backup p50 ${ms(quantile(during, 0.5))} p99 ${ms(quantile(during, 0.99))} max ${ms(Math.max(...during))} (${during.length} ops)`,
    );
    out.save();
  } finally {
    probeClient.close();
    for (const c of clients) c.close();
    await cluster.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(`bench:backup: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
