import { describe, expect, it } from 'vitest';
import { NOT_APPLIED_CLOSED } from '@creek/replica/core/closing-origins.js';
import { checkStableResponses } from '../../src/sim/stable-answers.js';
import { simApp } from '../../src/sim/workload.js';
import { addReq, commit, emptyRecord, invoke } from './record-builder.js';

/**
 * Checker (c) on failed answers: a replica answers a waiting client with a failure only when its
 * op was dropped by its origin's close (core/closing-origins.ts), and such an op is committed
 * nowhere; any other failure, or a "dropped" op that committed after all, is a violation.
 */
describe('checker (c) on failed answers', () => {
  function record(error: string, committed: boolean) {
    const r = emptyRecord();
    addReq(r, 'r1#1', 'kv.put', { key: 'a', value: 1 });
    addReq(r, 'r2#1', 'kv.put', { key: 'a', value: 2 });
    for (const replica of [0, 1, 2])
      commit(r, replica, ...(committed ? ['r1#1', 'r2#1'] : ['r1#1']));
    invoke(
      r,
      2,
      'kv.put',
      { key: 'a', value: 2 },
      {
        at: 1,
        id: 'r2#1',
        responses: [{ at: 5, level: 'failed', outcome: { ok: false, error } }],
      },
    );
    return r;
  }

  it('accepts the answer of an op dropped by its origin’s close, committed nowhere', () => {
    expect(checkStableResponses(record(`op 2#1 ${NOT_APPLIED_CLOSED}`, false), simApp)).toEqual([]);
  });

  it('names an op answered as dropped that is committed', () => {
    expect(checkStableResponses(record(`op 2#1 ${NOT_APPLIED_CLOSED}`, true), simApp)).toEqual([
      expect.stringMatching(/^\(c\) .* was answered as dropped by a close but is committed$/),
    ]);
  });

  it('names any other failure', () => {
    expect(checkStableResponses(record('no such op', false), simApp)).toEqual([
      expect.stringMatching(/^\(c\) .* was rejected: /),
    ]);
  });
});
