import { describe, expect, it } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import type { Req } from '@creek/replica/core/types.js';
import { Gossip } from '@creek/replica/gossip/gossip.js';
import type { GossipMessage, GossipOutput } from '@creek/replica/gossip/messages.js';
import { mkReq } from './net-harness.js';

const id = (replica: number, eventNo: number): OpId => ({ replica, eventNo });

function node(self: number, n = 3, extra: Partial<ConstructorParameters<typeof Gossip>[0]> = {}) {
  return new Gossip({ self, peers: Array.from({ length: n }, (_, i) => i), ...extra });
}

function sends(out: readonly GossipOutput[]): { to: number; msg: GossipMessage }[] {
  return out.flatMap((o) => (o.type === 'send' ? [{ to: o.to, msg: o.msg }] : []));
}

function delivered(out: readonly GossipOutput[]): Req[] {
  return out.flatMap((o) => (o.type === 'deliver' ? [o.req] : []));
}

function pushedReqs(out: readonly GossipOutput[], to?: number): Req[] {
  return sends(out).flatMap((s) =>
    s.msg.kind === 'push' && (to === undefined || s.to === to) ? [...s.msg.reqs] : [],
  );
}

function summaryOf(g: Gossip): GossipMessage {
  return { kind: 'summary', seen: g.seenSet().toJSON(), reply: false };
}

function dvv(...ids: [number, number][]): DottedVersionVector {
  const v = new DottedVersionVector();
  for (const [r, e] of ids) v.add(id(r, e));
  return v;
}

describe('Gossip construction', () => {
  it('rejects bad membership and options', () => {
    expect(() => new Gossip({ self: 0, peers: [0, 1, 1] })).toThrow(/distinct/);
    expect(() => node(0, 3, { antiEntropyIntervalMs: 0 })).toThrow(/antiEntropyIntervalMs/);
    expect(() => node(0, 3, { maxReqsPerReply: 0 })).toThrow(/maxReqsPerReply/);
    expect(() => node(0, 3, { fanout: 0 })).toThrow(/fanout/);
  });

  it('talks to the members it is given, itself a member or not yet, and to new ones once set', () => {
    // A replica added to a running cluster knows the members before it is one of them.
    const g = new Gossip({ self: 5, peers: [0, 1, 2] });
    expect(g.others).toEqual([0, 1, 2]);
    g.setPeers([0, 2, 5, 7]);
    expect(g.others).toEqual([0, 2, 7]);
    // A removed peer's messages are ignored from then on.
    expect(g.receive(1, { kind: 'summary', seen: {}, reply: false })).toEqual([]);
    expect(g.peersSummarized()).toBe(0);
    g.receive(7, { kind: 'summary', seen: {}, reply: false });
    expect(g.peersSummarized()).toBe(1);
    g.setPeers([0, 2, 5]);
    expect(g.peersSummarized()).toBe(0);
  });

  it('defaults to a 50 ms interval, all peers as fanout and 256 Reqs per reply', () => {
    const g = node(1, 5);
    expect(g.antiEntropyIntervalMs).toBe(50);
    expect(g.fanout).toBe(4);
    expect(g.maxReqsPerReply).toBe(256);
    expect(g.others).toEqual([0, 2, 3, 4]);
  });
});

describe('cast and push (validity, integrity)', () => {
  it('pushes a cast Req to every other peer and delivers nothing locally', () => {
    const g = node(1);
    const r = mkReq(1, 1);
    const out = g.cast(r);
    expect(delivered(out)).toEqual([]);
    expect(sends(out)).toEqual([
      { to: 0, msg: { kind: 'push', reqs: [r] } },
      { to: 2, msg: { kind: 'push', reqs: [r] } },
    ]);
    expect(g.has(r.id)).toBe(true);
    expect(g.stats()).toEqual({ heldReqs: 1, dots: 0, wanted: 0 });
  });

  it('a single-replica cluster sends nothing', () => {
    const g = new Gossip({ self: 0, peers: [0] });
    expect(g.cast(mkReq(0, 1))).toEqual([]);
    expect(g.tick(0)).toEqual([]);
  });

  it('delivers a received Req exactly once, whatever the duplicates', () => {
    const g = node(0);
    const r = mkReq(1, 1);
    const push: GossipMessage = { kind: 'push', reqs: [r] };
    expect(g.receive(1, push)).toEqual([{ type: 'deliver', req: r }]);
    expect(g.receive(1, push)).toEqual([]);
    expect(g.receive(2, push)).toEqual([]);
    expect(g.receive(2, { kind: 'push', reqs: [r, r] })).toEqual([]);
    expect(g.stats().heldReqs).toBe(1);
  });

  it('delivers each new Req of a batch once, in batch order, skipping known ones', () => {
    const g = node(0);
    g.receive(1, { kind: 'push', reqs: [mkReq(1, 2)] });
    const batch = [mkReq(1, 1), mkReq(1, 2), mkReq(2, 1), mkReq(1, 1)];
    expect(delivered(g.receive(2, { kind: 'push', reqs: batch })).map((r) => r.id)).toEqual([
      id(1, 1),
      id(2, 1),
    ]);
  });

  it('never delivers its own casts back', () => {
    const g = node(0);
    const r = mkReq(0, 1);
    g.cast(r);
    expect(g.receive(1, { kind: 'push', reqs: [r] })).toEqual([]);
  });

  it('ignores messages from outside the membership and from itself', () => {
    const g = node(0);
    const push: GossipMessage = { kind: 'push', reqs: [mkReq(1, 1)] };
    expect(g.receive(7, push)).toEqual([]);
    expect(g.receive(0, push)).toEqual([]);
    expect(g.has(id(1, 1))).toBe(false);
  });
});

describe('anti-entropy (agreement)', () => {
  it('sends its summary to all peers on the first tick and then once per interval', () => {
    const g = node(0, 4, { antiEntropyIntervalMs: 50 });
    g.cast(mkReq(0, 1));
    const first = sends(g.tick(1000));
    expect(first.map((s) => s.to)).toEqual([1, 2, 3]);
    // `boot`: when this Gossip first ticked (a restarted replica's peers echo it back).
    expect(first[0]!.msg).toEqual({
      kind: 'summary',
      seen: { '0': [1] },
      reply: false,
      boot: 1000,
    });
    expect(g.tick(1010)).toEqual([]);
    expect(g.tick(1049)).toEqual([]);
    expect(sends(g.tick(1050))).toHaveLength(3);
    // A late tick runs one round, not one per missed interval.
    expect(sends(g.tick(5000))).toHaveLength(3);
  });

  it('answers a summary with exactly the Reqs the sender lacks', () => {
    const a = node(0);
    const all = [1, 2, 3, 4, 5].map((e) => mkReq(0, e)).concat([mkReq(1, 1), mkReq(1, 2)]);
    for (const r of all.slice(0, 5)) a.cast(r);
    a.receive(1, { kind: 'push', reqs: all.slice(5) });
    const b = node(2);
    b.receive(0, { kind: 'push', reqs: [mkReq(0, 1), mkReq(0, 2), mkReq(0, 4), mkReq(1, 2)] });
    const out = a.receive(2, summaryOf(b));
    expect(sends(out).every((s) => s.to === 2)).toBe(true);
    expect(
      pushedReqs(out)
        .map((r) => `${r.id.replica}.${r.id.eventNo}`)
        .sort(),
    ).toEqual(['0.3', '0.5', '1.1']);
    // Nothing to send to a peer that has everything.
    const c = node(1);
    c.recover(all);
    expect(a.receive(1, summaryOf(c))).toEqual([]);
  });

  it('bounds each reply and shares it round-robin across origins, lowest event numbers first', () => {
    const a = node(0, 4, { maxReqsPerReply: 10 });
    a.recover([
      ...Array.from({ length: 30 }, (_, i) => mkReq(1, i + 1)),
      ...Array.from({ length: 3 }, (_, i) => mkReq(2, i + 1)),
    ]);
    // The lagging peer is replica 3: origins 1 and 2 are not its own.
    const b = node(3, 4);
    const first = pushedReqs(a.receive(3, summaryOf(b)));
    expect(first).toHaveLength(10);
    expect(first.filter((r) => r.id.replica === 2).map((r) => r.id.eventNo)).toEqual([1, 2, 3]);
    expect(first.filter((r) => r.id.replica === 1).map((r) => r.id.eventNo)).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    // A lagging peer heals over several rounds, and its seen-set stays contiguous (no dots).
    let rounds = 1;
    b.receive(0, { kind: 'push', reqs: first });
    for (;;) {
      const more = pushedReqs(a.receive(3, summaryOf(b)));
      if (more.length === 0) break;
      expect(more.length).toBeLessThanOrEqual(10);
      b.receive(0, { kind: 'push', reqs: more });
      expect(b.stats().dots).toBe(0);
      rounds++;
    }
    expect(rounds).toBe(4);
    expect(b.seenSet().toJSON()).toEqual({ '1': [30], '2': [3] });
  });

  it('answers a summary or a pull with large Reqs within a frame, a single oversized one alone', () => {
    const a = node(0, 3);
    const big = (eventNo: number, chars: number): Req => ({
      ...mkReq(1, eventNo),
      args: { key: 'k', value: 'x'.repeat(chars) },
    });
    // 20 Reqs of 100,000 characters: 2 MB, where the count limit (256) would send them all.
    a.recover(Array.from({ length: 20 }, (_, i) => big(i + 1, 100_000)));
    const b = node(2, 3);
    const first = pushedReqs(a.receive(2, summaryOf(b)));
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThan(20);
    expect(JSON.stringify(first).length).toBeLessThan(1 << 20);
    expect(first.map((r) => r.id.eventNo)).toEqual(first.map((_, i) => i + 1)); // in order
    const pulled = pushedReqs(
      a.receive(2, { kind: 'pull', ids: Array.from({ length: 20 }, (_, i) => id(1, i + 1)) }),
    );
    expect(pulled.length).toBe(first.length);
    // One Req larger than the budget still goes, alone.
    const c = node(0, 3);
    c.recover([big(1, 500_000), big(2, 10)]);
    expect(pushedReqs(c.receive(2, summaryOf(node(2, 3)))).map((r) => r.id.eventNo)).toEqual([1]);
  });

  it('with a smaller fanout, picks peers round-robin and answers summaries push-pull', () => {
    const a = node(2, 5, { fanout: 1 });
    const targets: number[] = [];
    for (let t = 0; t < 8; t++) targets.push(...sends(a.tick(t * 50)).map((s) => s.to));
    expect(targets).toEqual([3, 4, 0, 1, 3, 4, 0, 1]);

    a.cast(mkReq(2, 1));
    const b = node(0, 5, { fanout: 1 });
    b.cast(mkReq(0, 1));
    // b lacks 2.1 and a lacks 0.1: a answers b's summary with 2.1 and with its own summary.
    const out = sends(a.receive(0, summaryOf(b)));
    expect(out.map((s) => s.msg.kind).sort()).toEqual(['push', 'summary']);
    const reply = out.find((s) => s.msg.kind === 'summary')!.msg;
    expect(reply).toMatchObject({ reply: true });
    // b answers the reply with what a lacks, and never with another summary.
    const back = sends(b.receive(2, reply));
    expect(back).toEqual([{ to: 2, msg: { kind: 'push', reqs: [mkReq(0, 1)] } }]);
  });

  it('with fanout = all peers, does not answer a summary with a summary', () => {
    const a = node(0);
    const b = node(1);
    b.cast(mkReq(1, 1));
    expect(sends(a.receive(1, summaryOf(b)))).toEqual([]);
  });
});

describe('behind: how many ops a peer holds that this replica lacks', () => {
  it('is the most over peers, from their summaries, and shrinks as the ops arrive', () => {
    const a = node(0, 3);
    expect(a.behind()).toBe(0);
    a.receive(1, { kind: 'summary', seen: { '1': [500], '2': [300] }, reply: false });
    a.receive(2, { kind: 'summary', seen: { '2': [900] }, reply: false });
    expect(a.behind()).toBe(900);
    for (let e = 1; e <= 400; e++) a.receive(2, { kind: 'push', reqs: [mkReq(2, e)] });
    expect(a.behind()).toBe(500); // peer 2 still holds 401..900; peer 1 holds 1..500 of origin 1
    for (let e = 1; e <= 500; e++) a.receive(1, { kind: 'push', reqs: [mkReq(1, e)] });
    expect(a.behind()).toBe(500);
    for (let e = 401; e <= 900; e++) a.receive(2, { kind: 'push', reqs: [mkReq(2, e)] });
    expect(a.behind()).toBe(0);
  });
});

describe('want and pull (no loss)', () => {
  it('pulls a wanted Req from every peer and re-asks each round until it arrives', () => {
    const g = node(0, 4, { antiEntropyIntervalMs: 50 });
    const want = g.want([id(2, 7), id(2, 7)]);
    expect(sends(want)).toEqual(
      [1, 2, 3].map((to) => ({ to, msg: { kind: 'pull', ids: [id(2, 7)] } })),
    );
    expect(g.stats().wanted).toBe(1);
    const round = sends(g.tick(0));
    expect(round.filter((s) => s.msg.kind === 'pull').map((s) => s.to)).toEqual([1, 2, 3]);

    const r = mkReq(2, 7);
    expect(g.receive(3, { kind: 'push', reqs: [r] })).toEqual([{ type: 'deliver', req: r }]);
    expect(g.stats().wanted).toBe(0);
    expect(sends(g.tick(50)).filter((s) => s.msg.kind === 'pull')).toEqual([]);
  });

  it('does not ask for Reqs it already has', () => {
    const g = node(0);
    g.receive(1, { kind: 'push', reqs: [mkReq(1, 1)] });
    expect(g.want([id(1, 1)])).toEqual([]);
    expect(g.stats().wanted).toBe(0);
  });

  it('a peer answers a pull with the wanted Reqs it holds, and stays silent otherwise', () => {
    const p = node(1);
    const r = mkReq(1, 3);
    p.recover([r, mkReq(1, 4)]);
    expect(p.receive(0, { kind: 'pull', ids: [id(1, 3), id(2, 9)] })).toEqual([
      { type: 'send', to: 0, msg: { kind: 'push', reqs: [r] } },
    ]);
    expect(p.receive(0, { kind: 'pull', ids: [id(2, 9)] })).toEqual([]);
  });

  it('marks lazy what no answer waits for: cast pushes (strong ones too) and repairs, not pull answers', () => {
    const lazy = (out: readonly GossipOutput[]) =>
      out.flatMap((o) => (o.type === 'send' ? [o.lazy === true] : []));
    const a = node(0);
    expect(lazy(a.cast(mkReq(0, 1)))).toEqual([true, true]);
    expect(lazy(a.cast({ ...mkReq(0, 2), strong: true }))).toEqual([true, true]);
    // A repair: node 1 has seen nothing of node 0's.
    expect(lazy(a.receive(1, summaryOf(node(1))))).toEqual([true]);
    // A pull's answer: the puller waits for it to deliver a decided op.
    expect(lazy(a.receive(1, { kind: 'pull', ids: [id(0, 1)] }))).toEqual([false]);
  });

  it('re-asks a bounded, rotating share of the wanted ids each round', () => {
    const g = node(0, 2, { maxReqsPerReply: 2, antiEntropyIntervalMs: 10 });
    g.want([1, 2, 3, 4, 5].map((e) => id(1, e)));
    const asked = (t: number) =>
      sends(g.tick(t)).flatMap((s) =>
        s.msg.kind === 'pull' ? s.msg.ids.map((i) => i.eventNo) : [],
      );
    expect(asked(0)).toEqual([1, 2]);
    expect(asked(10)).toEqual([3, 4]);
    g.receive(1, { kind: 'push', reqs: [mkReq(1, 1)] });
    expect(asked(20)).toEqual([5, 2]);
    expect(asked(30)).toEqual([3, 4]);
  });

  it('splits large wants into pulls of at most maxReqsPerReply ids', () => {
    const g = node(0, 2, { maxReqsPerReply: 4 });
    const out = sends(g.want(Array.from({ length: 10 }, (_, i) => id(1, i + 1))));
    expect(out.map((s) => (s.msg.kind === 'pull' ? s.msg.ids.length : -1))).toEqual([4, 4, 2]);
  });
});

describe('memory: prune and the seen-set', () => {
  it('prunes only stable Reqs that every peer is known to have', () => {
    const a = node(0);
    const reqs = [mkReq(0, 1), mkReq(0, 2), mkReq(0, 3)];
    for (const r of reqs) a.cast(r);
    const stable = dvv([0, 1], [0, 2]);
    // Nothing is known about peers yet.
    expect(a.prune(stable)).toBe(0);
    const b = node(1);
    b.recover(reqs);
    a.receive(1, summaryOf(b));
    // Peer 2 has not reported yet.
    expect(a.prune(stable)).toBe(0);
    const c = node(2);
    c.recover(reqs.slice(0, 1));
    a.receive(2, summaryOf(c));
    // Peer 2 has only 0.1; 0.3 is not stable.
    expect(a.prune(stable)).toBe(1);
    expect(a.held(id(0, 1))).toBeUndefined();
    expect(a.held(id(0, 2))).toBeDefined();
    c.receive(0, { kind: 'push', reqs: [reqs[1]!] });
    a.receive(2, summaryOf(c));
    expect(a.prune(stable)).toBe(1);
    expect(a.stats().heldReqs).toBe(1);
    // Pruned Reqs stay seen: never delivered again, and not asked for.
    expect(a.receive(1, { kind: 'push', reqs: reqs.slice(0, 2) })).toEqual([]);
    expect(a.want([id(0, 1)])).toEqual([]);
  });

  it('answers a pull for a pruned Req "gone"; a puller without it has lost state', () => {
    const a = node(0, 2);
    const r = mkReq(0, 1);
    a.cast(r);
    a.receive(1, { kind: 'summary', seen: { '0': [1] }, reply: false });
    expect(a.prune(dvv([0, 1]))).toBe(1);
    // Asked for a Req it dropped (once peer 1 had it) and one it never saw.
    const answer = sends(a.receive(1, { kind: 'pull', ids: [id(0, 1), id(0, 2)] }));
    expect(answer).toEqual([{ to: 1, msg: { kind: 'gone', ids: [id(0, 1)] } }]);
    // A peer that still has it (it only asked again) goes on.
    const keeps = node(1, 2);
    keeps.receive(0, { kind: 'push', reqs: [r] });
    expect(keeps.receive(0, answer[0]!.msg)).toEqual([]);
    // One that has no record of it lost its durable state: reported once, then inert.
    const wiped = node(1, 2);
    expect(wiped.receive(0, answer[0]!.msg)).toEqual([
      { type: 'droppedByPeer', from: 0, id: id(0, 1) },
    ]);
    expect(wiped.receive(0, { kind: 'push', reqs: [mkReq(0, 2)] })).toEqual([]);
  });

  it('counts Reqs a peer sent as held by it, and forgets what a newer summary omits', () => {
    const a = node(0, 2);
    const r = mkReq(1, 1);
    a.receive(1, { kind: 'push', reqs: [r] });
    // Peer 1 restarted with nothing and says so: it no longer counts as having 1.1.
    a.receive(1, { kind: 'summary', seen: {}, reply: false });
    expect(a.prune(dvv([1, 1]))).toBe(0);
    a.receive(1, { kind: 'summary', seen: { '1': [1] }, reply: false });
    expect(a.prune(dvv([1, 1]))).toBe(1);
    expect(a.stats().heldReqs).toBe(0);
  });

  it('keeps the seen-set as prefixes: in-order delivery leaves no dots', () => {
    const g = node(0);
    for (let e = 1; e <= 1000; e++) g.receive(1, { kind: 'push', reqs: [mkReq(1, e)] });
    expect(g.stats().dots).toBe(0);
    expect(g.seenSet().toJSON()).toEqual({ '1': [1000] });
  });

  it('out-of-order delivery makes dots that collapse once the gap fills', () => {
    const g = node(0);
    for (let e = 100; e >= 2; e--) g.receive(2, { kind: 'push', reqs: [mkReq(2, e)] });
    expect(g.stats().dots).toBe(99);
    g.receive(2, { kind: 'push', reqs: [mkReq(2, 1)] });
    expect(g.stats().dots).toBe(0);
    expect(g.seenSet().toJSON()).toEqual({ '2': [100] });
  });
});

describe('recover', () => {
  it('marks recovered Reqs seen, keeps them for peers and delivers nothing', () => {
    const g = node(1);
    const kept = [mkReq(0, 1), mkReq(1, 1), mkReq(2, 2)];
    g.recover(kept);
    expect(g.stats()).toEqual({ heldReqs: 3, dots: 1, wanted: 0 });
    expect(g.receive(0, { kind: 'push', reqs: [mkReq(0, 1)] })).toEqual([]);
    const empty = node(0);
    expect(pushedReqs(g.receive(0, summaryOf(empty)))).toEqual(kept);
    // What it lacks still arrives, once.
    expect(delivered(g.receive(2, { kind: 'push', reqs: [mkReq(2, 1), mkReq(2, 2)] }))).toEqual([
      mkReq(2, 1),
    ]);
  });
});

describe('a replica that lost its own ops (wiped disk, lost unsynced commits, a second process with its id)', () => {
  const unknownOwnOps = (out: readonly GossipOutput[]) =>
    out.flatMap((o) => (o.type === 'unknownOwnOp' ? [{ from: o.from, id: o.id }] : []));

  it("reports a peer's summary that holds an own op above what it has, once, and then stops", () => {
    const old = node(2);
    for (let e = 1; e <= 3; e++) old.cast(mkReq(2, e));
    const peer = node(1);
    peer.receive(2, { kind: 'push', reqs: [1, 2, 3].map((e) => mkReq(2, e)) });
    const wiped = node(2);
    wiped.cast(mkReq(2, 1)); // it already reused id r2#1, but r2#2 is what gives it away
    const out = wiped.receive(1, summaryOf(peer));
    expect(out).toEqual([{ type: 'unknownOwnOp', from: 1, id: id(2, 2) }]);
    // Stopped: nothing is delivered or answered any more.
    expect(wiped.receive(0, { kind: 'push', reqs: [mkReq(0, 1)] })).toEqual([]);
    expect(wiped.receive(1, summaryOf(peer))).toEqual([]);
    expect(wiped.has(id(0, 1))).toBe(false);
    expect(wiped.peersSummarized()).toBe(0);
  });

  it('reports an own op above its prefix that a summary holds as a dot', () => {
    const g = node(0);
    g.cast(mkReq(0, 1));
    const seen = { '0': [1, 3], '1': [2] };
    expect(unknownOwnOps(g.receive(1, { kind: 'summary', seen, reply: false }))).toEqual([
      { from: 1, id: id(0, 3) },
    ]);
  });

  it('tells each peer which of its ops it wants, and a peer without one of them reports it', () => {
    const leader = node(0);
    leader.want([id(2, 1), id(1, 4)]); // ids it knows (a forwarded cast) without their Reqs
    const summaries = sends(leader.tick(0)).filter((s) => s.msg.kind === 'summary');
    expect(summaries).toEqual([
      { to: 1, msg: { kind: 'summary', seen: {}, reply: false, wanted: [id(1, 4)], boot: 0 } },
      { to: 2, msg: { kind: 'summary', seen: {}, reply: false, wanted: [id(2, 1)], boot: 0 } },
    ]);
    const holds = node(1);
    holds.cast(mkReq(1, 1));
    holds.cast(mkReq(1, 2));
    holds.cast(mkReq(1, 3));
    holds.cast(mkReq(1, 4));
    expect(unknownOwnOps(holds.receive(0, summaries[0]!.msg))).toEqual([]);
    expect(unknownOwnOps(node(2).receive(0, summaries[1]!.msg))).toEqual([
      { from: 0, id: id(2, 1) },
    ]);
  });

  it('reports a pushed own Req it never had, and does not deliver it', () => {
    const g = node(0);
    const out = g.receive(2, { kind: 'push', reqs: [mkReq(1, 1), mkReq(0, 1), mkReq(1, 2)] });
    expect(out).toEqual([
      { type: 'deliver', req: mkReq(1, 1) },
      { type: 'unknownOwnOp', from: 2, id: id(0, 1) },
    ]);
    expect(g.has(id(0, 1))).toBe(false);
  });

  it('is silent about its own ops that it cast or recovered, whoever reports them', () => {
    const g = node(0);
    g.recover([mkReq(0, 1), mkReq(0, 2)]);
    g.cast(mkReq(0, 3));
    const peer = node(1);
    peer.receive(0, { kind: 'push', reqs: [1, 2, 3].map((e) => mkReq(0, e)) });
    expect(g.receive(1, summaryOf(peer))).toEqual([]);
    expect(g.receive(1, { kind: 'push', reqs: [mkReq(0, 2)] })).toEqual([]);
    // What a checkpoint summed up counts as its own too.
    const restarted = node(0);
    restarted.recover([], dvv([0, 1], [0, 2], [0, 3]));
    expect(restarted.receive(1, summaryOf(peer))).toEqual([]);
  });

  it('counts the peers whose summaries it has checked', () => {
    const g = node(0, 5);
    expect(g.peersSummarized()).toBe(0);
    g.receive(1, summaryOf(node(1, 5)));
    g.receive(1, summaryOf(node(1, 5)));
    g.receive(3, summaryOf(node(3, 5)));
    expect(g.peersSummarized()).toBe(2);
  });
});

describe('determinism', () => {
  it('the same inputs give the same outputs', () => {
    const script = (g: Gossip): GossipOutput[] => [
      ...g.cast(mkReq(0, 1)),
      ...g.receive(1, { kind: 'push', reqs: [mkReq(1, 2), mkReq(1, 1)] }),
      ...g.tick(10),
      ...g.want([id(2, 1)]),
      ...g.receive(2, { kind: 'summary', seen: { '2': [1] }, reply: false }),
      ...g.tick(70),
    ];
    expect(script(node(0, 3, { fanout: 1 }))).toEqual(script(node(0, 3, { fanout: 1 })));
  });
});

describe('what a restarted replica learns of its peers before it takes an identity', () => {
  /** The summary `from` sends `to` on its next round (`now`). */
  function summaryFrom(from: Gossip, to: number, now: number): GossipMessage {
    const s = sends(from.tick(now)).find((x) => x.to === to && x.msg.kind === 'summary');
    if (s === undefined) throw new Error(`no summary from ${from.self} to ${to}`);
    return s.msg;
  }

  it('waits until no peer judges it by an earlier process: each echoes this one, or none', () => {
    const peers = [node(0), node(1)];
    const old = node(2);
    // The peers know replica 2's earlier process.
    for (const s of sends(old.tick(100))) peers[s.to]!.receive(2, s.msg);
    const fresh = node(2);
    let now = 1_000;
    expect(fresh.echoedByAll()).toBe(false); // it has not started gossiping
    // Its peers' summaries echo the earlier process until they have had one of this one.
    now += 60;
    for (const p of peers) fresh.receive(p.self, summaryFrom(p, 2, now));
    now += 60;
    const mine = sends(fresh.tick(now)).filter((s) => s.msg.kind === 'summary');
    expect(fresh.echoedByAll()).toBe(false);
    // Replica 0 gets its summary; replica 1 does not yet.
    peers[0]!.receive(2, mine.find((s) => s.to === 0)!.msg);
    now += 60;
    for (const p of peers) fresh.receive(p.self, summaryFrom(p, 2, now));
    expect(fresh.echoedByAll()).toBe(false);
    peers[1]!.receive(2, mine.find((s) => s.to === 1)!.msg);
    now += 60;
    for (const p of peers) fresh.receive(p.self, summaryFrom(p, 2, now));
    expect(fresh.echoedByAll()).toBe(true);
  });

  it('waits for nothing in a new cluster, or with peers of an older version (no boot, no echo)', () => {
    const g = node(2);
    g.tick(10);
    g.receive(0, { kind: 'summary', seen: {}, reply: false });
    g.receive(1, { kind: 'summary', seen: {}, reply: false, boot: 5 });
    expect(g.echoedByAll()).toBe(true);
  });
});

describe('a later incarnation names its origin in its summaries', () => {
  it('so its peers know the earlier origin is gone before it issues an op', () => {
    // Replica 0 lost its disk and took origin 256 (incarnation 1); it has issued nothing yet.
    const wiped = node(0, 3, { origin: 256 });
    const peer = node(1);
    expect(peer.knownOrigins().has(256)).toBe(false);
    const summary = sends(wiped.tick(100)).find((s) => s.to === 1 && s.msg.kind === 'summary');
    expect(summary?.msg).toMatchObject({ kind: 'summary', origin: 256 });
    peer.receive(0, summary!.msg);
    expect(peer.knownOrigins().has(256)).toBe(true);
    // A first incarnation's summary says nothing of it: its origin is its id, no news to anyone.
    const first = sends(node(2).tick(100)).find((s) => s.msg.kind === 'summary');
    expect(first?.msg).not.toHaveProperty('origin');
  });

  it("ignores an origin of another replica's slot: a peer cannot declare another replica gone", () => {
    const g = node(2);
    g.receive(0, { kind: 'summary', seen: {}, reply: false, origin: 257 });
    g.receive(1, { kind: 'summary', seen: {}, reply: false, origin: 1 + 2 * 256 });
    expect([...g.knownOrigins()]).toEqual([513]);
  });
});
