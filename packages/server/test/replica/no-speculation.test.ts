import { describe, expect, it } from 'vitest';
import { Driven } from './harness.js';

/**
 * `speculative: false`: state machine replication on Creek's ordering, the SMR baseline of
 * `bench:tpcc` (Creek §6). Nothing executes before it is committed, so there is nothing to roll
 * back and every response, a weak op's too, is stable.
 */
describe('a replica that does not speculate', () => {
  it('executes a weak op only once committed, and answers it once, stably', () => {
    const r = new Driven({ id: 0, speculative: false });
    const weak = r.invoke(1, 'kv.increment', { key: 'n' });
    expect(r.responses).toEqual([]);
    expect(r.replica.metrics.executions).toBe(0);
    // A strong op commits the weak one before it (its causal context), then itself.
    const strong = r.invoke(2, 'kv.increment', { key: 'n' }, true);
    expect(r.responses).toEqual([]);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.responsesFor(weak).map((x) => [x.level, x.outcome])).toEqual([
      ['stable', { ok: true, value: 1 }],
    ]);
    expect(r.responsesFor(strong).map((x) => [x.level, x.outcome])).toEqual([
      ['stable', { ok: true, value: 2 }],
    ]);
    expect(r.replica.metrics.executions).toBe(2);
    expect(r.replica.metrics.rollbacks).toBe(0);
  });

  it('answers a weak read from the committed state, not from ops still tentative', () => {
    const r = new Driven({ id: 0, speculative: false });
    r.invoke(1, 'kv.put', { key: 'k', value: 'committed' }, true);
    r.deliverStrong(r.cabCast[0]!);
    r.invoke(2, 'kv.put', { key: 'k', value: 'tentative' });
    const read = r.invoke(3, 'kv.get', { key: 'k' });
    expect(r.valueOf(read)).toBe('committed');
    expect(r.replica.stats().unvalidated).toBe(0); // the tentative put is not work left to do
  });

  it('speculates by default: the same weak op answers at once, tentatively', () => {
    const r = new Driven({ id: 0 });
    const weak = r.invoke(1, 'kv.increment', { key: 'n' });
    expect(r.responsesFor(weak).map((x) => x.level)).toEqual(['tentative']);
  });
});
