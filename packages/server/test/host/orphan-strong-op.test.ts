import { describe, expect, it } from 'vitest';
import { app, HostCluster } from './host-cluster.js';

/**
 * An origin that gossips a strong op and dies for good before CAB gets its cast (here: its Paxos
 * messages are lost, then it crashes and never restarts). Creek commits an origin's later ops only
 * behind its earlier strong ops, so without a cast on the origin's behalf that op and every later op
 * of the origin would stay tentative at the survivors forever, and their no-op timer would fire for
 * them forever.
 */
describe('a strong op whose origin died before CAB got its cast', () => {
  it('is cast by a survivor after adoptAfterMs, and the origin’s later ops commit behind it', () => {
    const c = new HostCluster(3, 21, {
      checkpointEvery: 0,
      replica: { app, noopIntervalMs: 50, adoptAfterMs: 300 },
    });
    c.workload(20, { keys: 3, strongEvery: 4 });
    c.settle();
    const origin = 2;
    // Its gossip gets through; its Paxos messages (the forward of its cast) do not.
    c.dropIf = (from, _to, msg) => from === origin && msg.kind === 'paxos';
    c.invoke(origin, 'kv.put', { key: 'orphan', value: 1 }, true);
    c.invoke(origin, 'kv.increment', { key: 'later' });
    c.run(100);
    c.crash(origin); // for good
    // Both ops (and maybe the origin's no-op) are tentative at the survivors, and stay so until
    // adoptAfterMs has passed.
    for (const i of [0, 1])
      expect(c.host(i).inspect().replica.stats().tentative).toBeGreaterThanOrEqual(2);
    c.run(150);
    for (const i of [0, 1])
      expect(c.host(i).inspect().replica.stats().tentative).toBeGreaterThanOrEqual(2);
    c.run(1_000);
    for (const i of [0, 1]) {
      const h = c.host(i);
      expect(h.inspect().replica.stats().tentative).toBe(0);
      expect(h.inspect().replica.stateJson()).toContain('"later":1');
      expect(h.inspect().replica.stateJson()).toContain('"orphan":1');
    }
    // Each survivor cast the orphan (and any no-op of the dead origin) once.
    for (const i of [0, 1])
      expect(c.host(i).inspect().replica.metrics.adopted).toBeGreaterThanOrEqual(1);
    expect(c.host(1).inspect().replica.stateDigest()).toBe(
      c.host(0).inspect().replica.stateDigest(),
    );
    // Settled: no more no-ops once everything committed.
    const noops = c.host(0).inspect().replica.metrics.noopsIssued;
    c.run(1_000);
    expect(c.host(0).inspect().replica.metrics.noopsIssued).toBe(noops);
  });
});

describe('a strong op whose causal context died with its origin', () => {
  it('is never decided, so it blocks no later instance (the others keep ordering)', () => {
    const c = new HostCluster(3, 22, { checkpointEvery: 0 });
    c.workload(20, { keys: 3, strongEvery: 4 });
    c.settle();
    const origin = 2;
    // The origin's weak op reaches nobody (every push of it is lost); its strong op right after,
    // whose causal context holds the weak one, reaches everyone, and so does its CAB cast.
    const issued = c.host(origin).inspect().replica.receivedPrefix([origin]).get(origin)!;
    const lostKey = `${origin}.${issued + 1}`;
    c.dropIf = (from, _to, msg) =>
      from === origin &&
      msg.kind === 'gossip' &&
      msg.msg.kind === 'push' &&
      msg.msg.reqs.some((r) => `${r.id.replica}.${r.id.eventNo}` === lostKey);
    c.invoke(origin, 'kv.increment', { key: 'lost' });
    c.invoke(origin, 'kv.put', { key: 'stranded', value: 1 }, true);
    c.run(100);
    c.crash(origin); // for good
    // Voting for it would decide an id nobody can deliver, and every later instance would wait
    // behind it forever. The survivors keep ordering their own strong ops instead.
    c.invoke(0, 'kv.put', { key: 'after', value: 1 }, true);
    c.invoke(1, 'kv.increment', { key: 'after' });
    c.run(2_000);
    for (const i of [0, 1]) {
      const digest = c.host(i).inspect().replica.stateJson();
      expect(digest).toContain('"after":2');
      expect(c.host(i).inspect().delivery.backlog()).toBe(0);
    }
  });
});
