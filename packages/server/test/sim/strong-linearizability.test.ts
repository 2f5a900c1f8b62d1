import type { JsonValue } from '@creek/app';
import { describe, expect, it } from 'vitest';
import { duplicateError } from '@creek/replica/core/session-dedupe.js';
import { objectHistories } from '../../src/sim/object-histories.js';
import type { RunRecord } from '../../src/sim/run-record.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { checkLinearizability } from '../../src/sim/strong-linearizability.js';
import { simApp } from '../../src/sim/workload.js';
import { addReq, commit, emptyRecord, invoke, ok } from './record-builder.js';

/**
 * A run whose ops each have a session number of their own (session `s<replica>`, number = event
 * number), committed at replica 0 in the order `committed` lists them.
 */
interface Op {
  readonly id: string;
  readonly op: string;
  readonly args: JsonValue;
  readonly strong?: boolean;
  /** Invoked at `at`; a stable answer `value` at `answeredAt` (none: no answer came). */
  readonly at: number;
  readonly answeredAt?: number;
  readonly value?: JsonValue;
  /** Its Req's timestamp (default: its event number). */
  readonly ts?: number;
}

function run(ops: readonly Op[], committed: readonly string[]): RunRecord {
  const record = emptyRecord();
  for (const o of ops) {
    const [replica, eventNo] = o.id.slice(1).split('#').map(Number) as [number, number];
    const session = { id: `s${replica}`, seq: eventNo, acked: eventNo };
    addReq(record, o.id, o.op, o.args, {
      strong: o.strong === true,
      session,
      ...(o.ts === undefined ? {} : { ts: o.ts }),
    });
    invoke(record, replica, o.op, o.args, {
      strong: o.strong === true,
      at: o.at,
      id: o.id,
      session,
      responses:
        o.answeredAt === undefined
          ? []
          : [{ at: o.answeredAt, level: 'stable', outcome: ok(o.value ?? null) }],
    });
  }
  if (committed.length > 0) commit(record, 0, ...committed);
  return record;
}

const put = (id: string, key: string, value: number, at: number, answeredAt?: number): Op => ({
  id,
  op: 'kv.put',
  args: { key, value },
  strong: answeredAt !== undefined,
  at,
  ...(answeredAt === undefined ? {} : { answeredAt, value: null }),
});
const get = (id: string, key: string, value: JsonValue, at: number, answeredAt: number): Op => ({
  id,
  op: 'kv.get',
  args: { key },
  strong: true,
  at,
  answeredAt,
  value,
});

describe('linearizability over every op of a run, key by key', () => {
  it('accepts strong answers that a sequential order of all the ops explains', () => {
    const record = run(
      [put('r0#1', 'k/0', 5, 10, 20), get('r1#1', 'k/0', 5, 30, 40)],
      ['r0#1', 'r1#1'],
    );
    expect(checkLinearizability(record, simApp)).toEqual([]);
  });

  it('rejects a stale strong read, naming the key and only its ops', () => {
    const record = run(
      [
        put('r0#1', 'k/0', 5, 10, 20),
        put('r0#2', 'k/1', 7, 10, 20),
        get('r1#1', 'k/1', null, 30, 40),
        get('r1#2', 'k/0', 5, 30, 40),
      ],
      ['r0#1', 'r0#2', 'r1#1', 'r1#2'],
    );
    const violations = checkLinearizability(record, simApp);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(
      /^\(linearizability\) key k\/1, 2 ops: not linearizable: .*strong kv\.get\(\{"key":"k\/1"\}\) r1#1 at replica 1 .*cannot be placed: it returned null, but from state \{"k\/1":7\} it would return 7/,
    );
  });

  it('takes the effect of a weak op that committed, and of none that did not', () => {
    // A weak put of 9, committed, between the strong put of 5 and the read.
    const weak = put('r2#1', 'k/0', 9, 12);
    const ops = [put('r0#1', 'k/0', 5, 10, 20), weak, get('r1#1', 'k/0', 9, 30, 40)];
    expect(checkLinearizability(run(ops, ['r0#1', 'r2#1', 'r1#1']), simApp)).toEqual([]);
    // Never committed in a run that lost no disk: it never took effect, so 9 was never there.
    expect(checkLinearizability(run(ops, ['r0#1', 'r1#1']), simApp)).toEqual([
      expect.stringMatching(/^\(linearizability\) key k\/0, 2 ops: not linearizable/),
    ]);
  });

  it('holds a weak op to have taken effect by the first stable answer after it in the committed order', () => {
    // The weak put of 9 is committed before a strong op on another key, answered at 5 ms: it
    // took effect by then, so before the strong put of 5 (from 10 ms), and a later read cannot
    // see 9. Anywhere after its invocation, it could.
    const ops = [
      put('r2#1', 'k/0', 9, 1),
      put('r2#2', 'k/1', 1, 2, 5),
      put('r0#1', 'k/0', 5, 10, 20),
      get('r1#1', 'k/0', 9, 30, 40),
    ];
    expect(checkLinearizability(run(ops, ['r2#1', 'r2#2', 'r0#1', 'r1#1']), simApp)).toEqual([
      expect.stringMatching(/^\(linearizability\) key k\/0, 3 ops: not linearizable/),
    ]);
    // Committed after the strong put (its stable answer at 20 bounds nothing before it): fine.
    expect(checkLinearizability(run(ops, ['r2#2', 'r0#1', 'r2#1', 'r1#1']), simApp)).toEqual([]);
  });

  it('checks ops across keys together where one op spans them (a transfer, a sum)', () => {
    const ops: Op[] = [
      { id: 'r0#1', op: 'kv.increment', args: { key: 'acct/0', by: 10 }, at: 1 },
      {
        id: 'r0#2',
        op: 'transfer',
        args: { from: 'acct/0', to: 'acct/1', amount: 4 },
        strong: true,
        at: 10,
        answeredAt: 20,
        value: 6,
      },
      {
        id: 'r1#1',
        op: 'sum',
        args: { prefix: 'acct/' },
        strong: true,
        at: 30,
        answeredAt: 40,
        value: 10,
      },
      {
        id: 'r1#2',
        op: 'kv.get',
        args: { key: 'acct/1' },
        strong: true,
        at: 30,
        answeredAt: 40,
        value: 0,
      },
    ];
    const violations = checkLinearizability(run(ops, ['r0#1', 'r0#2', 'r1#1', 'r1#2']), simApp);
    // The sum is right; the read of acct/1 after the transfer is not.
    expect(violations).toEqual([
      expect.stringMatching(
        /^\(linearizability\) key acct\/0, key acct\/1, prefix acct\/, 4 ops: not linearizable: .*r1#2 at replica 1/,
      ),
    ]);
  });

  it('checks a shared context’s ops on its frontier alone, apart from the keys of the ops in it', () => {
    const ops: Op[] = [
      put('r0#1', 'k/0', 5, 10, 20),
      {
        id: 'r0#2',
        op: 'creek.context.merge',
        args: { id: 'doc', seen: [[0, 1]] },
        strong: true,
        at: 21,
        answeredAt: 30,
        value: null,
      },
      {
        id: 'r1#1',
        op: 'creek.context.frontier',
        args: { id: 'doc' },
        strong: true,
        at: 31,
        answeredAt: 40,
        value: [],
      },
      get('r1#2', 'k/0', 5, 41, 50),
    ];
    const record = run(ops, ['r0#1', 'r0#2', 'r1#1', 'r1#2']);
    expect(objectHistories(record, simApp).map((o) => `${o.name}: ${o.ops.length}`)).toEqual([
      'key k/0: 2',
      'key ~context/doc: 2',
    ]);
    // A frontier read that misses an acknowledged merge is named on the frontier's own history.
    expect(checkLinearizability(record, simApp)).toEqual([
      expect.stringMatching(
        /^\(linearizability\) key ~context\/doc, 2 ops: not linearizable: .*it returned \[\], but .* it would return \[\[0,1\]\]/,
      ),
    ]);
  });

  it('counts a resubmitted op once, whichever copy answered', () => {
    // One strong increment submitted at replica 0 and again at replica 1 (same session and
    // number): both copies committed, the second applies nothing and answers as the first.
    const record = emptyRecord();
    const session = { id: 's0', seq: 1, acked: 1 };
    for (const [replica, text, at] of [
      [0, 'r0#1', 10],
      [1, 'r1#1', 15],
    ] as const) {
      addReq(record, text, 'kv.increment', { key: 'k/0', by: 1 }, { strong: true, session });
      invoke(
        record,
        replica,
        'kv.increment',
        { key: 'k/0', by: 1 },
        {
          strong: true,
          at,
          id: text,
          session,
          responses: [{ at: 30, level: 'stable', outcome: ok(1) }],
        },
      );
    }
    addReq(record, 'r2#1', 'kv.get', { key: 'k/0' }, { strong: true });
    invoke(
      record,
      2,
      'kv.get',
      { key: 'k/0' },
      {
        strong: true,
        at: 40,
        id: 'r2#1',
        responses: [{ at: 50, level: 'stable', outcome: ok(1) }],
      },
    );
    commit(record, 0, 'r0#1', 'r1#1', 'r2#1');
    expect(checkLinearizability(record, simApp)).toEqual([]);
  });

  it('takes a resubmitted op from the copy that committed when another was dropped with its origin', () => {
    // A weak put taken by replica 0, whose incarnation closed without it: its client is told the
    // copy was not applied and resubmits at replica 1, where it commits. A strong read after it
    // sees the put. The dropped copy says nothing of the op; the other copy is the op.
    const record = emptyRecord();
    const session = { id: 's0', seq: 1, acked: 1 };
    addReq(record, 'r1#1', 'kv.put', { key: 'k/0', value: 7 }, { session });
    invoke(
      record,
      0,
      'kv.put',
      { key: 'k/0', value: 7 },
      {
        at: 10,
        id: 'r0#1',
        session,
        responses: [
          { at: 11, level: 'tentative', outcome: ok(null) },
          { at: 60, level: 'failed', outcome: { ok: false, error: 'not applied: closed' } },
        ],
      },
    );
    invoke(
      record,
      1,
      'kv.put',
      { key: 'k/0', value: 7 },
      {
        at: 40,
        id: 'r1#1',
        session,
        responses: [{ at: 41, level: 'tentative', outcome: ok(null) }],
      },
    );
    const read = get('r2#1', 'k/0', 7, 80, 90);
    addReq(record, read.id, read.op, read.args, { strong: true });
    invoke(record, 2, read.op, read.args, {
      strong: true,
      at: read.at,
      id: read.id,
      responses: [{ at: 90, level: 'stable', outcome: ok(7) }],
    });
    commit(record, 0, 'r1#1', 'r2#1');
    const [object] = objectHistories(record, simApp);
    expect(object!.ops.find((h) => h.op === 'kv.put')).toMatchObject({
      invokedAt: 10,
      tookEffect: true,
    });
    expect(checkLinearizability(record, simApp)).toEqual([]);
  });

  it('takes no answer from a copy refused because its op was already settled', () => {
    // A weak put's first copy commits unanswered (its replica went quiet); its client abandons it
    // and also resubmits it. The abandon finds it ran and settles it, so the resubmission, later
    // in the order, is refused as a duplicate: that refusal is not what the put returned.
    const record = emptyRecord();
    const session = { id: 's0', seq: 1, acked: 1 };
    for (const [replica, text, at, responses] of [
      [0, 'r0#1', 10, []],
      [
        1,
        'r1#1',
        40,
        [{ at: 70, level: 'stable', outcome: { ok: false, error: duplicateError(1) } }],
      ],
    ] as const) {
      addReq(record, text, 'kv.put', { key: 'k/0', value: 7 }, { session });
      invoke(
        record,
        replica,
        'kv.put',
        { key: 'k/0', value: 7 },
        {
          at,
          id: text,
          session,
          responses: [...responses],
        },
      );
    }
    const read = get('r2#1', 'k/0', 7, 30, 50);
    addReq(record, read.id, read.op, read.args, { strong: true });
    invoke(record, 2, read.op, read.args, {
      strong: true,
      at: read.at,
      id: read.id,
      responses: [{ at: 50, level: 'stable', outcome: ok(7) }],
    });
    commit(record, 0, 'r0#1', 'r2#1', 'r1#1');
    const [object] = objectHistories(record, simApp);
    expect(object!.ops.find((h) => h.op === 'kv.put')).toMatchObject({
      completed: null,
      tookEffect: true,
    });
    expect(checkLinearizability(record, simApp)).toEqual([]);
  });

  it.each([
    // A copy dropped with its closed origin, the op resubmitted and committed elsewhere.
    { seed: 1969410133, replicas: 5, faults: 'all', network: 'uniform' },
    // Copies refused as duplicates after an abandon settled their op.
    { seed: 1534, replicas: 3, faults: 'all', network: 'mix' },
    { seed: 1734, replicas: 5, faults: 'reconfig', network: 'uniform' },
  ] as const)('explains seed $seed ($replicas replicas, $faults, $network)', (config) => {
    const result = runSimulation(config);
    expect(result.violations).toEqual([]);
  });

  it('places a resubmitted strong read where the copy whose answer its client took read', () => {
    // A strong read by read index (no op id) submitted at replica 1 and again at replica 2 (same
    // session and number). Replica 2's copy read at position 1 (after the put of 1) and answered
    // first, at 30: that is the client's answer. Replica 1's copy read at position 2 (after the
    // put of 2) and answered later. The read goes just before position 1, not 2: there the
    // committed order explains its answer (WAN seeds 55 and 141 with 3 replicas, without
    // speculation, put it at the other copy's position, and the search gave up on 319 ops).
    const record = emptyRecord();
    const session = { id: 's1', seq: 1, acked: 1 };
    for (const [text, value, at, answeredAt] of [
      ['r0#1', 1, 1, 5],
      ['r0#2', 2, 50, 60],
    ] as const) {
      addReq(record, text, 'kv.put', { key: 'k/0', value }, { strong: true });
      invoke(
        record,
        0,
        'kv.put',
        { key: 'k/0', value },
        {
          strong: true,
          at,
          id: text,
          responses: [{ at: answeredAt, level: 'stable', outcome: ok(null) }],
        },
      );
    }
    for (const [replica, at, answeredAt, value, position] of [
      [1, 10, 70, 2, 2],
      [2, 20, 30, 1, 1],
    ] as const)
      invoke(
        record,
        replica,
        'kv.get',
        { key: 'k/0' },
        {
          strong: true,
          at,
          session,
          responses: [{ at: answeredAt, level: 'stable', outcome: ok(value), position }],
        },
      );
    commit(record, 0, 'r0#1', 'r0#2');
    const [object] = objectHistories(record, simApp);
    const read = object!.ops.find((h) => h.op === 'kv.get')!;
    expect(read).toMatchObject({
      invokedAt: 10,
      completed: { at: 30, outcome: ok(1) },
      order: 0.5,
    });
    expect(checkLinearizability(record, simApp)).toEqual([]);
  });

  it('splits a snapshot of a prefix from the key it writes, as its result says', () => {
    // A weak snapshotTotal writes the sum of acct/ (its result in the committed order, 10) into
    // k/0: the read of k/0 sees it, and the history of k/0 holds no account.
    const ops: Op[] = [
      { id: 'r0#1', op: 'kv.increment', args: { key: 'acct/0', by: 10 }, at: 1 },
      { id: 'r0#2', op: 'snapshotTotal', args: { prefix: 'acct/', into: 'k/0' }, at: 5 },
      get('r1#1', 'k/0', 10, 30, 40),
      get('r1#2', 'k/0', 11, 30, 40),
    ];
    const violations = checkLinearizability(run(ops, ['r0#1', 'r0#2', 'r1#1', 'r1#2']), simApp);
    expect(violations).toEqual([
      expect.stringMatching(/^\(linearizability\) key k\/0, 3 ops: not linearizable: .*r1#2/),
    ]);
  });
});
