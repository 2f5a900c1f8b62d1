import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@creek/client';
import { LocalCluster } from '../../src/node/local-cluster.js';

/**
 * Per-op speculation accuracy in /metrics and /status, on real processes, against a workload with
 * a known number of corrections: replica 1, its peer links blocked, increments a counter K times
 * after replica 0 did (weakly; replica 1's calls take both views, so its client counts too). Replica 0's increments come first in the final order (earlier timestamps),
 * so its K tentative answers hold; replica 1 answered 1..K and its final answers are K+1..2K, so
 * all K of its tentative answers are corrected, each correction naming replica 0's increments as
 * its cause.
 */
const K = 10;
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  await cluster.waitForLeader();
});

afterAll(async () => {
  await cluster.stop(1_000);
});

/** The value of `metric{op="<op>",…}` in replica i's /metrics, or null when it has none. */
async function perOp(i: number, metric: string, op: string): Promise<number | null> {
  const text = await cluster.metrics(i);
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{`) && l.includes(`op="${op}"`));
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('speculation accuracy per op', () => {
  it('counts each op’s confirmed and corrected tentative answers where they were given', async () => {
    const at = (i: number) =>
      connect({ urls: [cluster.url(i)], token: cluster.token, nearest: false });
    const c0 = at(0);
    const c1 = at(1);
    try {
      await c1.invokeStrong('kv.put', { key: 'ready', value: 1 });
      for (const peer of [0, 2]) await cluster.admin(1, 'block', { peer });
      // A weak op's Correctable settles with its tentative answer; replica 0's increments are
      // committed (by replicas 0 and 2) before replica 1 is heard again, so they come first in
      // the final order: replica 1's strong increments are decided only after that.
      const first: Promise<void>[] = [];
      for (let n = 0; n < K; n++) {
        const call = c0.invokeWeak('kv.increment', { key: 'counter' });
        await call;
        first.push(call.committed());
      }
      await Promise.all(first);
      // Replica 1's calls get both views: its tentative answer now, the final one once it hears
      // its peers again, which its client counts too (client.accuracy).
      const answers: unknown[] = [];
      const finals: Promise<unknown>[] = [];
      const calls: ReturnType<typeof c1.invoke>[] = [];
      for (let n = 0; n < K; n++) {
        const call = c1.invoke('kv.increment', { key: 'counter' });
        calls.push(call);
        answers.push(
          await new Promise((resolve) => call.subscribe({ onUpdate: resolve, onFinal: resolve })),
        );
        finals.push(Promise.resolve(call));
      }
      expect(answers).toEqual(Array.from({ length: K }, (_, n) => n + 1));
      await cluster.admin(1, 'unblock');
      expect(await Promise.all(finals)).toEqual(Array.from({ length: K }, (_, n) => K + n + 1));
      expect(c1.accuracy('kv.increment')).toEqual({ tentative: K, confirmed: 0, accuracy: 0 });
      // Each correction says why (explained corrections): replica 0's increments, ordered ahead
      // unseen, and the key they wrote that this op read.
      for (const call of calls) {
        const correction = call.correction()!;
        expect(correction.final).toBe(await call);
        expect(correction.causes.length).toBeGreaterThan(0);
        for (const cause of correction.causes) {
          expect(cause).toMatchObject({ op: 'kv.increment', key: 'counter' });
          expect(cause.id).toMatch(/^r0#\d+$/);
        }
      }
      await cluster.until(
        async () => (await perOp(1, 'creek_tentative_answers_total', 'kv.increment')) === K,
        60_000,
        "replica 1's increments are final",
      );
      await cluster.until(
        async () => (await perOp(0, 'creek_tentative_answers_total', 'kv.increment')) === K,
        60_000,
        "replica 0's increments are final",
      );
    } finally {
      await c0.close();
      await c1.close();
    }
    expect(await perOp(1, 'creek_tentative_answers_confirmed_total', 'kv.increment')).toBe(0);
    expect(await perOp(0, 'creek_tentative_answers_confirmed_total', 'kv.increment')).toBe(K);
    // Replica 2 answered no increment.
    expect(await perOp(2, 'creek_tentative_answers_total', 'kv.increment')).toBeNull();
    // /status says the same.
    const s1 = (await cluster.status(1))!;
    expect(s1.metrics.byOp['kv.increment']).toEqual({ speculated: K, speculatedCorrectly: 0 });
    const s0 = (await cluster.status(0))!;
    expect(s0.metrics.byOp['kv.increment']).toEqual({ speculated: K, speculatedCorrectly: K });
  });
});
