import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within, type Views } from './cluster-harness.js';

/** The stable answer: a stable view's, or the tentative one a `confirm` frame confirmed. */
function stableOutcome(v: Views): unknown {
  const views = v.frames.filter((f) => f.t === 'view');
  const stable = views.find((f) => f.level === 'stable');
  if (stable !== undefined) return stable.outcome;
  return v.frames.some((f) => f.t === 'confirm') ? views.at(-1)?.outcome : undefined;
}

/**
 * `creek start --reads quorum`: strong reads take their index from a majority's frontiers, asked
 * directly (cab/quorum-reads.ts), instead of the leader's read index. Each strong read after a
 * strong write, at any replica, leader or not, sees that write.
 */
describe('a cluster whose strong reads ask a majority', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('reads every strong write completed before it, at every replica', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', reads: 'quorum' });
    const clients = await Promise.all(
      [0, 1, 2].map((i) => RawClient.connect(cluster!.url(i), cluster!.token)),
    );
    for (let round = 0; round < 6; round++) {
      const writer = clients[round % 3]!;
      const put = writer.invoke('kv.put', { key: 'k', value: `v${round}` }, 'strong');
      await within(put.done, 30_000, `strong put ${round}`);
      // Completed: a strong read at each replica, started now, must see it.
      for (const [i, reader] of clients.entries()) {
        const get = reader.invoke('kv.get', { key: 'k' }, 'strong');
        await within(get.done, 30_000, `strong get ${round} at ${i}`);
        expect(stableOutcome(get.views), `round ${round}, replica ${i}`).toEqual({
          ok: true,
          value: `v${round}`,
        });
      }
    }
    for (const c of clients) c.close();
  });
});
