import { describe, expect, it } from 'vitest';
import type { Waiting } from '@creek/protocol';
import { HostCluster } from './host-cluster.js';

/**
 * A replica that cannot make progress by itself says what it waits for, and from whom
 * (HostStatus.waiting, host/progress.ts). The scenario an operator met blind: two of three
 * replicas' data directories wiped in turn, the second while the first still learned from its
 * peers. Both lost their votes; the survivor's accepted instances can only be decided by a leader,
 * which needs a promise from one of them, and they promise nothing until they have learned those
 * instances. Refusing to go on is right; each replica must say why.
 */
describe('a replica that cannot make progress says what it waits for', () => {
  const waitingOf = (c: HostCluster, i: number): Waiting | null => c.host(i).status().waiting;

  it('two of three wiped in turn: the wiped ones wait to rejoin, the survivor for votes', () => {
    let stuck = 0;
    let recovered = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const c = new HostCluster(3, seed, { checkpointEvery: seed % 2 === 0 ? 0 : 20 });
      c.workload(60, { keys: 4, strongEvery: 2 });
      c.settle();
      // Strong ops in flight when the first replica loses its disk: accepted, not all decided.
      for (let k = 0; k < 10; k++) c.invoke(2, 'kv.put', { key: `x${k}`, value: k }, true);
      c.run((seed % 7) * 5);
      c.wipe(0);
      c.run(10 + (seed % 5) * 10);
      c.wipe(1);
      c.run(3000);
      expect(c.halts).toEqual([]);
      const learning = [0, 1, 2].filter((i) => c.host(i).learningFromPeers);
      if (learning.length === 0) {
        // The first had rejoined before the second lost its disk: a majority kept its votes.
        recovered++;
        for (const i of [0, 1, 2]) expect(waitingOf(c, i)).toBeNull();
        continue;
      }
      stuck++;
      expect(learning).toEqual([0, 1]);
      for (const [i, other] of [
        [0, 1],
        [1, 0],
      ] as const) {
        const w = waitingOf(c, i)!;
        expect(w.for).toBe('paxos-rejoin');
        // The survivor, which holds the instances it must learn, and the other wiped replica,
        // which cannot lead or promise.
        expect(w.peers).toEqual([...new Set([2, other])].sort());
        expect(w.reason).toContain('a majority lost');
        expect(w.since).toBeLessThan(c.physical() - 2000);
      }
      const survivor = waitingOf(c, 2)!;
      expect(survivor.for).toBe('votes');
      expect(survivor.peers).toEqual([0, 1]);
      expect(survivor.reason).toContain('Only 1 of the 3 members can vote now');
      expect(survivor.reason).toContain('replicas 0 and 1 cannot');
    }
    // Both outcomes occur across these seeds: the test is not vacuous either way.
    expect(stuck).toBeGreaterThan(0);
    expect(recovered).toBeGreaterThan(0);
  });

  it('one replica down and another wiped: the leader says nothing commits, until the first is back', () => {
    const c = new HostCluster(3, 3, { checkpointEvery: 0 });
    c.workload(30, { keys: 4, strongEvery: 3 });
    c.settle();
    const leader = [0, 1, 2].find((i) => c.host(i).status().role === 'leader')!;
    const [a, b] = [0, 1, 2].filter((i) => i !== leader) as [number, number];
    c.crash(a);
    c.wipe(b);
    c.run(500);
    expect(waitingOf(c, b)).toMatchObject({ for: 'peer-summaries', peers: [a] });
    // The leader hears b, which cannot vote yet, and not a: a strong op stays tentative.
    c.invoke(leader, 'kv.put', { key: 'stuck', value: 1 }, true);
    c.run(500);
    const w = waitingOf(c, leader)!;
    expect(w).toMatchObject({ for: 'votes', peers: [a, b].sort() });
    expect(w.reason).toContain('it leads, but nothing commits');
    expect(w.reason).toContain(`replica ${b} cannot`);
    expect(w.reason).toContain(`replica ${a} is not heard`);
    c.restart(a);
    c.settle();
    c.run(1000);
    for (const i of [0, 1, 2]) expect(waitingOf(c, i)).toBeNull();
  });

  it('a wiped replica with a peer down waits for that peer, by name, and goes on once it is back', () => {
    const c = new HostCluster(3, 5, { checkpointEvery: 0 });
    c.workload(30, { keys: 4, strongEvery: 3 });
    c.settle();
    c.crash(1);
    c.wipe(2);
    c.run(1000);
    const w = waitingOf(c, 2)!;
    expect(w.for).toBe('peer-summaries');
    expect(w.peers).toEqual([1]);
    expect(w.reason).toContain('replica 1');
    const since = w.since;
    c.run(500);
    // The same wait goes on: its start stays.
    expect(waitingOf(c, 2)!.since).toBe(since);
    c.restart(1);
    c.settle();
    // Converged is not done learning: it takes its new origin on a later tick.
    c.run(1000);
    expect(c.host(2).learningFromPeers).toBe(false);
    for (const i of [0, 1, 2]) expect(waitingOf(c, i)).toBeNull();
  });

  it('a replica cut off from a majority waits for a quorum, naming the members it does not hear', () => {
    const c = new HostCluster(3, 7, { checkpointEvery: 0 });
    c.workload(20, { keys: 4, strongEvery: 3 });
    c.settle();
    c.isolated.add(2);
    c.run(2000);
    const w = waitingOf(c, 2)!;
    expect(w.for).toBe('quorum');
    expect(w.peers).toEqual([0, 1]);
    expect(waitingOf(c, 0)).toBeNull();
    c.isolated.clear();
    c.settle();
    c.run(500);
    expect(waitingOf(c, 2)).toBeNull();
  });
});
