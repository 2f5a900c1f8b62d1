import { ABANDON_OP } from '@creek/app';
import { describe, expect, it } from 'vitest';
import { checkConvergence, checkExactlyOnce } from '../../src/sim/convergence-checkers.js';
import { simApp } from '../../src/sim/workload.js';
import { addReq, commit, emptyRecord, invoke, ok, settle } from './record-builder.js';

/** Two replicas that committed a put, an increment and a strong transfer, in that order. */
function converged() {
  const record = emptyRecord(2);
  addReq(record, 'r0#1', 'kv.put', { key: 'acct/0', value: 10 });
  addReq(record, 'r1#1', 'kv.increment', { key: 'acct/1', by: 5 });
  addReq(
    record,
    'r0#2',
    'transfer',
    { from: 'acct/0', to: 'acct/1', amount: 3 },
    { strong: true, ctx: ['r0#1', 'r1#1'] },
  );
  for (const r of [0, 1]) commit(record, r, 'r0#1', 'r1#1', 'r0#2');
  return record;
}

describe('(b) no committed op lost: convergence after quiescence', () => {
  it('accepts replicas with one committed list and the serial execution’s state', () => {
    const record = converged();
    settle(record);
    expect(checkConvergence(record, simApp)).toEqual([]);
  });

  it('rejects a replica whose state lost a committed op’s effect', () => {
    const record = converged();
    settle(record, (r, state) => {
      if (r === 1) state['acct/1'] = 5;
    });
    const violations = checkConvergence(record, simApp);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(
      /^\(b\) replica 1 state .* differs from the serial execution of the committed order/,
    );
  });

  it('rejects a replica whose reported digest is not its state’s', () => {
    const record = converged();
    settle(record);
    record.finals[0] = { ...record.finals[0]!, hash: 'f00' };
    expect(checkConvergence(record, simApp)).toEqual([
      expect.stringMatching(/^\(b\) replica 0 reports state digest f00, but its state's is /),
    ]);
  });

  it('rejects a replica that committed fewer ops, and an op sent but never committed', () => {
    const record = converged();
    record.commits[1] = [];
    addReq(record, 'r1#2', 'kv.put', { key: 'k/0', value: 1 });
    settle(record);
    expect(checkConvergence(record, simApp)).toContain(
      '(b) replica 1 committed 0 ops, replica 0 3',
    );
    expect(checkConvergence(record, simApp)).toContain(
      '(b) op 1.2 was gossiped but never committed',
    );
  });

  it('leaves out the ops of an origin that died with them, and a lost replica', () => {
    const record = converged();
    addReq(record, 'r1#2', 'kv.put', { key: 'k/0', value: 1 });
    record.deadOrigins.push(1);
    record.lost.push(1);
    record.commits[1] = [];
    settle(record);
    expect(checkConvergence(record, simApp)).toEqual([]);
  });

  it('rejects tentative ops left after quiescence', () => {
    const record = converged();
    settle(record);
    record.finals[0] = { ...record.finals[0]!, tentative: 2 };
    expect(checkConvergence(record, simApp)).toEqual([
      '(b) replica 0 still has 2 tentative ops after quiescence',
    ]);
  });
});

describe('(f) exactly once across replicas', () => {
  /** A probe `once/s0/1` submitted at replica 0 and again at replica 1 (same session number). */
  function probe() {
    const record = emptyRecord(2);
    const session = { id: 's0', seq: 1, acked: 1 };
    addReq(record, 'r0#1', 'kv.increment', { key: 'once/s0/1', by: 1 }, { session });
    addReq(record, 'r1#1', 'kv.increment', { key: 'once/s0/1', by: 1 }, { session });
    return record;
  }

  it('accepts a probe committed twice and applied once', () => {
    const record = probe();
    for (const r of [0, 1]) commit(record, r, 'r0#1', 'r1#1');
    settle(record);
    expect(checkExactlyOnce(record)).toEqual([]);
  });

  it('rejects a probe applied twice', () => {
    const record = probe();
    for (const r of [0, 1]) commit(record, r, 'r0#1', 'r1#1');
    settle(record, (_, state) => {
      state['once/s0/1'] = 2;
    });
    expect(checkExactlyOnce(record)).toEqual([
      '(f) replica 0: exactly-once probe once/s0/1 = 2, not 1',
      '(f) replica 1: exactly-once probe once/s0/1 = 2, not 1',
    ]);
  });

  it('rejects a committed probe that was never applied', () => {
    const record = probe();
    for (const r of [0, 1]) commit(record, r, 'r0#1');
    settle(record, (_, state) => {
      delete state['once/s0/1'];
    });
    expect(checkExactlyOnce(record)).toEqual([
      '(f) replica 0: exactly-once probe once/s0/1 was committed but never applied',
      '(f) replica 1: exactly-once probe once/s0/1 was committed but never applied',
    ]);
  });

  it('rejects a probe applied after its client was told it was abandoned', () => {
    const record = probe();
    const abandon = { id: 's0', seq: 2, acked: 1 };
    addReq(record, 'r1#2', ABANDON_OP, { seq: 1 }, { strong: true, session: abandon });
    for (const r of [0, 1]) commit(record, r, 'r0#1', 'r1#2');
    invoke(
      record,
      0,
      'kv.increment',
      { key: 'once/s0/1' },
      { at: 1, session: { id: 's0', seq: 1, acked: 1 } },
    );
    invoke(
      record,
      1,
      ABANDON_OP,
      { seq: 1 },
      {
        strong: true,
        at: 2,
        id: 'r1#2',
        session: abandon,
        responses: [{ at: 3, level: 'stable', outcome: ok({ abandoned: true }) }],
      },
    );
    settle(record);
    expect(checkExactlyOnce(record)).toEqual([
      '(f) replica 0: exactly-once probe once/s0/1 = 1, though its op was abandoned (r1#2)',
      '(f) replica 1: exactly-once probe once/s0/1 = 1, though its op was abandoned (r1#2)',
    ]);
  });
});
