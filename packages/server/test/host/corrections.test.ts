import { describe, expect, it } from 'vitest';
import {
  correctionCauses,
  MAX_CAUSE_KEY,
  MAX_CAUSES,
  shownReads,
} from '@creek/replica/core/corrections.js';
import { Entry, type ReadRecord } from '@creek/replica/core/entry.js';
import { HostCluster } from './host-cluster.js';

/**
 * Explained corrections: a strong op's stable answer that differs from the tentative one its
 * client was shown says which ops, ordered ahead of it unseen, made the difference. Replica 1, cut
 * off, increments a counter (strong: a tentative answer, then the stable one) after replica 0
 * incremented it; healed, replica 1's ops are ordered after replica 0's. Its first increment read
 * nothing tentatively and replica 0's last increment finally: that is its cause. Its later ones
 * read its own earlier increment both times, with another value: they inherit that cause.
 */
/**
 * A cluster where every replica has heard its peers, replica 1 is then cut off, and replica 0
 * increments `counter` three times: what replica 1 does next has not seen those increments.
 */
function cutOffAfterIncrements(seed: number): HostCluster {
  const c = new HostCluster(3, seed, { checkpointEvery: 0 });
  for (const i of [0, 1, 2]) c.invoke(i, 'kv.put', { key: `start/${i}`, value: i }, true);
  c.settle();
  c.isolated.add(1);
  c.run(100);
  for (let n = 0; n < 3; n++) {
    c.invoke(0, 'kv.increment', { key: 'counter' });
    c.run(20);
  }
  c.run(200);
  return c;
}

describe('explained corrections', () => {
  it('name the ops ordered ahead unseen, and the key they wrote that the op read', () => {
    const c = cutOffAfterIncrements(9);
    const before = c.responses[1]!.length;
    for (let n = 0; n < 2; n++) {
      c.invoke(1, 'kv.increment', { key: 'counter' }, true);
      c.run(20);
    }
    // A strong op that was not corrected, on a key nobody else wrote: no causes.
    c.invoke(1, 'kv.put', { key: 'mine', value: 1 }, true);
    c.run(20);
    c.isolated.delete(1);
    c.settle();
    const mine = c.responses[1]!.slice(before);
    const value = (r: (typeof mine)[number]) => (r.outcome.ok ? r.outcome.value : null);
    // Each op's views in order (the tags are the ops'): first 1, 2 and null, finally 4, 5, null.
    const byOp = new Map<number, typeof mine>();
    for (const r of mine) byOp.set(r.tag, [...(byOp.get(r.tag) ?? []), r]);
    const views = [...byOp.values()];
    expect(views.map((v) => value(v[0]!))).toEqual([1, 2, null]);
    expect(views.map((v) => value(v.at(-1)!))).toEqual([4, 5, null]);
    expect(views.map((v) => v.at(-1)!.level)).toEqual(['stable', 'stable', 'stable']);
    // Every view that changed the answer its client was shown says why: replica 0's increments,
    // ordered ahead unseen (the second op, which read the first's write, inherits its causes).
    let explained = 0;
    for (const v of views.slice(0, 2))
      for (let k = 1; k < v.length; k++) {
        if (value(v[k]!) === value(v[k - 1]!)) continue;
        const causes = v[k]!.causes!;
        expect(causes.length).toBeGreaterThan(0);
        for (const cause of causes) {
          expect(cause).toMatchObject({ op: 'kv.increment', key: 'counter' });
          expect(cause.id).toMatch(/^r0#\d+$/);
        }
        explained++;
      }
    expect(explained).toBeGreaterThanOrEqual(2);
    // The put was never corrected: none of its views carries causes.
    for (const r of views[2]!) expect(r.causes).toBeUndefined();
    // Weak ops' answers and the other replicas' responses carry none.
    for (const i of [0, 2]) for (const r of c.responses[i]!) expect(r.causes).toBeUndefined();
  });

  it('explain a strong read answered by read index whose stable answer differs', () => {
    const c = cutOffAfterIncrements(11);
    const before = c.responses[1]!.length;
    c.invoke(1, 'kv.get', { key: 'counter' }, true);
    c.run(50);
    c.isolated.delete(1);
    c.settle();
    const views = c.responses[1]!.slice(before);
    expect(views.map((r) => [r.level, r.outcome.ok ? r.outcome.value : null])).toEqual([
      ['tentative', null],
      ['stable', 3],
    ]);
    // The stable read saw replica 0's last increment, which the tentative one had not.
    expect(views[1]!.causes).toHaveLength(1);
    expect(views[1]!.causes![0]).toMatchObject({ op: 'kv.increment', key: 'counter' });
    expect(views[1]!.causes![0]!.id).toMatch(/^r0#\d+$/);
    expect(views[0]!.causes).toBeUndefined();
  });

  it('are bounded: at most MAX_CAUSES of them, each once, with long keys cut', () => {
    const op = (n: number, name = 'w') =>
      new Entry(
        {
          ts: n,
          id: { replica: 0, eventNo: n },
          op: name,
          args: null,
          strong: false,
          causalCtx: null,
        },
        null,
        0,
      );
    const self = op(100, 'self');
    const long = 'k'.repeat(500);
    const reads: ReadRecord[] = [
      { kind: 'key', key: long, version: { writer: op(1), key: long, value: 1 } },
      {
        kind: 'scan',
        prefix: 'p/',
        versions: Array.from({ length: 10 }, (_, i) => ({
          writer: op(2 + i),
          key: `p/${i}`,
          value: i,
        })),
      },
    ];
    const causes = correctionCauses(self, shownReads([]), reads);
    expect(causes).toHaveLength(MAX_CAUSES);
    expect(causes[0]!.key).toHaveLength(MAX_CAUSE_KEY);
    expect(causes.map((c) => c.id)).toEqual(['r0#1', 'r0#2', 'r0#3', 'r0#4']);
    // What the shown execution saw, unchanged, is no cause.
    expect(correctionCauses(self, shownReads(reads), reads)).toEqual([]);
  });
});
