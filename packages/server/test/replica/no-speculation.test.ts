import { describe, expect, it } from 'vitest';
import { Driven } from './harness.js';

/**
 * `speculative: false`: state machine replication on Creek's ordering, the SMR baseline of
 * `bench:tpcc` (Creek §6). Nothing executes before it is committed, so there is nothing to roll
 * back and every response, a weak op's too, is stable.
 */
describe('a replica that does not speculate', () => {
  it('orders a weak op as soon as it arrives and answers it once, stably, when committed', () => {
    const r = new Driven({ id: 0, speculative: false, orderOnArrival: true });
    const weak = r.invoke(1, 'kv.increment', { key: 'n' });
    // Cast at once, as a strong op would be: its latency is one consensus round, not the wait for
    // a later strong op (or a no-op) to commit it.
    expect(r.cabCast).toHaveLength(1);
    expect(r.responses).toEqual([]);
    expect(r.replica.metrics.executions).toBe(0);
    const strong = r.invoke(2, 'kv.increment', { key: 'n' }, true);
    expect(r.cabCast).toHaveLength(2);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.responsesFor(weak).map((x) => [x.level, x.outcome])).toEqual([
      ['stable', { ok: true, value: 1 }],
    ]);
    expect(r.responsesFor(strong)).toEqual([]);
    r.deliverStrong(r.cabCast[1]!);
    expect(r.responsesFor(strong).map((x) => [x.level, x.outcome])).toEqual([
      ['stable', { ok: true, value: 2 }],
    ]);
    expect(r.replica.metrics.executions).toBe(2);
    expect(r.replica.metrics.rollbacks).toBe(0);
  });

  it('answers a weak read from the committed state, not from ops still in consensus', () => {
    const r = new Driven({ id: 0, speculative: false, orderOnArrival: true });
    r.invoke(1, 'kv.put', { key: 'k', value: 'committed' }, true);
    r.deliverStrong(r.cabCast[0]!);
    r.invoke(2, 'kv.put', { key: 'k', value: 'not yet' });
    const read = r.invoke(3, 'kv.get', { key: 'k' });
    expect(r.readIndex).toEqual([]);
    expect(r.valueOf(read)).toBe('committed');
    expect(r.replica.stats().unvalidated).toBe(0); // the put in consensus is not work left to do
  });

  it('leaves a weak op to the timestamp order unless it orders on arrival', () => {
    const r = new Driven({ id: 0, speculative: false });
    const weak = r.invoke(1, 'kv.increment', { key: 'n' });
    expect(r.cabCast).toEqual([]);
    // A strong op commits the weak one before it (its causal context), then itself.
    r.invoke(2, 'kv.increment', { key: 'n' }, true);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.responsesFor(weak).map((x) => [x.level, x.outcome])).toEqual([
      ['stable', { ok: true, value: 1 }],
    ]);
  });

  it('speculates by default: the same weak op answers at once, tentatively', () => {
    const r = new Driven({ id: 0 });
    const weak = r.invoke(1, 'kv.increment', { key: 'n' });
    expect(r.responsesFor(weak).map((x) => x.level)).toEqual(['tentative']);
  });
});
