import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * `creek start --preferred-leader`, end to end with three real replica processes: leadership goes
 * to the preferred replica, to another while it is down, and back to it once it returns.
 */
describe('a preferred leader, with real processes', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  /** Every replica of `replicas` answers /status and names `leader` as the leader. */
  async function ledBy(replicas: readonly number[], leader: (l: number) => boolean) {
    const statuses = await Promise.all(replicas.map((i) => cluster!.status(i)));
    return statuses.every(
      (s) =>
        s !== null && s.leader !== null && leader(s.leader) && s.leader === statuses[0]!.leader,
    );
  }

  it('3 replicas, preferred leader 2: 2 leads; killed, another leads; restarted, 2 leads again', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', preferredLeader: 2 });
    // Generous deadlines: a loaded machine stalls processes, and the assertions are about who
    // leads, not how fast.
    await cluster.until(() => ledBy([0, 1, 2], (l) => l === 2), 30_000, 'replica 2 to lead');
    expect((await cluster.status(2))!.role).toBe('leader');

    await cluster.killed(2);
    await cluster.until(() => ledBy([0, 1], (l) => l !== 2), 30_000, 'another replica to lead');
    // The two left still order strong ops.
    const client = await RawClient.connect(cluster.url(0), cluster.token);
    try {
      const op = client.invoke('kv.put', { key: 'k', value: 1 }, 'strong');
      await within(op.done, 20_000, 'a strong op with replica 2 down');
    } finally {
      client.close();
    }

    cluster.startReplica(2);
    await cluster.until(() => ledBy([0, 1, 2], (l) => l === 2), 30_000, 'replica 2 to lead again');
    expect((await cluster.status(2))!.role).toBe('leader');
    expect((await cluster.status(0))!.role).toBe('follower');
  });
});
