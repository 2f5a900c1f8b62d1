import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within, type Views } from './cluster-harness.js';

const APP = fileURLToPath(new URL('./fixtures/dice-app.mjs', import.meta.url));

/** The outcomes of an op's views (tentative, then stable or a confirm of the tentative one). */
function outcomes(views: Views): NonNullable<Views['frames'][number]['outcome']>[] {
  return views.frames.flatMap((f) => (f.outcome === undefined ? [] : [f.outcome]));
}

/**
 * The outside reproduction of a nondeterministic op, against real replica processes: an op that
 * calls Math.random() once stored a different value for the same key on each of three replicas,
 * with no error anywhere. Now the execution guard refuses it at its first execution, on every
 * replica alike, and the client is told to use tx.random().
 */
describe('an op that calls Math.random()', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('is refused with a message naming tx.random(), and the replicas stay equal', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', app: APP });
    const clients = await Promise.all(
      [0, 1, 2].map((i) => RawClient.connect(cluster!.url(i), cluster!.token)),
    );
    // From each replica, weak and strong.
    const rolls = clients.flatMap((c, i) => [
      c.invoke('dice.roll', { key: `roll/${i}` }, 'weak'),
      c.invoke('dice.roll', { key: `roll/${i}` }, 'strong'),
    ]);
    const seeded = clients[0]!.invoke('dice.rollSeeded', { key: 'seeded' }, 'strong');
    await within(Promise.all([...rolls, seeded].map((o) => o.done)), 30_000, 'every roll answered');
    for (const roll of rolls) {
      const got = outcomes(roll.views);
      expect(got.length).toBeGreaterThan(0);
      for (const outcome of got) {
        expect(outcome.ok).toBe(false);
        expect(outcome.error).toMatch(
          /^Math\.random\(\) is not allowed inside an op: .*so replicas would disagree\. Use tx\.random\(\)/,
        );
      }
    }
    const seededRoll = outcomes(seeded.views).find((o) => o.ok)?.value;
    expect(typeof seededRoll).toBe('number');

    // Every replica holds the same state: no roll stored anywhere, the seeded one everywhere.
    const statuses = await cluster.converged(30_000);
    expect(new Set(statuses.map((s) => s.digest)).size).toBe(1);
    for (const [i, c] of clients.entries()) {
      const reads = [0, 1, 2].map((k) => c.invoke('kv.get', { key: `roll/${k}` }, 'strong'));
      const mine = c.invoke('kv.get', { key: 'seeded' }, 'strong');
      await within(Promise.all([...reads, mine].map((o) => o.done)), 30_000, `reads at ${i}`);
      for (const r of reads) expect(outcomes(r.views).at(-1)).toEqual({ ok: true, value: null });
      expect(outcomes(mine.views).at(-1)).toEqual({ ok: true, value: seededRoll });
    }
    for (const c of clients) c.close();
  });
});
