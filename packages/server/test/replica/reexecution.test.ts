import { describe, expect, it } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { Driven, remoteReq } from './harness.js';

/**
 * Creek §4.4, "rollbacks only if necessary": an op is re-executed exactly when something it read
 * changed because of a reorder, cascading through ops that read what a re-executed op wrote.
 * These tests count executions, so they fail both if a needed re-execution is skipped (the results
 * would be wrong) and if an unneeded one is done (the counts would be higher).
 */
describe('re-execution only if necessary', () => {
  it('an op landing mid-list on unrelated keys re-executes nothing', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.increment', { key: 'x' });
    r.invoke(20, 'kv.increment', { key: 'y' });
    expect(r.replica.metrics.executions).toBe(2);
    r.deliver(remoteReq(1, 1, 15, 'kv.increment', { key: 'z', by: 1 }));
    expect(r.replica.metrics.executions).toBe(3);
    expect(r.replica.metrics.rollbacks).toBe(0);
  });

  it('re-executes the readers of a changed key, cascading, and nothing else', () => {
    const r = new Driven({ id: 0 });
    const inc = r.invoke(10, 'kv.increment', { key: 'x' }); // reads x
    const c1 = r.invoke(20, 'copy', { from: 'x', to: 'c' }); // reads x
    const c2 = r.invoke(30, 'copy', { from: 'c', to: 'd' }); // reads c (written by c1)
    r.invoke(40, 'kv.increment', { key: 'y' }); // unrelated
    r.invoke(50, 'copy', { from: 'y', to: 'e' }); // reads y only
    expect(r.replica.metrics.executions).toBe(5);
    expect(r.valueOf(c2)).toBe(1);

    // A remote op ordered first writes x: inc, c1 and, through c, c2 must re-run; the y ops not.
    r.deliver(remoteReq(1, 1, 5, 'kv.put', { key: 'x', value: 100 }));
    expect(r.replica.metrics.executions).toBe(5 + 1 + 3);
    expect(r.replica.metrics.rollbacks).toBe(3);
    expect(r.replica.state().get('d')).toBe(101);
    // Weak ops answer once: their first (now stale) tentative response stands.
    expect(r.responsesFor(inc)).toHaveLength(1);
    expect(r.responsesFor(c1)).toHaveLength(1);
  });

  it('does not re-execute when the changed version holds an equal value', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'x', value: 7 });
    r.invoke(20, 'copy', { from: 'x', to: 'c' }); // read x = 7 written by the put at 10
    // Lands between them and writes the same value: the copy's read now sees another version of x,
    // with the same value, so its execution still holds.
    r.deliver(remoteReq(1, 1, 15, 'kv.put', { key: 'x', value: 7 }));
    expect(r.replica.metrics.executions).toBe(3);
    expect(r.replica.metrics.rollbacks).toBe(0);
  });

  it('revalidates prefix scans: a new key under the prefix re-executes the scanner', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'a/1', value: 1 });
    const t = r.invoke(20, 'total', { prefix: 'a/', into: 'sum' });
    r.invoke(30, 'kv.put', { key: 'b/1', value: 5 });
    expect(r.valueOf(t)).toBe(1);
    r.deliver(remoteReq(1, 1, 15, 'kv.put', { key: 'b/2', value: 2 })); // outside the prefix
    expect(r.replica.metrics.rollbacks).toBe(0);
    r.deliver(remoteReq(1, 2, 16, 'kv.put', { key: 'a/2', value: 2 })); // a phantom for the scan
    expect(r.replica.metrics.rollbacks).toBe(1);
    expect(r.replica.state().get('sum')).toBe(3);
  });

  it('a commit that moves a strong op ahead re-executes only conflicting ops', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.increment', { key: 'x' }); // r0#1, reads x
    r.invoke(20, 'kv.increment', { key: 'y' }); // r0#2, reads y
    // A strong op from replica 1 whose causal context holds none of replica 0's ops; it writes y.
    const s = remoteReq(
      1,
      1,
      30,
      'kv.put',
      { key: 'y', value: 50 },
      true,
      new DottedVersionVector(),
    );
    r.deliver(s);
    expect(r.replica.metrics.executions).toBe(3);
    r.deliverStrong(s.id);
    // Committed · tentative is now [s, r0#1, r0#2]: r0#2 read y, which s now writes before it.
    expect(r.commits).toEqual([[s.id]]);
    expect(r.replica.metrics.rollbacks).toBe(1);
    expect(r.replica.metrics.executions).toBe(4);
    expect(r.replica.state().get('y')).toBe(51);
    expect(r.replica.state().get('x')).toBe(1);
  });

  it('a commit of the head of the tentative list re-executes nothing and answers stably at once', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.increment', { key: 'x' });
    const tag = r.invoke(20, 'kv.increment', { key: 'x' }, true);
    expect(r.responsesFor(tag).map((x) => x.level)).toEqual(['tentative']);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.replica.metrics.executions).toBe(2);
    expect(r.responsesFor(tag).map((x) => [x.level, x.outcome])).toEqual([
      ['tentative', { ok: true, value: 2 }],
      ['stable', { ok: true, value: 2 }],
    ]);
  });
});
