import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@creek/app';
import { checkHistory } from '../src/check.js';
import { agreesWithReference, listModel } from '../src/list-model.js';
import type { History, Level, LostReplica, Outcome, RecordedOp } from '../src/history.js';

/**
 * The checks of a recorded history, on histories written by hand: a clean one passes, and each
 * planted violation — a lost acknowledged write, a stale strong read, an op applied twice, an op
 * applied though its client was told it was not, a lost committed weak op, a queue item delivered
 * twice or lost — is caught and named. Weak ops lost with a wiped replica are counted apart.
 */

let n = 0;
function op(
  kind: RecordedOp['kind'],
  args: Record<string, JsonValue>,
  level: Level,
  invokedAt: number,
  outcome: Outcome | null,
  committed: RecordedOp['committed'] = outcome?.type === 'ok' ? true : false,
  final = false,
): RecordedOp {
  const name = {
    append: 'list.append',
    read: 'list.read',
    enqueue: 'queue.enqueue',
    dequeue: 'queue.dequeue',
  }[kind];
  return {
    id: `c0w0/${n++}`,
    kind,
    op: name,
    args,
    level,
    invokedAt,
    outcome,
    committed,
    ...(final ? { final: true as const } : {}),
  };
}
const ok = (at: number, value: JsonValue, replica = 0): Outcome => ({
  type: 'ok',
  at,
  value,
  replica,
});
const indeterminate = (at: number): Outcome => ({ type: 'indeterminate', at, error: 'timeout' });
const failed = (at: number): Outcome => ({ type: 'failed', at, error: 'unavailable' });

const append = (
  value: string,
  level: Level,
  t: number,
  outcome: Outcome | null,
  committed?: RecordedOp['committed'],
) => op('append', { key: 'k', value }, level, t, outcome, committed);
const read = (level: Level, t: number, value: string[]) =>
  op('read', { key: 'k' }, level, t, ok(t + 1, value));
const finalRead = (t: number, value: string[]) =>
  op('read', { key: 'k' }, 'strong', t, ok(t + 1, value), true, true);
const history = (ops: RecordedOp[], lost: LostReplica[] = []): History => ({ ops, lost });

describe('checkHistory on lists', () => {
  it('passes a clean history, settling indeterminate ops by the final state', () => {
    const v = checkHistory(
      history([
        append('a', 'strong', 0, ok(10, 1)),
        append('b', 'weak', 5, ok(6, 2), true),
        read('strong', 20, ['a', 'b']),
        append('c', 'strong', 30, indeterminate(40)),
        append('d', 'strong', 31, indeterminate(41)),
        read('weak', 50, ['a', 'b', 'c']),
        finalRead(100, ['a', 'b', 'c']),
      ]),
    );
    expect(v.violations).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.counts).toMatchObject({ resolvedTookEffect: 1, resolvedNotTaken: 1, objects: 1 });
  });

  it('catches an acknowledged strong append missing from the final state', () => {
    const v = checkHistory(history([append('a', 'strong', 0, ok(10, 1)), finalRead(100, [])]));
    expect(v.ok).toBe(false);
    expect(v.violations.join('\n')).toContain('was acknowledged, and is not in the final state');
    expect(v.counts).toMatchObject({ acknowledgedLost: 1, objects: 1, linearizable: 0 });
    expect(v.violations.join('\n')).toContain('not linearizable');
  });

  it('catches a stale strong read: an append acknowledged before the read began, not seen by it', () => {
    const v = checkHistory(
      history([append('a', 'strong', 0, ok(10, 1)), read('strong', 20, []), finalRead(100, ['a'])]),
    );
    expect(v.ok).toBe(false);
    expect(v.violations).toHaveLength(1);
    expect(v.violations[0]).toMatch(/^list k: not linearizable: .*list\.read.*returned \[\]/);
  });

  it('catches an append applied twice, and a value nobody appended', () => {
    const v = checkHistory(
      history([append('a', 'weak', 0, ok(1, 1), true), finalRead(100, ['a', 'a', 'z'])]),
    );
    expect(v.violations.join('\n')).toContain('took effect 2 times (positions 0, 1)');
    expect(v.violations.join('\n')).toContain("holds 'z', which no op appended");
  });

  it('catches an op applied though its client was told it never would be', () => {
    const v = checkHistory(history([append('a', 'strong', 0, failed(5)), finalRead(100, ['a'])]));
    expect(v.violations.join('\n')).toContain(
      'took effect, though its client was told it never would',
    );
  });

  it('catches a committed weak append that is lost, and a weak one acknowledged by a replica never lost', () => {
    const v = checkHistory(
      history([
        append('a', 'weak', 0, ok(1, 1), true),
        append('b', 'weak', 2, ok(3, 1, 1), false),
        finalRead(100, []),
      ]),
    );
    expect(v.violations.join('\n')).toContain('was committed, and is not in the final state');
    expect(v.violations.join('\n')).toContain(
      'was acknowledged by replica 1, whose data was never lost',
    );
  });

  it('counts apart a weak append acknowledged only by a replica wiped afterwards', () => {
    const v = checkHistory(
      history(
        [append('a', 'weak', 0, ok(1, 1, 2), false), finalRead(100, [])],
        [{ replica: 2, at: 50, how: 'wipe' }],
      ),
    );
    expect(v.violations).toEqual([]);
    expect(v.counts.lostWithReplica).toBe(1);
  });

  it('catches a weak read of a value nobody appended', () => {
    const v = checkHistory(history([read('weak', 0, ['ghost']), finalRead(100, [])]));
    expect(v.violations.join('\n')).toContain("read 'ghost', which no op appended");
  });

  it('says so when a list has no final read', () => {
    const v = checkHistory(history([append('a', 'strong', 0, ok(10, 1))]));
    expect(v.violations).toEqual([
      'list k: no final read answered, so nothing about it can be checked',
    ]);
  });
});

describe('checkHistory on queues', () => {
  const enqueue = (
    item: string,
    level: Level,
    t: number,
    outcome: Outcome | null,
    committed?: RecordedOp['committed'],
  ) => op('enqueue', { queue: 'q', item }, level, t, outcome, committed);
  const dequeue = (t: number, outcome: Outcome | null, final = false) =>
    op('dequeue', { queue: 'q' }, 'strong', t, outcome, outcome?.type === 'ok', final);
  const got = (at: number, item: string, position: number, remaining: number) =>
    ok(at, { item, position, remaining });

  it('passes a clean history with its final drain', () => {
    const v = checkHistory(
      history([
        enqueue('x', 'strong', 0, ok(5, { position: 0 })),
        enqueue('y', 'weak', 6, ok(7, { position: 1 }), true),
        dequeue(10, got(12, 'x', 0, 1)),
        dequeue(100, got(101, 'y', 1, 0), true),
        dequeue(102, ok(103, null), true),
      ]),
    );
    expect(v.violations).toEqual([]);
  });

  it('catches an item delivered twice', () => {
    const v = checkHistory(
      history([
        enqueue('x', 'strong', 0, ok(5, { position: 0 })),
        dequeue(10, got(12, 'x', 0, 0)),
        dequeue(20, got(22, 'x', 0, 0)),
        dequeue(100, ok(101, null), true),
      ]),
    );
    expect(v.violations.join('\n')).toContain('was dequeued 2 times');
    expect(v.violations.join('\n')).toContain('not linearizable');
  });

  it('catches an acknowledged item that no dequeue ever saw, with no dequeue unseen', () => {
    const v = checkHistory(
      history([
        enqueue('x', 'strong', 0, ok(5, { position: 0 })),
        dequeue(100, ok(101, null), true),
      ]),
    );
    expect(v.violations.join('\n')).toContain(
      '1 acknowledged items were never dequeued, and only 0 dequeues went unseen',
    );
  });

  it('lets an indeterminate dequeue explain an item no answered dequeue saw', () => {
    const v = checkHistory(
      history([
        enqueue('x', 'strong', 0, ok(5, { position: 0 })),
        dequeue(10, indeterminate(20)),
        dequeue(100, ok(101, null), true),
      ]),
    );
    expect(v.violations).toEqual([]);
  });
});

describe('the list model', () => {
  it('agrees with the reference interpreter on a final order, step by step', () => {
    expect(agreesWithReference('k', ['a', 'b', 'c'])).toBeNull();
    expect(agreesWithReference('k', [])).toBeNull();
  });

  it('has no state for a list that is not a prefix of the final one', () => {
    const model = listModel(['a', 'b']);
    const after = model.step(model.init, 'list.append', { key: 'k', value: 'b' });
    expect(model.step(after.next, 'list.read', { key: 'k' }).outcome).toEqual({
      ok: true,
      value: null,
    });
  });
});
