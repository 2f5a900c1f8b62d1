/**
 * What replacing a replica lost for good costs on a real local cluster, and what it gives back:
 * the survivors' disks while the dead replica holds back compaction and after it is removed, and
 * the state transfer that rebuilds the replica added in its place, for a store of `--keys` keys.
 *
 *   npm run bench:replace [-- --keys 100000 --value-bytes 32 --in-flight 256]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops, checkpoints every 10,000 final ops),
 * writes `--keys` keys (weak kv.put, one SDK client per replica, `--in-flight` ops outstanding
 * each), waits until the replicas agree and have compacted, then SIGKILLs replica 2 for good and
 * writes every key again: the survivors can prune nothing the dead replica never reported, so
 * gossip holds every Req and the checkpoints carry them. Then replica 2 is removed through the
 * log (POST /admin/members/remove, as `creek member remove`), every key is written a third time
 * so that each survivor writes checkpoints that no longer need to hold them, and a new replica
 * (id 3) is added (POST /admin/members/add, then `creek start --join`). Reported:
 *
 *  - each survivor's disk (SQLite's file and WAL) and checkpoint with replica 2 dead, and after
 *    its removal;
 *  - the new replica: serving after (from its start until it is done learning: it took a peer's
 *    checkpoint and rejoined), agreeing after, the bytes of peer frames its peers sent meanwhile
 *    and the transfer's chunks.
 *
 * Progress on stderr, the figures on stdout. Nothing is asserted: this measures.
 */
import { performance } from 'node:perf_hooks';
import { LocalCluster, type ReplicaStatus } from '@creek/server/node';
import { clientsOnEachReplica } from './open-loop-load.js';
import { parseStoreFlags, writeKeys } from './write-keys.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('replace', 'text');

const USAGE = 'npm run bench:replace [-- --keys 100000 --value-bytes 32 --in-flight 256]';
const TIMEOUT_MS = 600_000;

const log = (line: string): void => void process.stderr.write(`bench:replace: ${line}\n`);

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const disk = (s: ReplicaStatus): string =>
  `${mib(s.storage.bytes)} (checkpoint ${mib(s.storage.checkpointBytes)}, gossip holding ${s.memory.gossipHeld} Reqs)`;

async function main(): Promise<void> {
  const flags = parseStoreFlags('bench:replace', USAGE, process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  let clients = clientsOnEachReplica(cluster);
  const write = (round: string) =>
    writeKeys(
      clients,
      flags.keys,
      flags['value-bytes'],
      flags['in-flight'],
      log,
      `${round}-${'x'.repeat(Math.max(0, flags['value-bytes'] - round.length - 1))}`,
    );
  const survivors = async (): Promise<ReplicaStatus[]> =>
    (await Promise.all([0, 1].map((i) => cluster.status(i)))) as ReplicaStatus[];
  try {
    await write('a');
    await cluster.converged(TIMEOUT_MS);
    await cluster.until(
      async () => (await cluster.statuses()).every((s) => s !== null && s.memory.gossipHeld === 0),
      TIMEOUT_MS,
      'every Req pruned',
    );
    const healthy = await survivors();
    log('agreed and compacted; replica 2 dies for good, every key is written again');

    cluster.kill(2);
    for (const c of clients) c.close();
    clients = clientsOnEachReplica(cluster).slice(0, 2);
    await write('b');
    const dead = await survivors();
    log('removing replica 2 (through the log), then every key is written a third time');
    const removeAt = performance.now();
    await cluster.removeReplica(2);
    const removedMs = performance.now() - removeAt;
    for (const c of clients) c.close();
    clients = clientsOnEachReplica(cluster);
    const checkpoints = dead.map((s) => s.memory.checkpoints);
    await write('c');
    await cluster.until(
      async () =>
        (await survivors()).every(
          (s, k) => s.memory.gossipHeld < 1_000 && s.memory.checkpoints > checkpoints[k]!,
        ),
      TIMEOUT_MS,
      'a checkpoint at each survivor after the removal',
    );
    const removed = await survivors();

    log('adding replica 3 (through the log) and starting it with --join');
    const sentBefore = removed.map((s) => s.network.bytesSent);
    const chunksBefore = removed.map((s) => s.transfers.chunksSent);
    const addAt = performance.now();
    const id = await cluster.addReplica();
    await cluster.until(
      async () => (await cluster.status(id))?.learning === false,
      TIMEOUT_MS,
      `replica ${id} rebuilt`,
    );
    const servingMs = performance.now() - addAt;
    const rebuilt = (await cluster.status(id))!;
    await cluster.converged(TIMEOUT_MS);
    const agreedMs = performance.now() - addAt;
    const after = await survivors();
    const sent = [0, 1].map((k) => after[k]!.network.bytesSent - sentBefore[k]!);
    const chunks = [0, 1].map((k) => after[k]!.transfers.chunksSent - chunksBefore[k]!);

    out.print(
      `replacing a dead replica of 3, a store of ${rebuilt.memory.keys} keys (${flags['value-bytes']}-byte values), one machine`,
    );
    for (const k of [0, 1])
      out.print(
        `  replica ${k} disk     ${disk(healthy[k]!)} all alive; ${disk(dead[k]!)} with 2 dead after ${flags.keys} more writes; ${disk(removed[k]!)} once 2 was removed and ${flags.keys} more written`,
      );
    out.print(`  removal in force at replica 0 after ${(removedMs / 1000).toFixed(2)} s`);
    out.print(
      `  replica ${id} serving after ${(servingMs / 1000).toFixed(2)} s (from the add; transfers installed: ${rebuilt.transfers.installed}, attempts: ${rebuilt.transfers.attempts}), agreeing after ${(agreedMs / 1000).toFixed(2)} s`,
    );
    out.print(
      `  peers sent          ${mib(sent[0]! + sent[1]!)} of peer frames (replica 0: ${mib(sent[0]!)}, replica 1: ${mib(sent[1]!)}), ${chunks[0]! + chunks[1]!} transfer chunks; replica ${id} received ${rebuilt.transfers.chunksReceived}; its disk ${mib(rebuilt.storage.bytes)}`,
    );
    out.save();
  } finally {
    for (const c of clients) c.close();
    await cluster.stop();
  }
}

main().catch((e: unknown) => {
  console.error(`bench:replace: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
