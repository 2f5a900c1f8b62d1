import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateDigest } from '../../src/core/state-digest.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * End to end, with three real replica processes on 127.0.0.1 (issue: Creek as a real cluster).
 */
describe('a 3-replica cluster of real processes', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  /** A cluster that records each replica process's exit (status null: killed by a signal). */
  async function startRecordingExits(logLevel: 'error' | 'fatal'): Promise<{
    started: LocalCluster;
    exits: { replica: number; code: number | null }[];
  }> {
    const exits: { replica: number; code: number | null }[] = [];
    const started = await LocalCluster.start({
      replicas: 3,
      logLevel,
      onExit: (replica, code) => exits.push({ replica, code }),
    });
    return { started, exits };
  }

  /** SIGKILL of replica 2, then its data directory is removed. */
  function wipeReplica2(): void {
    cluster!.kill(2);
    rmSync(join(cluster!.dir, 'replica-2'), { recursive: true, force: true });
  }

  /** Replica 2, killed then wiped and started again, exits with status 3 (halted). */
  async function replica2Halts(exits: { replica: number; code: number | null }[]): Promise<void> {
    await cluster!.until(async () => exits.some((e) => e.code !== null), 10_000, '2 exits');
    // The first exit is the SIGKILL's (no status).
    expect(exits).toEqual([
      { replica: 2, code: null },
      { replica: 2, code: 3 },
    ]);
  }

  it('answers weak ops tentatively and strong ops tentatively then stably, from several clients', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const a = await RawClient.connect(cluster.url(0), cluster.token);
    const b = await RawClient.connect(cluster.url(2), cluster.token);
    const ops = [];
    for (let i = 0; i < 30; i++) {
      const c = i % 2 === 0 ? a : b;
      ops.push(c.invoke('kv.increment', { key: 'n' }, i % 5 === 4 ? 'strong' : 'weak'));
    }
    await within(Promise.all(ops.map((o) => o.done)), 20_000, 'every op answered');
    for (const o of ops) {
      const kinds = o.views.frames.map((f) => (f.t === 'view' ? f.level : f.t));
      if (o.views.frames.length > 0 && ops.indexOf(o) % 5 === 4) {
        expect(kinds[0]).toBe('tentative');
        expect(['stable', 'confirm']).toContain(kinds[kinds.length - 1]);
      } else {
        expect(kinds).toEqual(['tentative']);
      }
    }
    const s = await cluster.converged();
    expect(s[0]!.digest).toBe(digestOf({ n: 30 }));
    // The operations view: Prometheus metrics count what the replica did.
    const metrics = await cluster.metrics(0);
    expect(metrics).toMatch(/creek_ops_invoked_total\{kind="weak",replica="0"\} 12\b/);
    expect(metrics).toMatch(/creek_response_seconds_count\{replica="0",level="stable"\} 3\b/);
    // Cumulative counts are counters; the process's own metrics and the replica's roles are there.
    expect(metrics).toMatch(/^# TYPE creek_ops_invoked_total counter$/m);
    expect(metrics).toMatch(/^# TYPE creek_executions_total counter$/m);
    expect(metrics).toMatch(/^process_cpu_seconds_total\{replica="0"\} /m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds\{replica="0"\} /m);
    expect(metrics).toMatch(/^creek_quorate\{replica="0"\} 1$/m);
    expect(metrics).toMatch(/^creek_halted\{replica="0"\} 0$/m);
    expect(metrics).toMatch(/^creek_learning\{replica="0"\} 0$/m);
    // Caught up, and not holding speculation (a replica far behind does until it catches up).
    expect(metrics).toMatch(/^creek_speculation_held\{replica="0"\} 0$/m);
    expect(metrics).toMatch(/^creek_catch_up_behind_ops\{replica="0"\} \d+$/m);
    expect(s[0]!.catchUp.holding).toBe(false);
    expect(metrics).toMatch(/^creek_leader\{replica="0"\} [0-2]$/m);
    a.close();
    b.close();
  });

  it('loses nothing acknowledged and applies nothing twice when the leader is killed with SIGKILL mid-load', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const leader = (await cluster.status(0))!.leader!;
    const survivor = (leader + 1) % 3;
    const client = await RawClient.connect(cluster.url(survivor), cluster.token);
    const ops: ReturnType<RawClient['invoke']>[] = [];
    // Every op increments its own key once: the final state shows loss (missing) and duplication (2).
    for (let i = 0; i < 300; i++) {
      ops.push(client.invoke('kv.increment', { key: `k${i}` }, i % 3 === 0 ? 'strong' : 'weak'));
      if (i === 150) cluster.kill(leader);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    cluster.startReplica(leader);
    await within(
      Promise.all(ops.map((o) => o.done)),
      30_000,
      'every op answered after the restart',
    );
    const final = await cluster.converged(40_000);
    for (const o of ops) expect(o.views.frames.length).toBeGreaterThan(0);
    expect(final[0]!.digest).toBe(digestOf(Object.fromEntries(ops.map((_, i) => [`k${i}`, 1]))));
    client.close();
  });

  it('a leader that hears nobody (inbound links cut) stands down; the others elect one and order', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const deaf = (await cluster.status(0))!.leader!;
    const others = [0, 1, 2].filter((i) => i !== deaf);
    for (const peer of others) await cluster.admin(deaf, 'block', { peer, direction: 'in' });
    // Its heartbeats still reach the others: before, they kept deferring to it and nothing was
    // ordered.
    const client = await RawClient.connect(cluster.url(others[0]!), cluster.token);
    const ops = Array.from({ length: 5 }, () =>
      client.invoke('kv.increment', { key: 'deaf' }, 'strong'),
    );
    await within(Promise.all(ops.map((o) => o.done)), 20_000, 'strong ops ordered');
    for (const o of ops)
      expect(o.views.frames.map((f) => (f.t === 'view' ? f.level : f.t)).pop()).toMatch(
        /stable|confirm/,
      );
    const s = await cluster.statuses();
    expect(s[deaf]!.role).toBe('follower');
    // /status says why: it hears no majority, while the others do.
    expect(s.map((x) => x!.quorate)).toEqual([0, 1, 2].map((i) => i !== deaf));
    const leaders = new Set(others.map((i) => s[i]!.leader));
    expect(leaders.size).toBe(1);
    expect([...leaders][0]).not.toBe(deaf);
    await cluster.admin(deaf, 'unblock');
    const final = await cluster.converged();
    expect(final[0]!.digest).toBe(digestOf({ deaf: 5 }));
    client.close();
  });

  it('keeps answering weak ops at a partitioned replica, holds back stable answers, and converges after healing', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    await cluster.admin(2, 'block', { peer: 0 });
    await cluster.admin(2, 'block', { peer: 1 });
    await cluster.admin(0, 'block', { peer: 2 });
    await cluster.admin(1, 'block', { peer: 2 });
    const isolated = await RawClient.connect(cluster.url(2), cluster.token);
    const weak = isolated.invoke('kv.put', { key: 'w', value: 1 }, 'weak');
    await within(weak.done, 5_000, 'a weak op answered in the minority');
    const strong = isolated.invoke('kv.increment', { key: 's' }, 'strong');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(strong.views.frames.map((f) => (f.t === 'view' ? f.level : f.t))).toEqual(['tentative']);
    for (const i of [0, 1, 2]) await cluster.admin(i, 'unblock');
    await within(strong.done, 20_000, 'the strong op stable after healing');
    const final = await cluster.converged();
    expect(final[0]!.digest).toBe(digestOf({ s: 1, w: 1 }));
    // SIGTERM: a strong op in flight still gets its stable view before the replica exits cleanly.
    const late = isolated.invoke('kv.increment', { key: 's' }, 'strong');
    const exited = cluster.terminate(2);
    await within(late.done, 10_000, 'the op in flight answered during the drain');
    const levels = late.views.frames.map((f) => (f.t === 'view' ? f.level : f.t));
    expect(levels.pop()).toMatch(/stable|confirm/);
    expect(await within(exited, 10_000, 'a clean exit')).toBe(0);
    cluster.startReplica(2);
    await cluster.converged();
    // An admin action without the token is refused.
    const r = await fetch(`http://127.0.0.1:${cluster.basePort}/admin/pause`, { method: 'POST' });
    expect(r.status).toBe(401);
    isolated.close();
  });

  it('a replica whose data directory was wiped takes no op until it hears its peers, then halts instead of reusing its op ids', async () => {
    const { started, exits } = await startRecordingExits('error');
    cluster = started;
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    const before = Array.from({ length: 5 }, (_, i) =>
      c2.invoke('kv.increment', { key: `k${i}` }, 'weak'),
    );
    await within(Promise.all(before.map((o) => o.done)), 10_000, 'ops answered at replica 2');
    c2.close();
    await cluster.converged();
    wipeReplica2();
    // While its peers are paused, the new replica 2 cannot learn what the cluster holds: it answers
    // ops with `unavailable`, never with a view of an op numbered like one it sent before.
    await cluster.admin(0, 'pause');
    await cluster.admin(1, 'pause');
    cluster.startReplica(2);
    await cluster.until(async () => (await cluster!.status(2)) !== null, 10_000, 'replica 2 up');
    const fresh = await RawClient.connect(cluster.url(2), cluster.token);
    const refused = fresh.invoke('kv.increment', { key: 'reused' }, 'weak');
    await within(refused.done, 5_000, 'the op refused');
    expect(refused.views.frames).toMatchObject([
      { t: 'error', code: 'unavailable', message: expect.stringMatching(/empty data directory/) },
    ]);
    // Live, but not ready: /health 200, /ready 503 with the reason (probes need no JSON parsing).
    const health = await fetch(`${cluster.httpUrl(2)}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${cluster.httpUrl(2)}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/learning/),
    });
    // Once its peers speak again, one of them holds replica 2's old ops: it halts (exit status 3).
    await cluster.admin(0, 'resume');
    await cluster.admin(1, 'resume');
    await replica2Halts(exits);
    fresh.close();
    // The other two go on, strong ops included.
    const c0 = await RawClient.connect(cluster.url(0), cluster.token);
    const after = c0.invoke('kv.increment', { key: 'k0' }, 'strong');
    await within(after.done, 10_000, 'a strong op ordered by the two others');
    const s = await cluster.statuses();
    expect(s[2]).toBeNull();
    expect(s[0]!.digest).toBe(s[1]!.digest);
    expect(s[0]!.digest).toBe(digestOf({ k0: 2, k1: 1, k2: 1, k3: 1, k4: 1 }));
    c0.close();
  });

  it('a wiped replica whose only past op a down peer holds waits for that peer, not just a majority', async () => {
    const { started, exits } = await startRecordingExits('error');
    cluster = started;
    await cluster.waitForLeader();
    // Replica 2's one op reaches replica 1 only: replica 0 is paused and drops what it gets.
    await cluster.admin(0, 'pause');
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    await within(c2.invoke('kv.increment', { key: 'b' }, 'weak').done, 10_000, 'op at 2');
    c2.close();
    const digest = async (i: number): Promise<string> => (await cluster!.status(i))!.digest;
    await cluster.until(
      async () => (await digest(1)) === digestOf({ b: 1 }),
      10_000,
      'replica 1 holds it',
    );
    wipeReplica2();
    // Now its only holder is down, and replica 0, a majority with replica 2, never saw it.
    await cluster.admin(1, 'pause');
    await cluster.admin(0, 'resume');
    cluster.startReplica(2);
    await cluster.until(async () => (await cluster!.status(2)) !== null, 10_000, 'replica 2 up');
    // Long enough for several anti-entropy rounds with replica 0.
    await new Promise((r) => setTimeout(r, 500));
    const fresh = await RawClient.connect(cluster.url(2), cluster.token);
    const refused = fresh.invoke('kv.increment', { key: 'reused' }, 'weak');
    await within(refused.done, 5_000, 'the op refused');
    expect(refused.views.frames).toMatchObject([
      { t: 'error', code: 'unavailable', message: expect.stringMatching(/every peer/) },
    ]);
    expect(await digest(0)).toBe(digestOf({}));
    // The holder comes back: replica 2 finds its lost op and halts instead of numbering a new op
    // like it.
    await cluster.admin(1, 'resume');
    await replica2Halts(exits);
    fresh.close();
    const c0 = await RawClient.connect(cluster.url(0), cluster.token);
    await within(c0.invoke('kv.increment', { key: 'b' }, 'strong').done, 10_000, 'strong op');
    await cluster.until(
      async () => {
        const [a, b] = await cluster!.statuses();
        return a!.digest === b!.digest && a!.settled && b!.settled;
      },
      10_000,
      'replicas 0 and 1 agree',
    );
    expect(await digest(0)).toBe(digestOf({ b: 2 }));
    c0.close();
  });

  it('a wiped replica whose peers compacted what it had delivered stops instead of serving a state without it', async () => {
    const { started, exits } = await startRecordingExits('fatal');
    cluster = started;
    const c0 = await RawClient.connect(cluster.url(0), cluster.token);
    const ops = Array.from({ length: 20 }, (_, i) =>
      c0.invoke('kv.increment', { key: `k${i}` }, i === 19 ? 'strong' : 'weak'),
    );
    await within(Promise.all(ops.map((o) => o.done)), 10_000, 'ops answered');
    await cluster.converged();
    // Every replica delivered them: the others compact them away (gossip prunes their Reqs).
    await cluster.until(
      async () => (await cluster!.statuses()).every((s) => s!.memory.pruned >= 20),
      10_000,
      'Reqs pruned everywhere',
    );
    wipeReplica2();
    cluster.startReplica(2);
    // Replica 2 never sent an op, so no peer holds one of its own; before, it rejoined with none
    // of the 20 ops in its state, for good.
    await replica2Halts(exits);
    await within(c0.invoke('kv.increment', { key: 'k0' }, 'strong').done, 10_000, 'strong op');
    c0.close();
  });
});

/** /status's digest of a state (the state itself is not shown). */
function digestOf(state: Record<string, number>): string {
  return StateDigest.of(Object.entries(state));
}
