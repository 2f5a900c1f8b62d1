import { runSimulation, type FrameOpLife, type SimFrame } from '@creek/server/sim';
import { describe, expect, it } from 'vitest';
import { liveGraph, simGraph } from '../src/page/graph.js';
import { FLIGHT_MS, Flights, MAX_FLIGHTS } from '../src/page/live-flights.js';
import { newLiveReplica } from '../src/page/live-model.js';
import { SAMPLE_MS, simSamples } from '../src/page/sim-samples.js';

const gossip = (peer: number, pushes: number, pulls: number, summaries: number) =>
  ({ e: 'gossip', at: 0, peer, pushes, pulls, summaries, reqs: pushes }) as const;
const paxos = (role: 'leader' | 'follower', proposed: number) =>
  ({
    e: 'paxos',
    at: 0,
    role,
    ballot: 1,
    leader: 0,
    quorate: true,
    decidedBelow: proposed,
    proposed,
    decided: proposed,
    elections: 0,
  }) as const;

describe('live messages in flight, from what the streams report', () => {
  it('draws one dot per kind of gossip sent in a turn, moving from sender to peer, gone on arrival', () => {
    const f = new Flights();
    f.add(0, gossip(2, 3, 0, 1), [1, 2], 1_000);
    const now = f.current(1_000 + FLIGHT_MS / 2);
    expect(now.map((m) => [m.from, m.to, m.kind]).sort()).toEqual([
      [0, 2, 'gossip push'],
      [0, 2, 'gossip summary'],
    ]);
    for (const m of now) expect(m.progress).toBeCloseTo(0.5);
    expect(f.current(1_000 + FLIGHT_MS)).toEqual([]);
  });

  it('draws the leader proposing to every peer when its count of proposed instances grows', () => {
    const f = new Flights();
    f.add(0, paxos('leader', 5), [1, 2], 0); // the first report is a baseline, not news
    expect(f.current(1)).toEqual([]);
    f.add(0, paxos('leader', 7), [1, 2], 10);
    expect(f.current(11).map((m) => `${m.from}>${m.to} ${m.kind}`)).toEqual([
      '0>1 paxos accept',
      '0>2 paxos accept',
    ]);
    const follower = new Flights();
    follower.add(1, paxos('follower', 5), [0, 2], 0);
    follower.add(1, paxos('follower', 9), [0, 2], 10);
    expect(follower.current(11)).toEqual([]);
  });

  it('keeps at most MAX_FLIGHTS dots, the newest', () => {
    const f = new Flights();
    for (let k = 0; k < MAX_FLIGHTS + 50; k++) f.add(0, gossip(1, 1, 0, 0), [1], k / 1000);
    expect(f.current(1)).toHaveLength(MAX_FLIGHTS);
  });

  it('draws no dot on a link an operator blocked: those messages are dropped', () => {
    const rs = [0, 1, 2].map((id) => {
      const r = newLiveReplica(id);
      r.connection = 'open';
      r.links = [0, 1, 2]
        .filter((p) => p !== id)
        .map((p) => ({
          id: p,
          state: 'connected',
          blockedIn: id === 2 || p === 2,
          blockedOut: id === 2 || p === 2,
        }));
      return r;
    });
    const m = (from: number, to: number) => ({ from, to, kind: 'gossip push', progress: 0.5 });
    const g = liveGraph(rs, new Map(), [m(0, 1), m(0, 2), m(2, 1)]);
    expect(g.links.map((l) => `${l.a}-${l.b}:${l.state}`)).toEqual([
      '0-1:up',
      '0-2:blocked',
      '1-2:blocked',
    ]);
    expect(g.messages).toEqual([m(0, 1)]);
  });

  it('places each replica in its region and gives a link the round trip both ends add to it', () => {
    const delays: Record<string, number> = { '0>1': 43.5, '1>0': 43.5, '0>2': 200 };
    const delay = (from: number, to: number) => delays[`${from}>${to}`];
    const rs = [0, 1, 2].map((id) => {
      const r = newLiveReplica(id);
      r.connection = 'open';
      r.links = [0, 1, 2]
        .filter((p) => p !== id)
        .map((p) => ({
          id: p,
          state: 'connected',
          blockedIn: false,
          blockedOut: false,
          // Replica 2 predates delayMs: it reports none.
          ...(id === 2 ? {} : { delayMs: delay(id, p) ?? 0 }),
        }));
      return r;
    });
    const regions = new Map([
      [0, 'us-east'],
      [1, 'us-west'],
    ]);
    const g = liveGraph(rs, new Map(), [], regions);
    expect(g.nodes.map((n) => n.region)).toEqual(['us-east', 'us-west', undefined]);
    expect(g.links.map((l) => [l.a, l.b, l.rttMs])).toEqual([
      [0, 1, 87],
      [0, 2, undefined], // only one end's delay is known
      [1, 2, undefined],
    ]);
    expect(liveGraph(rs, new Map(), []).nodes.every((n) => n.region === undefined)).toBe(true);
  });
});

describe('a simulated run as the graph and the charts draw it', () => {
  const frames: SimFrame[] = [];
  let ops: readonly FrameOpLife[] = [];
  runSimulation({
    seed: 3,
    replicas: 3,
    faults: 'partition',
    frames: { everyMs: 10, onFrame: (f) => frames.push(f), onOps: (o) => (ops = o) },
  });

  it('blocks the links between a partition’s groups and places each message by its progress', () => {
    const split = frames.find((f) => f.partition !== null)!;
    const g = simGraph(split);
    const group = (id: number) => split.partition!.findIndex((xs) => xs.includes(id));
    for (const l of g.links)
      if (group(l.a) !== group(l.b)) expect(l.state).toBe('blocked');
      else expect(l.state).not.toBe('blocked');
    const busy = frames.find((f) => f.messages.length > 0)!;
    const drawn = simGraph(busy).messages;
    expect(drawn).toHaveLength(busy.messages.length);
    busy.messages.forEach((m, k) =>
      expect(drawn[k]!.progress).toBeCloseTo((busy.at - m.sentAt) / (m.arriveAt - m.sentAt)),
    );
  });

  it('samples the run every SAMPLE_MS: per-second commits that add up to what was committed', () => {
    const samples = simSamples(frames, ops);
    expect(samples.length).toBeGreaterThan(5);
    let before = frames[samples[0]!.frame]!.at;
    let last = frames[0]!; // the first sample's window starts at the baseline frame
    const sums = [0, 0, 0];
    for (const [k, { frame, sample }] of samples.entries()) {
      const f = frames[frame]!;
      // Every SAMPLE_MS, and one more at the end of the run.
      if (k > 0 && k < samples.length - 1)
        expect(f.at - before).toBeGreaterThanOrEqual(SAMPLE_MS - 1e-9);
      sample.committed.forEach((c, r) => (sums[r]! += ((c ?? 0) * (f.at - last.at)) / 1000));
      before = f.at;
      last = f;
    }
    expect(samples.at(-1)!.frame).toBe(frames.length - 1);
    // No replica crashes in this mode: the rates add up to every op each committed.
    sums.forEach((sum, r) =>
      expect(sum).toBeCloseTo(
        frames.at(-1)!.replicas[r]!.committed - frames[0]!.replicas[r]!.committed,
        6,
      ),
    );
    expect(samples.some((s) => s.sample.tentativeMs !== null)).toBe(true);
    expect(samples.some((s) => s.sample.stableMs !== null)).toBe(true);
    expect(samples.some((s) => s.sample.executionRatio !== null)).toBe(true);
  });
});
