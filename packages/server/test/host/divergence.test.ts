import { describe, expect, it } from 'vitest';
import { FinalDigests } from '@creek/replica/core/final-digests.js';
import { Divergence, type DivergenceReport } from '@creek/replica/host/divergence.js';
import { firstDifference, sideOf } from '@creek/replica/host/divergence-judge.js';
import { ReadyBuilder, type HostEvent } from '@creek/replica/host/ready.js';

describe('firstDifference', () => {
  it('finds the first position where two runs of digests differ, exact after an agreeing one', () => {
    expect(
      firstDifference({ from: 0, digests: ['a', 'b', 'c'] }, { from: 1, digests: ['b', 'x'] }),
    ).toEqual({ position: 2, exact: true });
    // The first position both have already differs: the cause may be older.
    expect(
      firstDifference({ from: 0, digests: ['a', 'b', 'c'] }, { from: 2, digests: ['x'] }),
    ).toEqual({ position: 2, exact: false });
    expect(
      firstDifference({ from: 0, digests: ['a', 'b'] }, { from: 1, digests: ['b', 'z'] }),
    ).toBeNull();
    expect(firstDifference({ from: 0, digests: ['a'] }, { from: 5, digests: ['z'] })).toBeNull();
  });
});

describe('sideOf', () => {
  const of = (m: Record<number, string>) => (r: number) => m[r];
  it('is the majority with more than half of the members, the minority when another has it', () => {
    expect(sideOf(0, [0, 1, 2], of({ 0: 'a', 1: 'a', 2: 'b' }))).toBe('majority');
    expect(sideOf(2, [0, 1, 2], of({ 0: 'a', 1: 'a', 2: 'b' }))).toBe('minority');
    expect(sideOf(2, [0, 1, 2, 3, 4], of({ 0: 'a', 1: 'a', 2: 'b', 3: 'a' }))).toBe('minority');
  });

  it('is undecided in a tie, with members not heard from, or without its own digest', () => {
    expect(sideOf(0, [0, 1, 2], of({ 0: 'a', 1: 'b', 2: 'c' }))).toBe('undecided');
    expect(sideOf(0, [0, 1, 2, 3], of({ 0: 'a', 1: 'a', 2: 'b', 3: 'b' }))).toBe('undecided');
    expect(sideOf(0, [0, 1, 2], of({ 0: 'a', 1: 'b' }))).toBe('undecided');
    expect(sideOf(0, [0, 1, 2], of({ 1: 'a', 2: 'a' }))).toBe('undecided');
    // A replica that is not a member counts for nothing.
    expect(sideOf(3, [0, 1, 2], of({ 0: 'a', 3: 'a', 1: 'b', 2: 'c' }))).toBe('undecided');
  });
});

/** Replicas with their final digests, their detectors, and a lossless network between them. */
class Cluster {
  readonly digests: FinalDigests[];
  readonly detectors: Divergence[];
  readonly outs: ReadyBuilder[];
  readonly events: HostEvent[][];
  /** Each replica's finalized state. */
  private readonly values: Map<string, number>[];
  now = 0;

  constructor(
    readonly members: number[],
    options: { kept?: number; unsafe?: boolean } = {},
  ) {
    this.digests = members.map(() => new FinalDigests(options.kept ?? 64));
    this.outs = members.map(() => new ReadyBuilder());
    this.events = members.map(() => []);
    this.values = members.map(() => new Map());
    this.detectors = members.map(
      (self) =>
        new Divergence(
          {
            self,
            out: this.outs[self]!,
            digests: () => this.digests[self]!,
            members: () => this.members,
          },
          options.unsafe === true,
        ),
    );
  }

  /** Replica `r` finalizes op `name` at its next position, writing `value` to `key`. */
  finalize(r: number, key: string, value: number, name = 'put'): void {
    const d = this.digests[r]!;
    const position = d.latest().position + 1;
    const before = this.values[r]!.get(key);
    d.changed(before === undefined ? null : { key, value: before }, { key, value });
    this.values[r]!.set(key, value);
    d.finalized(position, { replica: 9, eventNo: position }, name);
  }

  /** Every replica's claim to every other (a round of gossip summaries), then messages until quiet. */
  gossip(): void {
    this.now += 50;
    for (const from of this.members)
      for (const to of this.members)
        if (from !== to) this.detectors[to]!.onClaim(from, this.detectors[from]!.claim(), this.now);
    for (const d of this.detectors) d.tick(this.now);
    this.deliver();
  }

  deliver(): void {
    for (let round = 0; round < 10; round++) {
      let any = false;
      for (const from of this.members) {
        const out = this.outs[from]!;
        const ready = out.take();
        // Its records (the reports it keeps) are durable at once: what waited for them leaves.
        const written = ready.firstSeq + ready.records.length - 1;
        if (ready.records.length > 0) out.durableUpTo(written);
        const released = out.take();
        this.events[from]!.push(...ready.events, ...released.events);
        for (const o of [...ready.outputs, ...released.outputs]) {
          if (o.kind !== 'send' || o.msg.kind !== 'divergence') continue;
          any = true;
          this.detectors[o.to]!.receive(from, o.msg.msg, this.now);
        }
      }
      if (!any) return;
    }
  }

  report(r: number): DivergenceReport | null {
    return this.detectors[r]!.status().current;
  }
}

describe('Divergence', () => {
  it('catches a replica whose state differs, names the op, and stops the minority alone', () => {
    const c = new Cluster([0, 1, 2]);
    for (let i = 1; i <= 5; i++) for (const r of c.members) c.finalize(r, `k${i}`, i);
    c.gossip();
    expect(c.members.map((r) => c.report(r))).toEqual([null, null, null]);
    // Position 6: replica 2's op wrote another value.
    for (const r of c.members) c.finalize(r, 'x', r === 2 ? 99 : 1, 'tally');
    for (let i = 7; i <= 9; i++) for (const r of c.members) c.finalize(r, `k${i}`, i);
    c.gossip();
    for (const r of c.members)
      expect(c.report(r)).toMatchObject({
        position: 6,
        exact: true,
        op: 'tally',
        id: 'r9#6',
        detectedAt: 9,
        side: r === 2 ? 'minority' : 'majority',
        servesStable: r !== 2,
      });
    expect(c.detectors[2]!.stopped).toMatch(/minority.*majority: replicas 0, 1/);
    expect(c.detectors[0]!.stopped).toBeNull();
    expect(c.report(0)!.digests['2']).not.toBe(c.report(0)!.digests['0']);
    // Each replica told its driver once what it found.
    expect(c.events[2]!.filter((e) => e.kind === 'divergence').length).toBeGreaterThan(0);
  });

  it('stops every replica when no majority holds one state', () => {
    const c = new Cluster([0, 1, 2]);
    for (const r of c.members) c.finalize(r, 'k', 1);
    for (const r of c.members) c.finalize(r, 'x', r, 'tally');
    c.gossip();
    for (const r of c.members) {
      expect(c.report(r)).toMatchObject({ position: 2, op: 'tally', side: 'undecided' });
      expect(c.detectors[r]!.stopped).toMatch(/no majority/);
    }
  });

  it('compares a claim beyond its own finalized prefix once it gets there', () => {
    const c = new Cluster([0, 1]);
    c.finalize(0, 'x', 1, 'tally');
    c.finalize(0, 'y', 1);
    c.detectors[1]!.onClaim(0, c.detectors[0]!.claim(), 0);
    expect(c.detectors[1]!.status().comparisons).toBe(0);
    c.finalize(1, 'x', 2, 'tally');
    c.detectors[1]!.tick(10);
    expect(c.detectors[1]!.status().comparisons).toBe(0);
    c.finalize(1, 'y', 1);
    c.detectors[1]!.tick(20);
    expect(c.detectors[1]!.status()).toMatchObject({ comparisons: 1, lastCompared: 2 });
    c.deliver();
    // Two replicas that disagree: neither is a majority.
    expect(c.report(1)).toMatchObject({ position: 1, op: 'tally', side: 'undecided' });
    // Replica 0 answered 1's ask; it sees the divergence itself at its next comparison.
    expect(c.report(0)).toBeNull();
    c.gossip();
    expect(c.report(0)).toMatchObject({ position: 1, op: 'tally', side: 'undecided' });
  });

  it('is over once every member agrees again, past the divergence', () => {
    const c = new Cluster([0, 1, 2]);
    for (const r of c.members) c.finalize(r, 'x', r === 0 ? 5 : 1, 'tally');
    c.gossip();
    expect(c.detectors[0]!.stopped).not.toBeNull();
    // Replica 0 rebuilt from the majority's state (a state transfer), and all go on.
    c.digests[0]!.restart(1, [['x', 1]]);
    for (const r of c.members) c.finalize(r, 'y', 2);
    c.gossip();
    for (const r of c.members) expect(c.report(r)).toBeNull();
    expect(c.detectors[0]!.stopped).toBeNull();
    expect(c.detectors[0]!.status().incidents).toBe(1);
    expect(c.events[1]!.filter((e) => e.kind === 'divergence').at(-1)).toEqual({
      kind: 'divergence',
      report: null,
    });
  });

  it('says "at or before" when the replicas no longer keep the position before the difference', () => {
    const c = new Cluster([0, 1, 2], { kept: 4 });
    for (const r of c.members) c.finalize(r, 'x', r === 1 ? 7 : 1, 'tally');
    for (let i = 0; i < 6; i++) for (const r of c.members) c.finalize(r, `k${i}`, i);
    c.gossip();
    expect(c.report(0)).toMatchObject({ position: 4, exact: false, side: 'majority' });
    expect(c.report(1)).toMatchObject({ position: 4, exact: false, side: 'minority' });
    expect(c.report(1)!.reason).toMatch(/at or before committed position 4/);
  });

  it('after a restart, serves again only once a majority agrees with its state', () => {
    const c = new Cluster([0, 1, 2]);
    for (const r of c.members) c.finalize(r, 'x', r === 0 ? 5 : 1, 'tally');
    c.gossip();
    const report = c.report(1)!;
    expect(report.servesStable).toBe(true);
    // Replica 1 restarts: its records bring the report back, and it serves nothing at first.
    c.detectors[1]!.restore(report, c.now);
    expect(c.detectors[1]!.stopped).toMatch(/not known to be a majority's now/);
    expect(c.report(1)).toMatchObject({ position: 1, op: 'tally', servesStable: false });
    c.gossip();
    expect(c.detectors[1]!.stopped).toBeNull();
    expect(c.report(1)).toMatchObject({ position: 1, op: 'tally', servesStable: true });
    // A state transfer brings no report: nothing to restore.
    c.detectors[0]!.restore(null, c.now);
    expect(c.report(0)).toBeNull();
  });

  it('with the comparison planted off, sees nothing', () => {
    const c = new Cluster([0, 1], { unsafe: true });
    for (const r of c.members) c.finalize(r, 'x', r, 'tally');
    c.gossip();
    expect(c.report(0)).toBeNull();
    expect(c.detectors[0]!.status().comparisons).toBe(0);
  });
});
