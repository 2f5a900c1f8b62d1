import { describe, expect, it } from 'vitest';
import { checkMinorityPartitions } from '../../src/sim/partition-checker.js';
import type { RunRecord } from '../../src/sim/run-record.js';
import { emptyRecord, invoke, ok } from './record-builder.js';

/** Replicas 0, 1, 2; from 100 to 500 ms replica 0 is cut off from 1 and 2. */
function split(): RunRecord {
  const record = emptyRecord();
  record.splits.push({ start: 100, end: 500, groups: [[0], [1, 2]] });
  return record;
}

/** A strong put at `replica`, invoked at `at`, answered tentatively 1 ms later and stably at `stableAt`. */
function strongPut(record: RunRecord, replica: number, at: number, stableAt: number): void {
  invoke(
    record,
    replica,
    'kv.put',
    { key: 'k', value: at },
    {
      strong: true,
      at,
      id: `r${replica}#${at}`,
      responses: [
        { at: at + 1, level: 'tentative', outcome: ok(null) },
        { at: stableAt, level: 'stable', outcome: ok(null) },
      ],
    },
  );
}

const put = (replica: number, at: number) =>
  `(partition) strong kv.put({"key":"k","value":${at}}) r${replica}#${at} at replica ${replica} got a stable response while its replica was in a minority`;

describe('the partition checker', () => {
  it('accepts tentative answers in a minority and stable ones after the heal or in the majority', () => {
    const record = split();
    strongPut(record, 0, 200, 600);
    strongPut(record, 1, 200, 300);
    invoke(
      record,
      0,
      'kv.put',
      { key: 'w', value: 1 },
      {
        at: 250,
        id: 'r0#250',
        responses: [{ at: 251, level: 'tentative', outcome: ok(null) }],
      },
    );
    expect(checkMinorityPartitions(record)).toEqual([]);
  });

  it('rejects a stable answer in a minority, and a weak op left without a tentative one', () => {
    const record = split();
    strongPut(record, 0, 200, 300);
    invoke(record, 0, 'kv.put', { key: 'w', value: 1 }, { at: 250 });
    expect(checkMinorityPartitions(record)).toEqual([
      put(0, 200),
      '(partition) weak kv.put({"key":"w","value":1}) read-only at replica 0 got no tentative response while its replica was in a minority',
    ]);
  });

  it('bounds how long a replica cut off into a minority may hold speculation', () => {
    const record = split();
    record.holds.push({ replica: 0, start: 120, end: 400 });
    expect(checkMinorityPartitions(record, true, 400)).toEqual([]);
    expect(checkMinorityPartitions(record, true, 200)).toEqual([
      '(partition) replica 0 held speculation 300 ms into a minority partition (at most 200): its clients got no tentative answers',
    ]);
  });

  it('without speculation, rejects any answer to an ordered op in a minority before the heal', () => {
    const record = split();
    strongPut(record, 0, 200, 600);
    expect(checkMinorityPartitions(record, false)).toEqual([
      '(partition) strong kv.put({"key":"k","value":200}) r0#200 at replica 0 got a response from a replica that does not speculate while it was in a minority',
    ]);
  });

  describe('across a membership change: replica 2 removed between 150 and 400 ms', () => {
    function removal(): RunRecord {
      const record = split();
      record.memberships.push(
        { at: 150, members: null },
        { at: 200, members: null, decided: [0, 1] },
        { at: 400, members: [0, 1] },
      );
      return record;
    }

    it('holds a group that is short of a majority of both configurations to it throughout', () => {
      // Replica 0 alone: a minority of {0, 1, 2} and of {0, 1}.
      const record = removal();
      strongPut(record, 0, 180, 300);
      expect(checkMinorityPartitions(record)).toEqual([put(0, 180)]);
    });

    it('lets a group commit while it is a majority of either configuration, not after', () => {
      // Replicas 1 and 2: a majority of {0, 1, 2}, which some replica may have in force until
      // 400 ms; after that only {0, 1}, of which they are a minority.
      const record = removal();
      strongPut(record, 1, 180, 300);
      strongPut(record, 1, 420, 450);
      expect(checkMinorityPartitions(record)).toEqual([put(1, 420)]);
    });

    it('ends the split for a group when a replica started during it links the groups', () => {
      // Replica 3 is added at 200 ms and started: no link of it is cut, and replica 0 reaches
      // the others through it (its ops are gossiped, cast and decided through 3).
      const record = removal();
      record.replicas = 4;
      record.splits[0]!.bridgedAt = 200;
      strongPut(record, 0, 180, 190);
      strongPut(record, 0, 185, 300);
      expect(checkMinorityPartitions(record)).toEqual([put(0, 180)]);
    });
  });
});
