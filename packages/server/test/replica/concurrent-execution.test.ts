import { describe, expect, it } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import type { ExecutionJob, ExecutionResult, Output, Response } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { T0, testApp } from './harness.js';

/**
 * Concurrent execution (Creek §4.4): with more than one execution slot, entries beyond the
 * validation frontier start while earlier ones run, on the snapshot of their own position; their
 * results count only once validated in order. Here jobs are held and finished by hand, in an order
 * the test picks.
 */
class HeldJobs {
  readonly replica: Replica;
  readonly jobs: ExecutionJob[] = [];
  readonly responses: Response[] = [];
  private readonly inline = new InlineExecutor(testApp);
  private tag = 1;

  constructor(slots: number) {
    this.replica = new Replica({ id: 0, app: testApp, noopIntervalMs: 1e9, executionSlots: slots });
  }

  private take(outputs: Output[]): void {
    for (const o of outputs)
      if (o.type === 'execute') this.jobs.push(o.job);
      else if (o.type === 'respond') this.responses.push(o);
  }

  invoke(atMs: number, op: string, args: unknown): number {
    const tag = this.tag++;
    this.take(this.replica.invoke(T0 + atMs, { op, args, strong: false, tag }));
    return tag;
  }

  /** Runs every held job now (each reads its snapshot as the store is now), results kept back. */
  runAll(): ExecutionResult[] {
    return this.jobs.splice(0).map((job) => this.inline.execute(job));
  }

  finish(result: ExecutionResult): void {
    this.take(this.replica.executed(result));
  }

  /** Finishes whatever the replica asks for next, at once, until it asks for nothing. */
  drain(): void {
    while (this.jobs.length > 0) for (const r of this.runAll()) this.finish(r);
  }

  answer(tag: number): unknown {
    const r = this.responses.find((x) => x.tag === tag);
    return r?.outcome.ok === true ? r.outcome.value : r?.outcome;
  }
}

describe('concurrent execution in the replica core', () => {
  it('one slot: an op waits until the one before it has finished', () => {
    const h = new HeldJobs(1);
    h.invoke(1, 'kv.increment', { key: 'n' });
    h.invoke(2, 'kv.increment', { key: 'n' });
    expect(h.jobs).toHaveLength(1);
  });

  it('two slots: a conflicting op started beside an earlier one is discarded at validation and re-executed', () => {
    const h = new HeldJobs(2);
    const a = h.invoke(1, 'kv.increment', { key: 'n' });
    const b = h.invoke(2, 'kv.increment', { key: 'n' });
    expect(h.jobs.map((j) => j.op)).toEqual(['kv.increment', 'kv.increment']);
    // Both read `n` before either wrote it; B finishes first.
    const [ra, rb] = h.runAll();
    h.finish(rb!);
    expect(h.responses).toEqual([]); // B cannot be answered before A is validated
    h.finish(ra!);
    h.drain();
    expect([h.answer(a), h.answer(b)]).toEqual([1, 2]); // what serial execution gives
    const m = h.replica.metrics;
    expect([m.executions, m.aheadExecutions, m.aheadConflicts]).toEqual([3, 1, 1]);
  });

  it('two slots: an op that read nothing the earlier one wrote is accepted as it ran', () => {
    const h = new HeldJobs(2);
    const a = h.invoke(1, 'kv.put', { key: 'x', value: 1 });
    const b = h.invoke(2, 'kv.increment', { key: 'y' });
    const [ra, rb] = h.runAll();
    h.finish(rb!);
    h.finish(ra!);
    h.drain();
    expect([h.answer(a), h.answer(b)]).toEqual([null, 1]);
    const m = h.replica.metrics;
    expect([m.executions, m.aheadExecutions, m.aheadConflicts]).toEqual([2, 1, 0]);
  });

  it('a cascade: a conflict re-executes the op, and ops that read its first result are re-executed too', () => {
    const h = new HeldJobs(3);
    const a = h.invoke(1, 'kv.increment', { key: 'n' });
    const b = h.invoke(2, 'kv.increment', { key: 'n' });
    const c = h.invoke(3, 'copy', { from: 'n', to: 'm' });
    expect(h.jobs).toHaveLength(3);
    const [ra, rb, rc] = h.runAll(); // all three on the empty store
    h.finish(rc!);
    h.finish(rb!);
    h.finish(ra!);
    h.drain();
    expect([h.answer(a), h.answer(b), h.answer(c)]).toEqual([1, 2, 2]);
    expect(h.replica.metrics.aheadConflicts).toBe(2);
  });
});
