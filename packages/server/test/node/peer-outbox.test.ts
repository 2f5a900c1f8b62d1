import { describe, expect, it } from 'vitest';
import type { Req } from '@creek/replica/core/types.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { PeerOutbox } from '../../src/node/peer-outbox.js';
import { ManualTimers } from './manual-timers.js';

/** A Req that only needs its id and level for the outbox. */
function req(eventNo: number, strong = false): Req {
  return {
    ts: eventNo,
    id: { replica: 0, eventNo },
    op: 'kv.put',
    args: { key: 'k', value: eventNo },
    strong,
    causalCtx: null,
  };
}
const push = (...reqs: Req[]): PeerMessage => ({ kind: 'gossip', msg: { kind: 'push', reqs } });
const paxos: PeerMessage = { kind: 'paxos', msg: { kind: 'heartbeat', ballot: 1 } as never };

function setup(lingerMs = 2) {
  const sent: { to: number; msgs: PeerMessage[] }[] = [];
  const timers = new ManualTimers();
  const outbox = new PeerOutbox((to, msgs) => sent.push({ to, msgs: [...msgs] }), lingerMs, timers);
  /** Event numbers of the pushed Reqs, or 'paxos', in the order peer `to` got them. */
  const got = (to: number): (number | 'paxos')[] =>
    sent
      .filter((s) => s.to === to)
      .flatMap((s) =>
        s.msgs.flatMap((m): (number | 'paxos')[] =>
          m.kind === 'gossip' && m.msg.kind === 'push'
            ? m.msg.reqs.map((r) => r.id.eventNo)
            : ['paxos'],
        ),
      );
  return { sent, timers, outbox, got };
}

describe('PeerOutbox: pushes and lazy copies linger, everything else goes at once and in order', () => {
  it('holds turns that only push weak Reqs and sends them together when the linger ends', () => {
    const { sent, timers, outbox, got } = setup();
    outbox.add(1, push(req(1)), true);
    outbox.add(2, push(req(1)), true);
    outbox.flushTurn();
    outbox.add(1, push(req(2)), true);
    outbox.flushTurn();
    expect(sent).toEqual([]);
    expect(timers.pending?.ms).toBe(2);
    timers.fire();
    expect(got(1)).toEqual([1, 2]);
    expect(got(2)).toEqual([1]);
    // One frame per peer for both turns.
    expect(sent.filter((s) => s.to === 1)).toHaveLength(1);
  });

  it('holds a push the layer marks lazy, a strong Req in it too (gossip decides, not the outbox)', () => {
    const { timers, outbox, got } = setup();
    outbox.add(1, push(req(1)), true);
    outbox.flushTurn();
    outbox.add(1, push(req(2), req(3, true)), true);
    outbox.flushTurn();
    expect(got(1)).toEqual([]);
    timers.fire();
    expect(got(1)).toEqual([1, 2, 3]);
  });

  it('holds Paxos copies the layer marks lazy; an urgent one to that peer takes them along, ahead', () => {
    const { timers, outbox, got } = setup();
    outbox.add(1, push(req(1)), true);
    outbox.add(1, paxos, true);
    outbox.add(2, paxos, true);
    outbox.flushTurn();
    expect(got(1)).toEqual([]);
    expect(got(2)).toEqual([]);
    outbox.add(1, push(req(2)), true);
    outbox.add(1, paxos);
    outbox.flushTurn();
    expect(got(1)).toEqual([1, 'paxos', 2, 'paxos']);
    // Peer 2's lazy copy still lingers, and the timer with it.
    expect(got(2)).toEqual([]);
    expect(timers.pending).not.toBeNull();
    timers.fire();
    expect(got(2)).toEqual(['paxos']);
  });

  it('sends a turn at once when any message in it for that peer is urgent', () => {
    const { timers, outbox, got } = setup();
    outbox.add(1, paxos, true);
    outbox.add(1, paxos);
    outbox.add(1, push(req(1)), true);
    outbox.flushTurn();
    expect(got(1)).toEqual(['paxos', 'paxos', 1]);
    expect(timers.pending).toBeNull();
  });

  it('lets Paxos and anti-entropy through at once, after what was held, and clears the timer', () => {
    const { timers, outbox, got } = setup();
    outbox.add(1, push(req(1)), true);
    outbox.flushTurn();
    outbox.add(1, paxos);
    outbox.flushTurn();
    expect(got(1)).toEqual([1, 'paxos']);
    expect(timers.pending).toBeNull();
  });

  it('sends everything at once with a linger of 0, and on release', () => {
    const a = setup(0);
    a.outbox.add(1, push(req(1)), true);
    a.outbox.flushTurn();
    expect(a.got(1)).toEqual([1]);
    const b = setup();
    b.outbox.add(1, push(req(1)), true);
    b.outbox.flushTurn();
    b.outbox.release();
    expect(b.got(1)).toEqual([1]);
    expect(b.timers.pending).toBeNull();
  });

  it('sends first, with what lingers ahead of it, the batch of a peer that gets a message that may not wait', () => {
    const { sent, timers, outbox, got } = setup();
    const first = (m: PeerMessage) => m.kind === 'paxos';
    outbox.add(1, push(req(1)), true);
    outbox.add(2, push(req(1)), true);
    outbox.flushTurn();
    // This turn: peer 1 gets a Paxos message and a push; peer 2 a lazy copy of the Paxos message
    // (outside the fast quorum); peer 3 only a push, which may not wait.
    outbox.add(1, push(req(2)), true);
    outbox.add(1, paxos);
    outbox.add(2, paxos, true);
    outbox.add(3, push(req(2)));
    expect(outbox.hasFirst(first)).toBe(true);
    expect(outbox.flushFirst(first)).toBe(true);
    // Peer 1's batch, in order, after what it held; the lazy copy and peer 3 wait for the turn.
    expect(got(1)).toEqual([1, 2, 'paxos']);
    expect(got(2)).toEqual([]);
    expect(got(3)).toEqual([]);
    expect(outbox.hasFirst(first)).toBe(false);
    expect(outbox.flushFirst(first)).toBe(false);
    outbox.flushTurn();
    expect(got(1)).toEqual([1, 2, 'paxos']);
    expect(got(3)).toEqual([2]);
    expect(got(2)).toEqual([]);
    timers.fire();
    expect(got(2)).toEqual([1, 'paxos']);
    expect(sent.filter((s) => s.to === 1)).toHaveLength(1);
  });

  it('clears the linger timer when sending first leaves nothing held', () => {
    const { timers, outbox, got } = setup();
    outbox.add(1, push(req(1)), true);
    outbox.flushTurn();
    expect(timers.pending).not.toBeNull();
    outbox.add(1, paxos);
    outbox.flushFirst((m) => m.kind === 'paxos');
    expect(got(1)).toEqual([1, 'paxos']);
    expect(timers.pending).toBeNull();
  });
});
