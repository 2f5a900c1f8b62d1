import { describe, expect, it } from 'vitest';
import { Driven, remoteReq } from './harness.js';

/**
 * `deferExecution`: inputs only note that the list changed; `runDeferred` validates and executes
 * once for all of them. Late Reqs landing before a local op, one message at a time, re-execute it
 * once per message without deferral and once per batch with it; the answers are the same.
 */
describe('deferred execution', () => {
  /** A local increment at t=100, then three other replicas' increments of the same key at t=10..30. */
  function run(defer: boolean): { r: Driven; tag: number } {
    const r = new Driven({ id: 0, deferExecution: defer });
    const tag = r.invoke(100, 'kv.increment', { key: 'n' });
    if (defer) r.handle(r.replica.runDeferred());
    for (const [origin, at] of [
      [1, 30],
      [2, 20],
      [3, 10],
    ] as const)
      r.deliver(remoteReq(origin, 1, at, 'kv.increment', { key: 'n', by: 1 }));
    if (defer) {
      expect(r.replica.executionDue).toBe(true);
      r.handle(r.replica.runDeferred());
    }
    return { r, tag };
  }

  it('re-executes a local op once per batch of late arrivals, not once per arrival', () => {
    const eager = run(false);
    const batched = run(true);
    // Eager: the local op runs 4 times (first, then after each arrival); each arrival once, and the
    // ones before it again as earlier ones land: 4 + 1 + 2 + 3 = 10 executions.
    expect(eager.r.replica.metrics.executions).toBe(10);
    // Batched: the local op twice, each arrival once.
    expect(batched.r.replica.metrics.executions).toBe(5);
    expect(batched.r.replica.executionDue).toBe(false);
    // The same state either way, and the local op's tentative answer came at once in both.
    expect(batched.r.replica.stateDigest()).toBe(eager.r.replica.stateDigest());
    expect(batched.r.valueOf(batched.tag, 'tentative')).toBe(1);
    expect(eager.r.valueOf(eager.tag, 'tentative')).toBe(1);
  });

  it('an invocation is not answered until the driver runs the deferred executions', () => {
    const r = new Driven({ id: 0, deferExecution: true });
    const tag = r.invoke(1, 'kv.increment', { key: 'n' });
    expect(r.responsesFor(tag)).toEqual([]);
    expect(r.replica.runDeferred().length).toBeGreaterThan(0); // the execution, asked for now
  });
});
