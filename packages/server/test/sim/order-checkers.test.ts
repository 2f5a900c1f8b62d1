import { describe, expect, it } from 'vitest';
import { checkCommittedPrefixes, checkProgramOrder } from '../../src/sim/order-checkers.js';
import { addReq, commit, emptyRecord, id } from './record-builder.js';

/** Three weak ops and a strong one that stabilizes the first two, then a strong op alone. */
function ordered() {
  const record = emptyRecord();
  addReq(record, 'r0#1', 'kv.put', { key: 'a', value: 1 });
  addReq(record, 'r1#1', 'kv.put', { key: 'b', value: 2 });
  addReq(record, 'r0#2', 'kv.get', { key: 'a' }, { strong: true, ctx: ['r0#1', 'r1#1'] });
  addReq(record, 'r1#2', 'kv.increment', { key: 'c', by: 1 }, { strong: true, ctx: [] });
  return record;
}

describe('(a) agreement: committed lists are prefixes of one another', () => {
  it('accepts lists that are prefixes of the longest, however their records group them', () => {
    const record = ordered();
    commit(record, 0, 'r0#1', 'r1#1', 'r0#2');
    commit(record, 0, 'r1#2');
    commit(record, 1, 'r0#1', 'r1#1', 'r0#2');
    expect(checkCommittedPrefixes(record)).toEqual([]);
  });

  it('rejects two replicas that committed different ops at one position, naming both', () => {
    const record = ordered();
    commit(record, 0, 'r0#1', 'r1#1', 'r0#2');
    commit(record, 1, 'r1#1', 'r0#1', 'r0#2');
    expect(checkCommittedPrefixes(record)).toEqual([
      '(a) replica 1 committed r1#1 at position 0, another replica r0#1',
    ]);
  });

  it('rejects an op committed twice', () => {
    const record = ordered();
    commit(record, 2, 'r1#2');
    commit(record, 2, 'r1#2');
    expect(checkCommittedPrefixes(record)).toEqual(['(a) replica 2 committed r1#2 twice']);
  });

  it('holds the list of a lost disk to it too', () => {
    const record = ordered();
    commit(record, 0, 'r0#1', 'r1#1', 'r0#2');
    record.retired.push({ replica: 2, disk: 0, commits: [[id('r1#2')]], lostReqs: new Map() });
    expect(checkCommittedPrefixes(record)).toEqual([
      '(a) replica 2 (disk 0, lost) committed r1#2 at position 0, another replica r0#1',
    ]);
  });
});

describe('(d) invocation order and causal contexts', () => {
  it('accepts commit records that end with a strong op whose causal context holds the rest', () => {
    const record = ordered();
    commit(record, 0, 'r0#1', 'r1#1', 'r0#2');
    commit(record, 0, 'r1#2');
    expect(checkProgramOrder(record)).toEqual([]);
  });

  it("rejects an origin's op committed before one its replica invoked earlier", () => {
    const record = emptyRecord();
    addReq(record, 'r0#1', 'kv.put', { key: 'a', value: 1 }, { strong: true });
    addReq(record, 'r0#2', 'kv.put', { key: 'a', value: 2 }, { strong: true });
    commit(record, 0, 'r0#2');
    commit(record, 0, 'r0#1');
    expect(checkProgramOrder(record)).toEqual([
      '(d) r0#1 committed after r0#2, which its replica invoked later',
    ]);
  });

  it('rejects a weak op stabilized outside the causal context of the strong op', () => {
    const record = ordered();
    addReq(record, 'r2#1', 'kv.put', { key: 'e', value: 5 });
    commit(record, 0, 'r0#1', 'r1#1', 'r2#1', 'r0#2');
    expect(checkProgramOrder(record)).toEqual([
      '(d) replica 0: r2#1 stabilized by r0#2 outside its causal context',
    ]);
  });

  it('rejects a strong op stabilized by another, as if it were weak', () => {
    const record = ordered();
    commit(record, 1, 'r1#2', 'r0#2');
    expect(checkProgramOrder(record)).toContain(
      '(d) replica 1: r1#2 stabilized with r0#2 but is not a weak op',
    );
  });
});
