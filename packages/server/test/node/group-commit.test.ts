import { describe, expect, it } from 'vitest';
import type { HostRecord } from '@creek/replica/host/records.js';
import { GroupCommit, HOLD_MAX_RECORDS, HOLD_MS } from '../../src/node/group-commit.js';
import { ManualTimers } from './manual-timers.js';

/** A write only its identity matters for here. */
const write = (n: number): HostRecord =>
  ({ layer: 'cab', record: { kind: 'promise', ballot: n } }) as HostRecord;

function setup() {
  const batches: HostRecord[][] = [];
  const timers = new ManualTimers();
  const gc = new GroupCommit((records) => batches.push([...records]), timers);
  return { gc, batches, timers };
}

describe('group commit', () => {
  it('a turn that lets something leave commits its writes before it does', () => {
    const { gc, batches, timers } = setup();
    gc.add(write(1));
    gc.add(write(2));
    gc.endTurn(true);
    expect(batches).toEqual([[write(1), write(2)]]);
    expect(gc.pending).toBe(false);
    expect(timers.pending).toBeNull();
  });

  it('a turn that lets nothing leave holds its writes; the next that does commits them first, in one transaction', () => {
    const { gc, batches, timers } = setup();
    gc.add(write(1));
    gc.endTurn(false);
    gc.add(write(2));
    gc.endTurn(false);
    expect(batches).toEqual([]);
    expect(gc.pending).toBe(true);
    gc.add(write(3));
    gc.endTurn(true);
    expect(batches).toEqual([[write(1), write(2), write(3)]]);
    // The deadline went with them.
    expect(timers.pending).toBeNull();
  });

  it(`held writes commit ${HOLD_MS} ms later when no turn lets anything leave`, () => {
    const { gc, batches, timers } = setup();
    gc.add(write(1));
    gc.endTurn(false);
    expect(timers.pending?.ms).toBe(HOLD_MS);
    gc.add(write(2));
    gc.endTurn(false);
    timers.fire();
    expect(batches).toEqual([[write(1), write(2)]]);
    // Nothing more to commit: a later quiet turn without writes sets no timer.
    gc.endTurn(false);
    expect(timers.pending).toBeNull();
  });

  it(`past ${HOLD_MAX_RECORDS} held writes, a quiet turn commits them`, () => {
    const { gc, batches } = setup();
    for (let i = 0; i < HOLD_MAX_RECORDS - 1; i++) gc.add(write(i));
    gc.endTurn(false);
    expect(batches).toEqual([]);
    gc.add(write(HOLD_MAX_RECORDS));
    gc.endTurn(false);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(HOLD_MAX_RECORDS);
  });

  it('commit() (the replica stops) commits what waits and cancels the deadline', () => {
    const { gc, batches, timers } = setup();
    gc.add(write(1));
    gc.endTurn(false);
    gc.commit();
    expect(batches).toEqual([[write(1)]]);
    expect(timers.pending).toBeNull();
    gc.commit();
    expect(batches).toHaveLength(1);
  });

  it('a turn without writes commits nothing, leaving or not', () => {
    const { gc, batches, timers } = setup();
    gc.endTurn(true);
    gc.endTurn(false);
    expect(batches).toEqual([]);
    expect(timers.pending).toBeNull();
  });
});
