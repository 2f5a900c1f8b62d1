import { describe, expect, it } from 'vitest';
import { INCARNATION_STRIDE, opKey } from '@creek/replica/core/op-id.js';
import { HostCluster } from './host-cluster.js';

/**
 * A replica that lost its durable state must never reuse an op id or a vote it may have given. A
 * wiped one (an empty data directory) has no origin until it has heard every peer; it then takes a
 * new incarnation of its slot (core/op-id.ts), rebuilding itself from a peer's checkpoint first
 * when its peers hold ops it lacks. One whose disk holds ops of its own but lacks later ones it
 * once sent (unsynced commits lost in a power failure, an older copy of its directory, a second
 * process with its id) cannot tell which ids are taken: it halts.
 */
describe('a replica that lost its durable state', () => {
  it('wiped, it rebuilds itself from a peer under a new incarnation and reuses no op id', () => {
    const c = new HostCluster(3, 11, { checkpointEvery: 0 });
    c.workload(60, { keys: 4, strongEvery: 5 });
    c.settle();
    const before = c.host(0).inspect().replica.stats().committed;
    const oldIds = new Set(c.responses[2]!.flatMap((r) => (r.id === null ? [] : [opKey(r.id)])));
    c.wipe(2);
    c.run(500);
    expect(c.halts).toEqual([]);
    // Its peers held ops it lacked: it took a checkpoint before it numbered any op.
    expect(c.host(2).counters.transfersIn).toBe(1);
    expect(c.host(2).learningFromPeers).toBe(false);
    expect(c.host(2).inspect().replica.id).toBe(2 + INCARNATION_STRIDE);
    c.invoke(2, 'kv.increment', { key: 'after' });
    c.invoke(2, 'kv.put', { key: 'after2', value: 1 }, true);
    c.invoke(0, 'kv.increment', { key: 'after' });
    c.settle();
    const fresh = c.responses[2]!.flatMap((r) => (r.id === null ? [] : [opKey(r.id)]));
    expect(fresh.some((k) => k.startsWith(`${2 + INCARNATION_STRIDE}.`))).toBe(true);
    expect(fresh.filter((k) => k.startsWith('2.') && !oldIds.has(k))).toEqual([]);
    for (const i of [1, 2])
      expect(c.host(i).inspect().replica.stateDigest()).toBe(
        c.host(0).inspect().replica.stateDigest(),
      );
    expect(c.host(0).inspect().replica.stats().committed).toBeGreaterThanOrEqual(before + 3);
    expect(c.host(2).inspect().replica.stateJson()).toContain('"after":2');
  });

  it('halts when its disk lacks ops of its own that a peer holds (an older copy of its directory)', () => {
    const c = new HostCluster(3, 11, { checkpointEvery: 0 });
    c.workload(30, { keys: 4, strongEvery: 5 });
    c.settle();
    const copy = [...c.nodes[2]!.disk];
    c.workload(30, { keys: 4, strongEvery: 5 });
    c.settle();
    // Restarted on the copy taken before its last ops: they are at its peers, not on its disk.
    c.crash(2);
    c.nodes[2]!.disk = copy;
    c.restart(2);
    c.run(200);
    expect(c.halts.map((h) => h.replica)).toEqual([2]);
    expect(c.halts[0]!.reason).toMatch(
      /replica 2 has lost ops it once sent: replica [01] holds or knows of its op r2#\d+/,
    );
    expect(c.halts[0]!.reason).toMatch(/start it on an empty one/);
    expect(c.host(2).halted).toBe(c.halts[0]!.reason);
    // Halted, it ignores every input: nothing is answered or ordered there.
    const answered = c.responses[2]!.length;
    const stats = c.host(2).inspect().replica.stats();
    c.apply(2, {
      kind: 'invoke',
      now: c.physical(),
      request: { op: 'kv.increment', args: { key: 'lost' }, strong: false, tag: 9_999 },
    });
    c.run(200);
    expect(c.responses[2]!.length).toBe(answered);
    expect(c.host(2).inspect().replica.stats()).toEqual(stats);
    // The other two are a majority: they keep ordering, strong ops included.
    const before = c.host(0).inspect().replica.stats().committed;
    c.invoke(0, 'kv.put', { key: 'after', value: 1 }, true);
    c.invoke(1, 'kv.increment', { key: 'after' });
    c.run(1_000);
    const s0 = c.host(0).inspect().replica.stats();
    expect(s0.committed).toBeGreaterThanOrEqual(before + 2);
    expect(s0.tentative).toBe(0);
    expect(c.host(1).inspect().replica.stateDigest()).toBe(
      c.host(0).inspect().replica.stateDigest(),
    );
    expect(c.host(0).inspect().replica.stateJson()).toContain('"after":2');
  });

  it('learns again after a crash while it still learned, though it made what it learned durable', () => {
    const c = new HostCluster(3, 21, { checkpointEvery: 0 });
    c.run(200); // the cluster forms: every replica has heard every other
    // Replica 2's disk is lost. Replica 0 cannot reach it, so it cannot be done learning, and it
    // learns no decision (which would let the others truncate what it then lost in the crash).
    c.dropIf = (from, to, msg) =>
      to === 2 && (from === 0 || (msg.kind === 'paxos' && msg.msg.type !== 'heartbeat'));
    c.wipe(2);
    c.workload(20, { keys: 4, strongEvery: 5, at: [0, 1] });
    c.run(300);
    expect(c.host(2).inspect().paxos.rejoining).toBe(true);
    expect(c.host(2).learningFromPeers).toBe(true);
    // It made the ops replica 1 sent durable, and crashes.
    expect(c.nodes[2]!.disk.length).toBeGreaterThan(0);
    c.crash(2);
    c.restart(2);
    // Those records are not its own ops, votes or promises: it may have forgotten votes still, and
    // learns again before it promises, votes or takes an op (which could reuse an id it had used).
    expect(c.host(2).inspect().paxos.rejoining).toBe(true);
    expect(c.host(2).learningFromPeers).toBe(true);
    c.dropIf = () => false;
    c.run(500);
    expect(c.host(2).inspect().paxos.rejoining).toBe(false);
    expect(c.host(2).learningFromPeers).toBe(false);
    c.invoke(2, 'kv.increment', { key: 'back' }, true);
    c.settle();
    expect(c.halts).toEqual([]);
    expect(c.host(2).inspect().replica.stateJson()).toContain('"back":1');
  });

  it('does not halt for instances it delivered while it learned, when it crashes meanwhile', () => {
    const c = new HostCluster(3, 21, { checkpointEvery: 0 });
    c.run(200);
    // Replica 2's disk is lost; replica 0 cannot reach it, so it cannot be done learning. It
    // still learns decisions, and delivers them, from replica 1.
    c.dropIf = (from, to) => from === 0 && to === 2;
    c.wipe(2);
    c.workload(20, { keys: 4, strongEvery: 5, at: [0, 1] });
    c.run(300);
    expect(c.host(2).inspect().paxos.rejoining).toBe(true);
    expect(c.host(2).inspect().paxos.status().decidedBelow).toBeGreaterThan(0);
    c.crash(2);
    c.run(100);
    c.restart(2);
    c.dropIf = () => false;
    c.run(500);
    // Its commit records hold what it delivered: nothing it needs was truncated without it.
    expect(c.halts).toEqual([]);
    c.settle();
  });

  it('takes a new incarnation when the only trace of an op it lost is its id, forwarded to the leader', () => {
    const c = new HostCluster(3, 31, { checkpointEvery: 0 });
    c.run(300);
    const leader = [0, 1, 2].find((i) => c.host(i).inspect().paxos.status().role === 'leader')!;
    const w = [0, 1, 2].find((i) => i !== leader)!;
    // A strong op whose cast reaches the leader while its Req reaches nobody; then w's disk is lost.
    c.dropIf = (from, _to, msg) => from === w && msg.kind === 'gossip';
    c.invoke(w, 'kv.put', { key: 'x', value: 1 }, true);
    c.run(100);
    c.wipe(w);
    c.dropIf = () => false;
    c.run(500);
    // The leader's summary says it wants w's op: were w to number a new op with that id, the
    // leader would propose the old cast with the new Req, and (found with this very scenario) no
    // replica committed anything after it. It takes an incarnation above that op's.
    expect(c.halts).toEqual([]);
    expect(c.host(w).inspect().replica.id).toBe(w + INCARNATION_STRIDE);
    c.invoke(w, 'kv.put', { key: 'y', value: 2 }, true);
    c.invoke(leader, 'kv.put', { key: 'z', value: 3 }, true);
    c.settle();
    expect(c.host(w).inspect().replica.stateJson()).toContain('"y":2');
    expect(c.host(w).inspect().replica.stateJson()).toContain('"z":3');
    expect(c.host(w).inspect().replica.stateDigest()).toBe(
      c.host(leader).inspect().replica.stateDigest(),
    );
  });

  it('does not halt a replica that restarts with its disk intact, from a checkpoint or not', () => {
    for (const checkpointEvery of [0, 10]) {
      const c = new HostCluster(3, 12, { checkpointEvery });
      c.workload(60, { keys: 4, strongEvery: 5 });
      c.crash(2);
      c.workload(30, { keys: 4, strongEvery: 5, at: [0, 1] });
      c.restart(2);
      c.workload(30, { keys: 4, strongEvery: 5 });
      c.settle();
      expect(c.halts).toEqual([]);
    }
  });
});
