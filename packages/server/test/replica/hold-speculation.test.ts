import { describe, expect, it } from 'vitest';
import { Driven, remoteReq } from './harness.js';

/**
 * Replica.holdSpeculation: while its host catches up on many ops it lacks, only committed entries
 * execute; reads and first tentative answers wait, and run once from where the list stands when
 * the hold is released.
 */
describe('speculation held for a catch-up', () => {
  it('executes nothing tentative and answers no read while held; released, runs the tail once', () => {
    const r = new Driven({ id: 0 });
    r.handle(r.replica.holdSpeculation(true));
    const write = r.invoke(100, 'kv.increment', { key: 'n' });
    const read = r.invoke(101, 'kv.get', { key: 'n' });
    // Older ops arrive, one message at a time, as a catch-up brings them.
    for (const [origin, at] of [
      [1, 30],
      [2, 20],
      [3, 10],
    ] as const)
      r.deliver(remoteReq(origin, 1, at, 'kv.increment', { key: 'n', by: 1 }));
    expect(r.replica.metrics.executions).toBe(0);
    expect(r.responsesFor(write)).toEqual([]);
    expect(r.responsesFor(read)).toEqual([]);
    r.handle(r.replica.holdSpeculation(false));
    // Each entry once, in its final place: not the 10 of executing after every arrival.
    expect(r.replica.metrics.executions).toBe(4);
    expect(r.valueOf(write, 'tentative')).toBe(4);
    expect(r.valueOf(read)).toBe(4);
  });

  it('still executes committed entries, so stable answers go on while held', () => {
    const r = new Driven({ id: 0 });
    r.handle(r.replica.holdSpeculation(true));
    const strong = r.invoke(10, 'kv.increment', { key: 's' }, true);
    const weak = r.invoke(20, 'kv.increment', { key: 'w' });
    r.deliverStrong(r.cabCast[0]!);
    expect(r.valueOf(strong, 'stable')).toBe(1);
    expect(r.responsesFor(weak)).toEqual([]); // tentative, after the strong op: waits
    expect(r.replica.metrics.executions).toBe(1);
  });

  it('holding twice or releasing what is not held changes nothing', () => {
    const r = new Driven({ id: 0 });
    expect(r.replica.holdSpeculation(false)).toEqual([]);
    const tag = r.invoke(10, 'kv.increment', { key: 'n' });
    expect(r.valueOf(tag, 'tentative')).toBe(1);
    r.handle(r.replica.holdSpeculation(true));
    expect(r.replica.holdSpeculation(true)).toEqual([]);
  });
});
