import { describe, expect, it } from 'vitest';
import { checkTentativeResponses } from '../../src/sim/tentative-answers.js';
import { simApp } from '../../src/sim/workload.js';
import { addReq, commit, emptyRecord, invoke, ok } from './record-builder.js';

/**
 * Replica 0 has committed r1#1 (a = 1); tentatively it holds r2#1 (a = 50, timestamp 5) and its
 * own r0#1 (a + 10, timestamp 6, answered at 2 ms), then takes r0#2 (a + 100, timestamp 8) at
 * 3 ms. In Creek's order that is 1, 50, 60, 160.
 */
function replica0(answer: number, tentativeBefore: string[], committedBefore = 1) {
  const record = emptyRecord();
  addReq(record, 'r1#1', 'kv.put', { key: 'a', value: 1 }, { ts: 1 });
  addReq(record, 'r2#1', 'kv.put', { key: 'a', value: 50 }, { ts: 5 });
  addReq(record, 'r0#1', 'kv.increment', { key: 'a', by: 10 }, { ts: 6 });
  addReq(record, 'r0#2', 'kv.increment', { key: 'a', by: 100 }, { ts: 8 });
  addReq(record, 'r2#3', 'kv.put', { key: 'a', value: 7 }, { ts: 20 });
  commit(record, 0, 'r1#1');
  invoke(
    record,
    0,
    'kv.increment',
    { key: 'a', by: 10 },
    {
      at: 1,
      id: 'r0#1',
      responses: [
        {
          at: 2,
          level: 'tentative',
          outcome: ok(60),
          trace: { committedBefore: 1, tentativeBefore: ['r2#1'] },
        },
      ],
    },
  );
  invoke(
    record,
    0,
    'kv.increment',
    { key: 'a', by: 100 },
    {
      at: 3,
      id: 'r0#2',
      responses: [
        {
          at: 4,
          level: 'tentative',
          outcome: ok(answer),
          trace: { committedBefore, tentativeBefore },
        },
      ],
    },
  );
  return record;
}

const self = 'weak kv.increment({"key":"a","by":100}) r0#2 at replica 0';

describe('(e) tentative answers against the order the checker reconstructs', () => {
  it('accepts an answer that is the serial execution of Creek’s order', () => {
    expect(checkTentativeResponses(replica0(160, ['r2#1', 'r0#1']), simApp)).toEqual([]);
  });

  it('rejects an answer that is not', () => {
    expect(checkTentativeResponses(replica0(170, ['r2#1', 'r0#1']), simApp)).toEqual([
      `(e) ${self} tentative 170, serial execution of its order gives 160`,
    ]);
  });

  it('rejects an answer given on a tentative order out of timestamp order, though it fits that order', () => {
    // 1 + 10, then 50, then + 100: what a replica that misplaced r2#1 would answer and report.
    expect(checkTentativeResponses(replica0(150, ['r0#1', 'r2#1']), simApp)).toEqual([
      `(e) ${self}: its tentative order has r0#1 before r2#1, which their timestamps put the other way`,
    ]);
  });

  it('rejects an answer given after an op that its timestamp puts after it', () => {
    expect(checkTentativeResponses(replica0(107, ['r2#1', 'r0#1', 'r2#3']), simApp)).toEqual([
      `(e) ${self}: executed after r2#3, which its timestamp puts after it`,
    ]);
  });

  it('rejects an answer given on an order without an op its own replica had answered before', () => {
    expect(checkTentativeResponses(replica0(150, ['r2#1']), simApp)).toEqual([
      `(e) ${self}: executed on an order without weak kv.increment({"key":"a","by":10}) r0#1 at replica 0, which its replica had answered before this op was invoked`,
    ]);
  });

  it('rejects an order that holds a committed op as tentative, or an op the run never had', () => {
    expect(checkTentativeResponses(replica0(160, ['r1#1', 'r2#1', 'r0#1']), simApp)).toEqual([
      `(e) ${self}: its order holds r1#1 as tentative, which its replica had committed`,
    ]);
    expect(checkTentativeResponses(replica0(160, ['r2#1', 'r2#2', 'r0#1']), simApp)).toEqual([
      `(e) ${self}: its order holds r2#2, of which the run has no Req`,
    ]);
  });

  it('rejects an answer given after more commits than its replica made', () => {
    expect(checkTentativeResponses(replica0(160, ['r2#1', 'r0#1'], 2), simApp)).toEqual([
      `(e) ${self}: executed after 2 commits, replica has 1`,
    ]);
  });
});
