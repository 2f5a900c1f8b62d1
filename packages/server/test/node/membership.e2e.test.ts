import { afterEach, describe, expect, it } from 'vitest';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { LocalCluster, type ReplicaStatus } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * Membership changes on real processes (cab/configuration.ts, `creek member`): a replica lost for
 * good is removed while the cluster serves, a new one is added and rebuilds itself from a peer's
 * checkpoint, and compaction, which waited for the dead one, resumes.
 */
describe('membership changes on a 3-replica cluster of real processes', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('one replica killed for good: removed under load, the survivors compact again and their disks shrink, a new replica joins and the cluster converges', async () => {
    const exits: { replica: number; code: number | null }[] = [];
    cluster = await LocalCluster.start({
      replicas: 3,
      logLevel: 'error',
      // Checkpoints every 300 final ops: the disk follows what the replicas may drop.
      checkpointEvery: 300,
      onExit: (replica, code) => exits.push({ replica, code }),
    });
    const c = cluster;
    const clients = await Promise.all([0, 1].map((i) => RawClient.connect(c.url(i), c.token)));
    // Increments of 40 keys from replicas 0 and 1, one in four strong; each key's final count
    // says how many were applied (each once). Values are padded so the disk use shows.
    let stop = false;
    let sent = 0;
    const applied = new Map<string, number>();
    const load = Promise.all(
      clients.map(async (client, ci) => {
        for (let n = 0; !stop; n++) {
          const key = `k${(n * 7 + ci) % 40}`;
          const op = client.invoke('kv.increment', { key }, n % 4 === 0 ? 'strong' : 'weak');
          sent++;
          await within(op.done, 20_000, 'a load op');
          if (op.views.frames.some((f) => f.t === 'view'))
            applied.set(key, (applied.get(key) ?? 0) + 1);
        }
      }),
    );
    const survivors = async (): Promise<ReplicaStatus[]> =>
      (await Promise.all([0, 1].map((i) => c.status(i)))).map((s) => s!);
    await c.until(async () => sent > 300, 20_000, 'load under way');

    // Replica 2 dies for good. The survivors can no longer prune what it never received: their
    // gossip holds every Req from now on, and so do their checkpoints.
    c.kill(2);
    const sentAtDeath = sent;
    await c.until(async () => sent > sentAtDeath + 2_500, 60_000, 'load while 2 is dead');
    const grown = await survivors();
    for (const s of grown) expect(s.memory.gossipHeld).toBeGreaterThan(2_000);

    // Removed (decided through the log while the load runs): pruning and truncation count the
    // members only, so the next checkpoints are small again, and so are the disks.
    await c.removeReplica(2);
    const removedAt = sent;
    await c.until(
      async () =>
        (await survivors()).every(
          (s, k) =>
            s.membership.members.join() === '0,1' &&
            s.memory.gossipHeld < 500 &&
            s.storage.checkpointBytes < grown[k]!.storage.checkpointBytes / 2 &&
            s.storage.bytes < grown[k]!.storage.bytes,
        ) && sent > removedAt + 600,
      60_000,
      'the survivors compacted again',
    );
    const shrunk = await survivors();

    // A new replica (id 3) joins: it rebuilds itself from a peer's checkpoint, then serves.
    const added = await c.addReplica();
    expect(added).toBe(3);
    await c.until(
      async () => {
        const s = await c.status(3);
        return s !== null && !s.learning && s.membership.members.join() === '0,1,3';
      },
      30_000,
      'replica 3 rebuilt and serving',
    );
    const joined = (await c.status(3))!;
    expect(joined.transfers.installed).toBeGreaterThanOrEqual(1);
    const c3 = await RawClient.connect(c.url(3), c.token);
    await within(c3.invoke('kv.increment', { key: 'k0' }, 'strong').done, 10_000, 'op at 3');
    applied.set('k0', (applied.get('k0') ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    for (const client of [...clients, c3]) client.close();
    const final = await c.converged(30_000);
    expect(final.map((s) => s.id)).toEqual([0, 1, 3]);
    // Every answered op applied once, on every member: the state the answers add up to.
    for (const s of final) expect(s.digest).toBe(digestOf(Object.fromEntries(applied)));
    expect(exits).toEqual([{ replica: 2, code: null }]);
    console.log(
      `disk: ${grown.map((s, k) => `replica ${k} ${mib(s.storage.bytes)} (checkpoint ${mib(s.storage.checkpointBytes)}) with 2 dead, ${mib(shrunk[k]!.storage.bytes)} (checkpoint ${mib(shrunk[k]!.storage.checkpointBytes)}) once removed`).join('; ')}`,
    );
  });
});

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(2)} MiB`;
}

/** /status's digest of a state (the state itself is not shown). */
function digestOf(state: Record<string, number>): string {
  return StateDigest.of(Object.entries(state));
}
