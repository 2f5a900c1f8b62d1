import { describe, expect, it } from 'vitest';
import { Cluster } from './harness.js';

/**
 * Quorum reads (cab/quorum-reads.ts): a replica takes a strong read's index from a majority's
 * frontiers, asked directly, instead of from the leader's read index.
 */
const SETTLE_MS = 200;
const CONVERGE_MS = 5_000;

function started(n: number, unsafe = false): Cluster {
  const c = new Cluster({
    n,
    paxos: { quorumReads: true, ...(unsafe ? { unsafeQuorumReadSingleAnswer: true } : {}) },
  });
  c.advance(SETTLE_MS);
  return c;
}

/** Node `at` asks for a read index; runs until it has one (or the limit). */
function read(c: Cluster, at: number, key: number, limitMs = CONVERGE_MS): number | undefined {
  c.apply(at, c.node(at).requestRead(key));
  c.advanceUntil(() => c.readIndexes[at]!.has(key), limitMs);
  return c.readIndexes[at]!.get(key);
}

/** The instance `node` decided the cast `eventNo` of `origin` in. */
function instanceOf(c: Cluster, node: number, origin: number, eventNo: number): number {
  return c.decisions[node]!.find((d) =>
    d.value.some((x) => 'id' in x && x.id.replica === origin && x.id.eventNo === eventNo),
  )!.instance;
}

describe('quorum reads', () => {
  it('a follower gets an index past every decided instance, asking no leader and spending no instance', () => {
    const c = started(5);
    for (let k = 0; k < 5; k++) c.cast(1);
    c.advance(100);
    const last = c.cast(1);
    c.advance(100);
    const decided = instanceOf(c, 3, 1, last.id.eventNo);
    const proposedBefore = c.node(0).counters.instancesProposed;
    const asked: string[] = [];
    c.drop = (from, to, msg) => {
      if (from === 3) asked.push(`${msg.type}>${to}`);
      return false;
    };
    expect(read(c, 3, 7)).toBeGreaterThan(decided);
    // Every member was asked for its frontier; the leader for no read index.
    expect(asked.filter((a) => a.startsWith('frontierAsk>')).sort()).toEqual([
      'frontierAsk>0',
      'frontierAsk>1',
      'frontierAsk>2',
      'frontierAsk>4',
    ]);
    expect(asked.some((a) => a.startsWith('readIndex>'))).toBe(false);
    expect(c.node(0).counters.instancesProposed).toBe(proposedBefore);
  });

  it('counts a write that a majority accepted but this replica has not heard decided', () => {
    const c = started(3);
    c.cast(1);
    c.advance(100);
    // Replica 2 hears none of the next write (its 2a, the 2b, the decision): 0 and 1 decide it.
    c.drop = (from, to) => to === 2 && from !== 2;
    const w = c.cast(1);
    c.advance(100);
    const write = instanceOf(c, 0, 1, w.id.eventNo);
    expect(c.decisions[2]!.some((d) => d.instance === write)).toBe(false);
    // It reads: its own frontier is below the write, but a majority's is past it. The answers
    // reach it, the rest stays cut until it has asked.
    c.drop = (from, to, msg) => to === 2 && from !== 2 && msg.type !== 'frontier';
    c.apply(2, c.node(2).requestRead(9));
    c.advance(50);
    expect(c.readIndexes[2]!.has(9)).toBe(false); // waits to learn the decisions below the index
    c.drop = null;
    c.advanceUntil(() => c.readIndexes[2]!.has(9), CONVERGE_MS);
    expect(c.readIndexes[2]!.get(9)).toBeGreaterThan(write);
  });

  it('a replica in a minority gets no index; healed, it gets one past the majority’s writes', () => {
    const c = started(5);
    c.cast(1);
    c.advance(100);
    // Replicas 3 and 4 are cut off from the rest; the majority decides a write.
    const minority = new Set([3, 4]);
    c.drop = (from, to) => minority.has(from) !== minority.has(to);
    const w = c.cast(1);
    c.advance(300);
    const write = instanceOf(c, 0, 1, w.id.eventNo);
    expect(read(c, 4, 1, 500)).toBeUndefined();
    c.drop = null;
    c.advanceUntil(() => c.readIndexes[4]!.has(1), CONVERGE_MS);
    expect(c.readIndexes[4]!.get(1)).toBeGreaterThan(write);
  });

  it('planted bug: one answer taken for a majority gives a minority a stale index', () => {
    const c = started(5, true);
    c.cast(1);
    c.advance(100);
    const minority = new Set([3, 4]);
    c.drop = (from, to) => minority.has(from) !== minority.has(to);
    const w = c.cast(1);
    c.advance(300);
    const write = instanceOf(c, 0, 1, w.id.eventNo);
    // Its own frontier answers at once, below the write the majority decided: a stale read.
    expect(read(c, 4, 1, 10)).toBeLessThanOrEqual(write);
  });
});
