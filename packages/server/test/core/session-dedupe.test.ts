import { describe, expect, it } from 'vitest';
import { defineApp, type Tx, type JsonValue } from '@creek/app';
import { runOperation } from '@creek/replica/core/run-operation.js';
import {
  abandonedError,
  abandonOrderError,
  outcomeKey,
  sessionKey,
  sessionOpsAt,
} from '@creek/replica/core/session-dedupe.js';
import { ReferenceInterpreter } from '../../src/sim/reference-interpreter.js';
import type { ExecutionResult, SessionStamp } from '@creek/replica/core/types.js';

/** A serial store that applies each result's writes: enough to see what runOnce decides. */
class Store {
  readonly data = new Map<string, JsonValue>();
  run(op: string, args: JsonValue, session?: SessionStamp): ExecutionResult {
    const app = defineApp({});
    const snapshot = {
      get: (k: string) => this.data.get(k),
      scan: (p: string) => [...this.data].filter(([k]) => k.startsWith(p)).sort(),
    };
    const job = { jobId: 1, op, args, ts: 1, id: { replica: 0, eventNo: 1 }, snapshot };
    const r = runOperation(app.lookup(op), session === undefined ? job : { ...job, session });
    for (const [k, v] of r.writes) {
      if (v === undefined) this.data.delete(k);
      else this.data.set(k, v);
    }
    return r;
  }
}

const stamp = (seq: number, acked = seq): SessionStamp => ({ id: 'sess', seq, acked });

describe('exactly-once for session ops (session-dedupe.ts)', () => {
  it('applies the first submission and answers a resubmission with its outcome, applying nothing', () => {
    const s = new Store();
    const first = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1));
    const again = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1));
    expect(first.outcome).toEqual({ ok: true, value: 1 });
    expect(again.outcome).toEqual({ ok: true, value: 1 });
    expect(again.writes).toEqual([]);
    expect(s.data.get('n')).toBe(1);
  });

  it('records a failure too, so a resubmission fails the same way without running', () => {
    const s = new Store();
    s.data.set('n', 'text');
    const first = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1));
    s.data.set('n', 5);
    const again = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1));
    expect(first.outcome.ok).toBe(false);
    expect(again.outcome).toEqual(first.outcome);
    expect(s.data.get('n')).toBe(5);
  });

  it('forgets outcomes the client acknowledged and refuses a late resubmission of them', () => {
    const s = new Store();
    s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1));
    s.run('kv.increment', { key: 'n', by: 1 }, stamp(2, 1));
    expect(s.data.has(outcomeKey('sess', 1))).toBe(true);
    // Op 3 says ops 1 and 2 are answered and committed.
    s.run('kv.increment', { key: 'n', by: 1 }, stamp(3, 3));
    expect(s.data.get(sessionKey('sess'))).toEqual({ acked: 3 });
    expect(s.data.has(outcomeKey('sess', 1))).toBe(false);
    expect(s.data.has(outcomeKey('sess', 2))).toBe(false);
    expect(s.data.has(outcomeKey('sess', 3))).toBe(true);
    const late = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1));
    expect(late.outcome.ok).toBe(false);
    expect(late.writes).toEqual([]);
    expect(s.data.get('n')).toBe(3);
  });

  it('never lets acked run past the op carrying it (an op is not answered before it runs)', () => {
    const s = new Store();
    s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 99));
    expect(s.data.get(sessionKey('sess'))).toEqual({ acked: 1 });
    expect(s.data.get('n')).toBe(1);
  });

  it('refuses a different op under a number already used', () => {
    const s = new Store();
    s.run('kv.increment', { key: 'n', by: 1 }, stamp(1));
    const other = s.run('kv.put', { key: 'm', value: 1 }, stamp(1));
    expect(other.outcome).toMatchObject({ ok: false });
    expect(s.data.has('m')).toBe(false);
  });

  it('keeps its bookkeeping out of the app: reserved keys cannot be touched and scans skip them', () => {
    const s = new Store();
    s.run('kv.put', { key: 'a', value: 1 }, stamp(1));
    const put = s.run('kv.put', { key: sessionKey('sess'), value: 1 });
    expect(put.outcome).toMatchObject({ ok: false, error: expect.stringContaining('reserved') });
    const app = defineApp({});
    const scan = runOperation(
      {
        args: app.lookup('kv.get')!.args,
        run: (tx: Tx) => tx.scan('').map(([k]: [string, JsonValue]) => k),
      } as never,
      {
        jobId: 1,
        op: 'scan',
        args: null,
        ts: 1,
        id: null,
        snapshot: {
          get: (k) => s.data.get(k),
          scan: (p) => [...s.data].filter(([k]) => k.startsWith(p)).sort(),
        },
      },
    );
    expect(scan.outcome).toEqual({ ok: true, value: ['a'] });
  });

  it('runs read-only ops every time: a repeated read changes nothing', () => {
    const s = new Store();
    s.data.set('k', 7);
    expect(s.run('kv.get', { key: 'k' }, stamp(1)).outcome).toEqual({ ok: true, value: 7 });
    expect(s.run('kv.get', { key: 'k' }, stamp(1)).writes).toEqual([]);
    expect(s.data.has(outcomeKey('sess', 1))).toBe(false);
  });

  describe('creek.abandon: an op whose fate is unknown, abandoned for good unless it ran first', () => {
    it('abandons an op not yet run: a copy of it ordered later does not run', () => {
      const s = new Store();
      const a = s.run('creek.abandon', { seq: 1 }, stamp(2, 1));
      expect(a.outcome).toEqual({ ok: true, value: { abandoned: true } });
      const late = s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1));
      expect(late.outcome).toEqual({ ok: false, error: abandonedError(1) });
      expect(late.writes).toEqual([]);
      expect(s.data.has('n')).toBe(false);
      // The abandon resubmitted decides the same, once.
      expect(s.run('creek.abandon', { seq: 1 }, stamp(2, 1)).outcome).toEqual(a.outcome);
      // Once the client acknowledged past both, a copy still later is refused by `acked`.
      s.run('kv.put', { key: 'x', value: 1 }, stamp(3, 3));
      expect(s.data.has(outcomeKey('sess', 1))).toBe(false);
      expect(s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1)).outcome.ok).toBe(false);
      expect(s.data.has('n')).toBe(false);
    });

    it('does not abandon an op that ran first, and answers with its outcome', () => {
      const s = new Store();
      s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1));
      const a = s.run('creek.abandon', { seq: 1 }, stamp(2, 1));
      expect(a.outcome).toEqual({
        ok: true,
        value: { abandoned: false, outcome: { ok: true, value: 1 } },
      });
      expect(s.data.get('n')).toBe(1);
      // A resubmission of the op still answers with its outcome, and applies nothing.
      expect(s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1)).outcome).toEqual({
        ok: true,
        value: 1,
      });
      expect(s.data.get('n')).toBe(1);
    });

    it('says an acknowledged op was not abandoned, and refuses to abandon a later op or outside a session', () => {
      const s = new Store();
      s.run('kv.increment', { key: 'n', by: 1 }, stamp(1, 1));
      s.run('kv.increment', { key: 'n', by: 1 }, stamp(2, 2));
      expect(s.run('creek.abandon', { seq: 1 }, stamp(3, 2)).outcome).toEqual({
        ok: true,
        value: { abandoned: false, outcome: null },
      });
      expect(s.run('creek.abandon', { seq: 5 }, stamp(4, 2)).outcome).toEqual({
        ok: false,
        error: abandonOrderError(5, 4),
      });
      const outside = s.run('creek.abandon', { seq: 1 });
      expect(outside.outcome.ok).toBe(false);
      expect(outside.writes).toEqual([]);
    });

    it('decides as the reference interpreter does, in either order', () => {
      for (const abandonFirst of [true, false]) {
        const s = new Store();
        const ref = new ReferenceInterpreter(defineApp({}));
        const ops: { op: string; args: JsonValue; session: SessionStamp }[] = [
          { op: 'kv.increment', args: { key: 'n', by: 1 }, session: stamp(1, 1) },
          { op: 'creek.abandon', args: { seq: 1 }, session: stamp(2, 1) },
        ];
        if (abandonFirst) ops.reverse();
        for (const o of ops) {
          const mine = s.run(o.op, o.args, o.session).outcome;
          const theirs = ref.apply({ ...o, ts: 1, id: null });
          expect(mine).toEqual(theirs);
        }
        expect(s.data.get('n')).toBe(abandonFirst ? undefined : 1);
      }
    });
  });
});

describe("which of a session's ops a state holds (sessionOpsAt, for live queries)", () => {
  const reader = (s: Store) => ({
    get: (k: string) => s.data.get(k),
    scan: (p: string) => [...s.data].filter(([k]) => k.startsWith(p)).sort(),
  });

  it('nothing of a session that never ran an op', () => {
    expect(sessionOpsAt(reader(new Store()), 'sess', 10)).toEqual({
      upTo: 0,
      missing: [],
      failed: [],
    });
  });

  it('every op up to the highest recorded, the unrecorded ones missing, the failed ones with why', () => {
    const s = new Store();
    s.data.set('text', 'not a number');
    s.run('kv.put', { key: 'a', value: 1 }, stamp(1, 1));
    // 2 was a read (never recorded); 3 did not reach this state yet; 4 and 10 did, 10 failing.
    s.run('kv.put', { key: 'b', value: 1 }, stamp(4, 1));
    s.run('kv.increment', { key: 'text', by: 1 }, stamp(10, 1));
    const held = sessionOpsAt(reader(s), 'sess', 10);
    expect(held.upTo).toBe(10);
    // Numerically, though the records scan in key order ('10' before '4').
    expect(held.missing).toEqual([2, 3, 5, 6, 7, 8, 9]);
    expect(held.failed.map((f) => [f.seq, f.op])).toEqual([[10, 'kv.increment']]);
    expect(held.failed[0]!.error).toMatch(/number/);
  });

  it('ops the session acknowledged are held though their records are gone; an abandoned one is held, failed', () => {
    const s = new Store();
    s.run('kv.put', { key: 'a', value: 1 }, stamp(1, 1));
    s.run('kv.put', { key: 'a', value: 2 }, stamp(2, 1));
    s.run('creek.abandon', { seq: 4 }, stamp(5, 3));
    const held = sessionOpsAt(reader(s), 'sess', 10);
    expect(s.data.has(outcomeKey('sess', 1))).toBe(false);
    expect(held.upTo).toBe(5);
    expect(held.missing).toEqual([3]); // never ran here
    expect(held.failed.map((f) => f.seq)).toEqual([4]);
    expect(held.failed[0]!.error).toBe(abandonedError(4));
  });

  it('lists at most maxListed missing: past that, upTo stops early (it never claims an op it lacks)', () => {
    const s = new Store();
    s.run('kv.put', { key: 'a', value: 1 }, stamp(1, 1));
    s.run('kv.put', { key: 'a', value: 2 }, stamp(5, 1));
    s.run('kv.put', { key: 'a', value: 3 }, stamp(20, 1));
    expect(sessionOpsAt(reader(s), 'sess', 4)).toEqual({ upTo: 5, missing: [2, 3, 4], failed: [] });
  });
});
