/**
 * What rebuilding a replica from its peers costs on a real local cluster: the time a wiped
 * replica takes to be serving again, and the bytes its peers send it, for a store of `--keys` keys.
 *
 *   npm run bench:transfer [-- --keys 100000 --value-bytes 32 --in-flight 256]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops), writes `--keys` keys with weak
 * kv.put through one SDK client per replica (`--in-flight` ops outstanding each), waits until the
 * replicas agree and have compacted (gossip pruned the Reqs every replica holds, so a replica
 * without them needs a checkpoint), then SIGKILLs replica 2, deletes its data directory and
 * starts it again. Reported:
 *
 *  - rebuilt in: from the restart until replica 2 is done learning (it took a peer's checkpoint,
 *    rejoined and has an identity), and until it agrees with the others (same state digest);
 *  - what its peers sent meanwhile: bytes of peer frames (all traffic, heartbeats included) and
 *    the transfer's chunks; what it received, by its own count;
 *  - its disk before the wipe and after the rebuild (SQLite's file and WAL), next to a peer's.
 *
 * Progress on stderr, the figures on stdout. Nothing is asserted: this measures.
 */
import { performance } from 'node:perf_hooks';
import { parseStoreFlags, writeKeys } from './write-keys.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCluster, type ReplicaStatus } from '@creek/server/node';
import { clientsOnEachReplica } from './open-loop-load.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('transfer', 'text');

const USAGE = 'npm run bench:transfer [-- --keys 100000 --value-bytes 32 --in-flight 256]';
const TIMEOUT_MS = 600_000;

const log = (line: string): void => void process.stderr.write(`bench:transfer: ${line}\n`);

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const flags = parseStoreFlags('bench:transfer', USAGE, process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  const clients = clientsOnEachReplica(cluster);
  try {
    await writeKeys(clients, flags.keys, flags['value-bytes'], flags['in-flight'], log);
    log('waiting for agreement and compaction');
    await cluster.converged(TIMEOUT_MS);
    await cluster.until(
      async () => (await cluster.statuses()).every((s) => s !== null && s.memory.gossipHeld === 0),
      TIMEOUT_MS,
      'every Req pruned',
    );
    const before = (await cluster.statuses()) as ReplicaStatus[];
    log(
      `agreed: ${before[0]!.memory.keys} keys, ${before[0]!.committed} ops committed; wiping replica 2`,
    );

    cluster.kill(2);
    rmSync(join(cluster.dir, 'replica-2'), { recursive: true, force: true });
    const sentBefore = [0, 1].map((i) => before[i]!.network.bytesSent);
    const chunksBefore = [0, 1].map((i) => before[i]!.transfers.chunksSent);
    const restartAt = performance.now();
    cluster.startReplica(2);
    await cluster.until(
      async () => (await cluster.status(2))?.learning === false,
      TIMEOUT_MS,
      'replica 2 rebuilt',
    );
    const servingMs = performance.now() - restartAt;
    const rebuilt = (await cluster.status(2))!;
    await cluster.converged(TIMEOUT_MS);
    const agreedMs = performance.now() - restartAt;
    const after = (await cluster.statuses()) as ReplicaStatus[];
    const sent = [0, 1].map((i) => after[i]!.network.bytesSent - sentBefore[i]!);
    const chunks = [0, 1].map((i) => after[i]!.transfers.chunksSent - chunksBefore[i]!);

    out.print(
      `state transfer of ${after[2]!.memory.keys} keys (${flags['value-bytes']}-byte values), 3 replicas on one machine`,
    );
    out.print(
      `  serving again after  ${(servingMs / 1000).toFixed(2)} s (transfers installed: ${rebuilt.transfers.installed}, attempts: ${rebuilt.transfers.attempts}, rejected: ${rebuilt.transfers.rejected})`,
    );
    out.print(`  agreeing after       ${(agreedMs / 1000).toFixed(2)} s`);
    out.print(
      `  peers sent           ${mib(sent[0]! + sent[1]!)} of peer frames (replica 0: ${mib(sent[0]!)}, replica 1: ${mib(sent[1]!)}), ${chunks[0]! + chunks[1]!} transfer chunks; replica 2 received ${rebuilt.transfers.chunksReceived}`,
    );
    out.print(
      `  identity             origin ${rebuilt.identity.origin} (incarnation ${rebuilt.identity.incarnation})`,
    );
    out.print(
      `  disk, replica 2      ${mib(before[2]!.storage.bytes)} before the wipe, ${mib(after[2]!.storage.bytes)} after the rebuild (checkpoint ${mib(after[2]!.storage.checkpointBytes)}); replica 0: ${mib(after[0]!.storage.bytes)}`,
    );
    out.save();
  } finally {
    for (const c of clients) c.close();
    await cluster.stop();
  }
}

main().catch((e: unknown) => {
  console.error(`bench:transfer: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
