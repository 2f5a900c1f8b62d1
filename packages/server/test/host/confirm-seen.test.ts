import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import { connectionsHarness } from './connections-harness.js';

/**
 * A confirmation says what its replica had (`seen`), as a view does: a strong op's tentative view
 * counts none of the session's uncommitted ops (the session resubmits those when it moves), so
 * once the op is confirmed the session must learn that the replica now has it, or it could fail
 * over to a replica without its confirmed write (read-your-writes).
 */
describe('confirmations', () => {
  it('carry what the replica has once the op committed, when it changed', () => {
    const invoked: InvokeRequest[] = [];
    const has = { now: [3, 0, 0] };
    const { cc, frames: framesOf } = connectionsHarness({
      invoke: (r) => invoked.push(r),
      seen: () => has.now,
      received: () => true,
    });
    const frames = (): ServerFrame[] => framesOf('c');
    cc.open('c');
    cc.frame('c', { t: 'hello', version: PROTOCOL_VERSION, session: 'session-under-test' });
    const invoke = (opId: string, seq: number) =>
      cc.frame('c', { t: 'invoke', opId, op: 'kv.put', args: {}, level: 'strong', seq });
    const answer = (r: InvokeRequest, level: 'tentative' | 'stable', eventNo: number) =>
      cc.respond({
        type: 'respond',
        tag: r.tag,
        id: { replica: 0, eventNo },
        level,
        outcome: { ok: true, value: null },
      });
    invoke('a', 1);
    answer(invoked[0]!, 'tentative', 4);
    cc.afterTurn();
    // The replica's own component stops below the session's uncommitted op: 3.
    expect(frames().at(-1)).toMatchObject({ t: 'view', opId: 'a', seen: [3, 0, 0] });
    has.now = [4, 0, 0]; // committed: the op counts now
    answer(invoked[0]!, 'stable', 4);
    cc.afterTurn();
    expect(frames().at(-1)).toEqual({ t: 'confirm', opId: 'a', seen: [4, 0, 0] });
    // Two confirmed in one turn, with nothing new to say: no `seen`.
    invoke('b', 2);
    invoke('c', 3);
    answer(invoked[1]!, 'tentative', 5);
    answer(invoked[2]!, 'tentative', 6);
    cc.afterTurn();
    answer(invoked[1]!, 'stable', 5);
    answer(invoked[2]!, 'stable', 6);
    cc.afterTurn();
    expect(frames().at(-1)).toEqual({ t: 'confirms', opIds: ['b', 'c'] });
  });
});
