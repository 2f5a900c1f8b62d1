import { describe, expect, it } from 'vitest';
import { opKey } from '@creek/replica/core/op-id.js';
import type { CastId } from '@creek/replica/cab/messages.js';
import { Cluster, type ClusterOptions } from './harness.js';

/** Simulated time after which a starting cluster has surely elected (timeout 60 ms by default). */
const SETTLE_MS = 300;
/** A generous simulated-time budget for a transfer after a fault heals; not a timing assertion. */
const CONVERGE_MS = 5_000;

function cluster(options: ClusterOptions): Cluster {
  const c = new Cluster(options);
  c.advance(SETTLE_MS);
  return c;
}

/** Every node's elections so far. */
function elections(c: Cluster): number[] {
  return c.ids.map((i) => c.node(i).counters.elections);
}

/** Records who leads after each ms of `ms`, as the distinct leaders in the order they led. */
function leadershipOver(c: Cluster, ms: number): number[] {
  const seq: number[] = [];
  for (let t = 0; t < ms; t++) {
    c.advance(1);
    const [leader] = c.leaders();
    if (leader !== undefined && seq.at(-1) !== leader) seq.push(leader);
  }
  return seq;
}

function expectAgreement(c: Cluster): void {
  expect(c.conflicts()).toEqual([]);
  expect(c.duplicateDecides()).toEqual([]);
}

function expectDeliveredOnce(c: Cluster, nodes: readonly number[], expected: readonly CastId[]) {
  const want = expected.map((x) => opKey(x.id)).sort();
  for (const i of nodes) expect([...c.deliveredKeys(i)].sort(), `node ${i}`).toEqual(want);
}

describe('leader transfer to the preferred leader', () => {
  for (const n of [3, 5]) {
    it(`${n} nodes, preferred leader 2: node 0 is elected, hands over to 2 once, and 2 keeps leading`, () => {
      const c = cluster({ n, paxos: { preferredLeader: 2 } });
      expect(c.leaders()).toEqual([2]);
      for (const i of c.ids) expect(c.node(i).status().leader).toBe(2);
      expect(c.node(0).counters.handOvers).toBe(1);
      expect(elections(c)).toEqual(c.ids.map((i) => (i === 0 || i === 2 ? 1 : 0)));
      // A long calm stretch moves nothing.
      expect(leadershipOver(c, 3_000)).toEqual([2]);
      expect(elections(c)).toEqual(c.ids.map((i) => (i === 0 || i === 2 ? 1 : 0)));
      expect(c.node(0).counters.handOvers).toBe(1);
      expect(c.node(2).counters.handOvers).toBe(0);
    });
  }

  it('unheard at first, the preferred leader gets leadership once it is heard, and keeps it', () => {
    const c = new Cluster({ n: 3, paxos: { preferredLeader: 2 } });
    c.drop = (from, to) => from === 2 || to === 2;
    c.advance(SETTLE_MS);
    expect(c.leaders()).toEqual([0]);
    expect(c.node(0).counters.handOvers).toBe(0);
    c.drop = null;
    expect(leadershipOver(c, 2_000)).toEqual([0, 2]);
    expect(c.node(0).counters.handOvers).toBe(1);
    expect(elections(c)).toEqual([1, 0, 1]);
  });

  it('the preferred leader lost: the others lead; back and caught up, it leads again, once', () => {
    const c = cluster({ n: 3, paxos: { preferredLeader: 2 } });
    expect(c.leaders()).toEqual([2]);
    c.crash(2);
    const during: CastId[] = [];
    expect(c.advanceUntil(() => c.leaders().includes(0), CONVERGE_MS)).toBe(true);
    for (let k = 0; k < 20; k++) {
      during.push(c.cast(k % 2));
      c.advance(5);
    }
    expect(c.leaders()).toEqual([0]);
    c.restart(2);
    // Node 2 returns behind (it missed 20 instances or so): it catches up, then gets leadership
    // back, and keeps it.
    expect(leadershipOver(c, CONVERGE_MS)).toEqual([0, 2]);
    expect(c.node(0).counters.handOvers).toBe(2);
    expectAgreement(c);
    expectDeliveredOnce(c, c.ids, during);
  });

  it('a preferred leader that is heard but behind is not handed leadership until it caught up', () => {
    const c = cluster({ n: 3, paxos: { preferredLeader: 1, maxInFlight: 1 } });
    expect(c.leaders()).toEqual([1]);
    // Node 1 goes away; node 0 leads and decides instances 1 never hears of.
    c.crash(1);
    expect(c.advanceUntil(() => c.leaders().includes(0), CONVERGE_MS)).toBe(true);
    const during: CastId[] = [];
    for (let k = 0; k < 30; k++) {
      during.push(c.cast(k % 2 === 0 ? 0 : 2));
      c.advance(3);
    }
    const handOvers = c.node(0).counters.handOvers;
    // Back, it is heard (heartbeats pass) but learns nothing: decisions, phase 2 and catch-up
    // answers to it are lost. Leadership stays with node 0.
    c.restart(1);
    c.drop = (from, to, msg) =>
      to === 1 &&
      (msg.type === 'decisions' ||
        msg.type === 'accept' ||
        msg.type === 'accepted' ||
        msg.type === 'promise');
    c.advance(1_000);
    expect(c.leaders()).toEqual([0]);
    expect(c.node(0).counters.handOvers).toBe(handOvers);
    expect(c.node(1).counters.elections).toBe(0); // since its restart
    // Once it may learn, it catches up and leads.
    c.drop = null;
    expect(c.advanceUntil(() => c.leaders().includes(1), CONVERGE_MS)).toBe(true);
    expect(c.node(0).counters.handOvers).toBe(handOvers + 1);
    expectAgreement(c);
    expectDeliveredOnce(c, c.ids, during);
  });

  it('ids cast while leadership moves are each decided once, in one order everywhere', () => {
    const c = new Cluster({ n: 5, paxos: { preferredLeader: 4 } });
    const cast: CastId[] = [];
    for (let t = 0; t < SETTLE_MS; t += 2) {
      cast.push(c.cast((t / 2) % 5));
      c.advance(2);
    }
    c.advance(SETTLE_MS);
    expect(c.leaders()).toEqual([4]);
    expectAgreement(c);
    expectDeliveredOnce(c, c.ids, cast);
    const order = c.deliveredKeys(0);
    for (const i of c.ids) expect(c.deliveredKeys(i)).toEqual(order);
  });

  it('a hand-over to a member whose own setting names another is refused: leadership stays', () => {
    // Node 0 prefers 2, node 2 prefers 1, node 1 prefers nobody: 0 leads and stays leader.
    const prefers = [2, undefined, 1];
    const c = cluster({
      n: 3,
      paxosOf: (i) => (prefers[i] === undefined ? {} : { preferredLeader: prefers[i]! }),
    });
    expect(leadershipOver(c, 2_000)).toEqual([0]);
    expect(c.node(0).counters.handOvers).toBeGreaterThan(0);
    expect(elections(c)).toEqual([1, 0, 0]);
  });

  it('disagreeing settings move leadership at most once, to a member that names itself', () => {
    // 0 prefers 1, 1 prefers itself, 2 prefers itself: 0 hands over to 1, which never hands on.
    const prefers = [1, 1, 2];
    const c = cluster({ n: 3, paxosOf: (i) => ({ preferredLeader: prefers[i]! }) });
    expect(c.leaders()).toEqual([1]);
    expect(leadershipOver(c, 2_000)).toEqual([1]);
    expect(elections(c)).toEqual([1, 1, 0]);
    expect(c.node(1).counters.handOvers).toBe(0);
  });

  it('a stale hand-over (from a ballot older than one seen since) starts no election', () => {
    const c = cluster({ n: 3, paxos: { preferredLeader: 2 } });
    expect(c.leaders()).toEqual([2]);
    // Node 0's old ballot: node 2 has seen its own, higher, since.
    const old = c.records[0]!.find((r) => r.kind === 'promise')!;
    expect(old.kind).toBe('promise');
    c.crash(2);
    c.restart(2);
    c.advance(1);
    const before = c.node(2).counters.elections;
    c.inject(0, 2, { type: 'handOver', ballot: old.kind === 'promise' ? old.ballot : 0 });
    expect(c.node(2).counters.elections).toBe(before);
  });

  it('planted: a leader that runs again as soon as it stands down makes leadership go back and forth', () => {
    // Node 2 is unheard at first, so node 0 leads a while before it hands over (right after its
    // own election, its election timer would hold it off by chance).
    const c = new Cluster({ n: 3, paxos: { preferredLeader: 2, unsafeRunWhenDeposed: true } });
    c.drop = (from, to) => from === 2 || to === 2;
    c.advance(SETTLE_MS);
    expect(c.leaders()).toEqual([0]);
    c.drop = null;
    const seq = leadershipOver(c, 2_000);
    expect(seq.length).toBeGreaterThan(3);
    expect(c.node(0).counters.elections).toBeGreaterThan(2);
    // Ballots still keep it safe.
    expectAgreement(c);
  });
});
