import { describe, expect, it } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { NOOP_OP } from '@creek/app';
import { Driven, remoteReq, T0 } from './harness.js';

describe('replica: invocation', () => {
  it('answers a weak op tentatively after its first execution and gossips it without CAB', () => {
    const r = new Driven({ id: 3 });
    const tag = r.invoke(10, 'kv.increment', { key: 'x', by: 2 });
    expect(r.responsesFor(tag)).toEqual([
      {
        type: 'respond',
        tag,
        id: { replica: 3, eventNo: 1 },
        level: 'tentative',
        outcome: { ok: true, value: 2 },
      },
    ]);
    expect(r.rbCast.map((q) => q.id)).toEqual([{ replica: 3, eventNo: 1 }]);
    expect(r.rbCast[0]!.causalCtx).toBeNull();
    expect(r.cabCast).toEqual([]);
  });

  it('answers weak read-only ops from local state without ordering or gossiping them', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'k', value: 'v' });
    const tag = r.invoke(11, 'kv.get', { key: 'k' });
    expect(r.valueOf(tag)).toBe('v');
    expect(r.responsesFor(tag)[0]!.id).toBeNull();
    expect(r.rbCast).toHaveLength(1);
    expect(r.replica.stats().tentative).toBe(1);
  });

  it('without read index, orders strong read-only ops like any strong op', () => {
    const r = new Driven({ id: 0, readIndex: false });
    const tag = r.invoke(10, 'kv.get', { key: 'k' }, true);
    expect(r.cabCast).toHaveLength(1);
    expect(r.rbCast).toHaveLength(1);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.responsesFor(tag).map((x) => x.level)).toEqual(['tentative', 'stable']);
  });

  it('answers a strong read-only op by read index: tentatively at once, stably from the committed state, never ordered', () => {
    const r = new Driven({ id: 0 });
    const put = r.invoke(10, 'kv.put', { key: 'k', value: 'committed' }, true);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.valueOf(put, 'stable')).toBeNull();
    r.deliver(remoteReq(1, 1, 11, 'kv.put', { key: 'k', value: 'tentative' }));
    const tag = r.invoke(20, 'kv.get', { key: 'k' }, true);
    // Neither gossiped nor cast: it asks for a read index.
    expect(r.cabCast).toHaveLength(1);
    expect(r.rbCast).toHaveLength(1);
    expect(r.readIndex).toEqual([tag]);
    expect(r.responsesFor(tag)).toMatchObject([
      { level: 'tentative', id: null, outcome: { ok: true, value: 'tentative' } },
    ]);
    r.readIndexReached(tag);
    // The committed state, with its position: the tentative put is not in it.
    expect(r.responsesFor(tag)[1]).toMatchObject({
      level: 'stable',
      id: null,
      outcome: { ok: true, value: 'committed' },
      position: 1,
    });
  });

  it("a strong read waits for the replica's own earlier ops to commit, and issues a no-op for them", () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'k', value: 'mine' }); // weak, not committed
    expect(r.replica.noopWanted).toBe(false);
    const tag = r.invoke(11, 'kv.get', { key: 'k' }, true);
    // It says so, for a driver that ticks seldom to tick now.
    expect(r.replica.noopWanted).toBe(true);
    r.readIndexReached(tag);
    expect(r.responsesFor(tag).map((x) => x.level)).toEqual(['tentative']);
    // The next tick casts a no-op at once, whose causal context holds the weak put.
    r.tick(12);
    expect(r.cabCast).toHaveLength(1);
    expect(r.replica.noopWanted).toBe(false);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.responsesFor(tag)[1]).toMatchObject({
      level: 'stable',
      outcome: { ok: true, value: 'mine' },
      position: 2,
    });
  });

  it('rejects bad arguments before ordering, naming the field', () => {
    const r = new Driven({ id: 0 });
    const tag = r.invoke(10, 'kv.put', { key: 42, value: 1 });
    const [resp] = r.responsesFor(tag);
    expect(resp!.level).toBe('failed');
    expect(resp!.outcome.ok).toBe(false);
    expect(!resp!.outcome.ok && resp!.outcome.error).toMatch(
      /invalid arguments for 'kv.put': key:/,
    );
    expect(r.rbCast).toEqual([]);
    expect(r.replica.metrics.invoked.rejected).toBe(1);
  });

  it('rejects unknown ops and the internal no-op, listing the app ops', () => {
    const r = new Driven({ id: 0 });
    const a = r.invoke(10, 'nope', {});
    const b = r.invoke(10, NOOP_OP, null, true);
    for (const tag of [a, b]) {
      const [resp] = r.responsesFor(tag);
      expect(resp!.level).toBe('failed');
      expect(!resp!.outcome.ok && resp!.outcome.error).toMatch(/unknown operation .*kv\.get/);
    }
    expect(r.rbCast).toEqual([]);
  });

  it('turns a thrown error into a deterministic failed result that is still ordered', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'x', value: 'text' });
    const tag = r.invoke(20, 'kv.increment', { key: 'x' }, true);
    r.deliverStrong(r.cabCast[0]!);
    const stable = r.responsesFor(tag).find((x) => x.level === 'stable')!;
    expect(stable.outcome).toEqual({
      ok: false,
      error: "kv.increment: 'x' holds a string, not a number",
    });
    expect(r.replica.state().get('x')).toBe('text');
  });
});

describe('replica: strong ops and CAB delivery', () => {
  it('includes only what is known in the causal context and delivers only when checkDep holds', () => {
    const r = new Driven({ id: 0 });
    // A remote strong op whose context names a weak op this replica has not received yet.
    const ctx = new DottedVersionVector();
    ctx.add({ replica: 2, eventNo: 1 });
    const s = remoteReq(1, 1, 20, 'kv.put', { key: 'a', value: 1 }, true, ctx);
    r.deliver(s);
    expect(r.replica.checkDep(s.id)).toBe(false);
    expect(() => r.deliverStrong(s.id)).toThrow(/checkDep is false/);
    r.deliver(remoteReq(2, 1, 10, 'kv.put', { key: 'b', value: 2 }));
    expect(r.replica.checkDep(s.id)).toBe(true);
    r.deliverStrong(s.id);
    expect(r.commits).toEqual([[{ replica: 2, eventNo: 1 }, s.id]]);
    expect(r.replica.stats()).toMatchObject({ committed: 2, tentative: 0, finalized: 2 });
  });

  it("stops another origin's context at its pending strong op, to keep its invocation order", () => {
    const r = new Driven({ id: 0 });
    r.deliver(remoteReq(1, 1, 10, 'kv.put', { key: 'a', value: 1 })); // weak
    r.deliver(remoteReq(1, 2, 11, 'kv.put', { key: 'a', value: 2 }, true)); // strong, pending
    r.deliver(remoteReq(1, 3, 12, 'kv.put', { key: 'a', value: 3 })); // weak, after it
    r.invoke(20, 'kv.put', { key: 'b', value: 1 });
    r.invoke(21, 'kv.put', { key: 'c', value: 1 }, true);
    const mine = r.rbCast[r.rbCast.length - 1]!;
    expect(mine.causalCtx!.toJSON()).toEqual({ '0': [1], '1': [1] });
  });

  it("includes its own pending strong ops: CAB keeps each origin's strong ops in order", () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'a', value: 1 }, true);
    r.invoke(11, 'kv.put', { key: 'a', value: 2 });
    r.invoke(12, 'kv.put', { key: 'a', value: 3 }, true);
    expect(r.rbCast[2]!.causalCtx!.toJSON()).toEqual({ '0': [2] });
    expect(r.cabCast).toHaveLength(2);
  });

  it('ignores duplicate RB-deliveries, also after the op is final', () => {
    const r = new Driven({ id: 0 });
    const w = remoteReq(1, 1, 10, 'kv.increment', { key: 'n', by: 1 });
    r.deliver(w);
    r.deliver(w);
    expect(r.replica.metrics.executions).toBe(1);
    r.invoke(20, 'kv.put', { key: 'm', value: 0 }, true);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.replica.stats().finalized).toBe(2);
    r.deliver(w);
    expect(r.replica.stats().tentative).toBe(0);
    expect(r.replica.state().get('n')).toBe(1);
  });

  it('re-sends a tentative view of a strong op only when its result changed', () => {
    const r = new Driven({ id: 0 });
    const tag = r.invoke(20, 'kv.increment', { key: 'x' }, true);
    r.deliver(remoteReq(1, 1, 10, 'kv.put', { key: 'unrelated', value: 1 }));
    r.deliver(remoteReq(1, 2, 11, 'kv.put', { key: 'x', value: 10 }));
    expect(r.responsesFor(tag).map((x) => x.outcome)).toEqual([
      { ok: true, value: 1 },
      { ok: true, value: 11 },
    ]);
  });
});

describe('replica: strong no-ops and memory', () => {
  it('issues a strong no-op when tentative work waits longer than the interval, and only one', () => {
    const r = new Driven({ id: 0, noopIntervalMs: 50 });
    r.tick(0);
    r.invoke(10, 'kv.put', { key: 'a', value: 1 });
    r.tick(40);
    expect(r.cabCast).toHaveLength(0);
    r.tick(70);
    expect(r.cabCast).toHaveLength(1);
    expect(r.rbCast[1]!.op).toBe(NOOP_OP);
    r.tick(200);
    expect(r.cabCast).toHaveLength(1);
    r.deliverStrong(r.cabCast[0]!);
    expect(r.replica.stats()).toMatchObject({ tentative: 0, committed: 2 });
    expect(r.replica.metrics.noopsIssued).toBe(1);
    r.tick(400);
    expect(r.cabCast).toHaveLength(1); // nothing pending: no further no-ops
  });

  it('keeps the version store bounded under a steady mix with regular strong ops', () => {
    const r = new Driven({ id: 0 });
    const peaks: number[] = [];
    let t = 0;
    for (let round = 0; round < 2000; round++) {
      for (let i = 0; i < 9; i++)
        r.invoke((t += 0.01), 'kv.increment', { key: `k${(round * 9 + i) % 10}` });
      r.invoke((t += 0.01), 'kv.increment', { key: 'k0' }, true);
      r.deliverStrong(r.cabCast[r.cabCast.length - 1]!);
      if (round % 500 === 499) peaks.push(r.replica.stats().peakVersions);
    }
    const s = r.replica.stats();
    expect(s.tentative).toBe(0);
    expect(s.finalized).toBe(20_000);
    expect(s.versions).toBe(10); // one final version per key
    // The peak stays what one round needs, however many rounds ran.
    expect(new Set(peaks).size).toBe(1);
    expect(peaks[0]).toBeLessThanOrEqual(20);
    expect(r.replica.metrics.executionRatio()).toBe(1);
    expect(r.replica.metrics.accuracy()).toBe(1);
  });
});

describe('replica: what a session saw of this replica (session guarantees)', () => {
  /** Invokes a session's op; returns its event number. */
  function invoke(r: Driven, at: number, session: string | null, seq: number, strong = false) {
    const stamp = session === null ? {} : { session: { id: session, seq, acked: 0 } };
    r.handle(
      r.replica.invoke(T0 + at, {
        op: 'kv.increment',
        args: { key: `k${seq}` },
        strong,
        tag: 1000 + at,
        ...stamp,
      }),
    );
    return r.rbCast.length > 0 ? r.rbCast[r.rbCast.length - 1]!.id.eventNo : 0;
  }

  it("leaves out the session's own tentative ops at the top, and nothing below another's op", () => {
    const r = new Driven({ id: 0 });
    expect(invoke(r, 1, 'other', 1)).toBe(1);
    expect(invoke(r, 2, 'mine', 1)).toBe(2);
    expect(invoke(r, 3, 'mine', 2, true)).toBe(3);
    // Its own ops 2 and 3 it will resubmit if it moves; op 1 (another session's) it may have seen.
    expect(r.replica.lastOpNotPendingOf('mine')).toBe(1);
    // The other session saw ops 2 and 3 (they are not its own).
    expect(r.replica.lastOpNotPendingOf('other')).toBe(3);
    // An op without a session above the session's ops: everything counts again.
    invoke(r, 4, null, 1);
    expect(r.replica.lastOpNotPendingOf('mine')).toBe(4);
    invoke(r, 5, 'mine', 3);
    expect(r.replica.lastOpNotPendingOf('mine')).toBe(4);
  });

  it('counts a committed own op: the client may have forgotten it, so it is not resubmitted', () => {
    const r = new Driven({ id: 0 });
    invoke(r, 1, 'mine', 1);
    const strong = invoke(r, 2, 'mine', 2, true);
    expect(r.replica.lastOpNotPendingOf('mine')).toBe(0);
    r.deliverStrong({ replica: 0, eventNo: strong });
    expect(r.commits).toHaveLength(1);
    expect(r.replica.lastOpNotPendingOf('mine')).toBe(2);
  });
});
