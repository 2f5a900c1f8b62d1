import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateDigest } from '@creek/replica/core/state-digest.js';
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
  async function wipeReplica2(): Promise<void> {
    await cluster!.killed(2);
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
    // The replicas compare their states, and agree.
    expect(metrics).toMatch(/^creek_divergence\{replica="0"\} 0$/m);
    expect(metrics).toMatch(/^creek_stable_answers_stopped\{replica="0"\} 0$/m);
    expect(s[0]!.divergence).toMatchObject({ incidents: 0, current: null });
    expect(s[0]!.divergence.comparisons).toBeGreaterThan(0);
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

  it('a replica that holds the writes of quiet turns, killed with SIGKILL under load, loses nothing acknowledged', async () => {
    // Neither the origin nor the leader: most of its turns only store pushed Reqs, and it holds
    // their writes until a turn that sends something, or 10 ms (group-commit.ts). Killed, it
    // loses what it held, which nobody had been told of, and gets it again from its peers.
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const leader = (await cluster.status(0))!.leader!;
    const origin = (leader + 1) % 3;
    const quiet = (leader + 2) % 3;
    const client = await RawClient.connect(cluster.url(origin), cluster.token);
    const N = 300;
    const ops: ReturnType<RawClient['invoke']>[] = [];
    let gone: Promise<void> | null = null;
    for (let i = 0; i < N; i++) {
      ops.push(
        client.invoke('kv.increment', { key: `q${i % 100}` }, i % 4 === 0 ? 'strong' : 'weak'),
      );
      if (i === 150) gone = cluster.killed(quiet);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 3));
    }
    // The process must be gone before its data directory is opened again.
    await gone;
    cluster.startReplica(quiet);
    await within(Promise.all(ops.map((o) => o.done)), 30_000, 'every op answered');
    const final = await cluster.converged(40_000);
    const expected = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`q${i}`, 3]));
    expect(final.map((s) => s.digest)).toEqual([0, 1, 2].map(() => digestOf(expected)));
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
    // Its tentative view comes (waited for, not slept on); a minority can never make it stable.
    const levels0 = (): (string | undefined)[] =>
      strong.views.frames.map((f) => (f.t === 'view' ? f.level : f.t));
    await cluster.until(async () => levels0().length > 0, 30_000, 'a tentative view');
    // A while longer: a stable view would be a bug (this pause can only make the check stricter).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(levels0()).toEqual(['tentative']);
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

  it('a replica whose data directory was wiped takes no op until it hears its peers, then rejoins under a new identity', async () => {
    const { started, exits } = await startRecordingExits('error');
    cluster = started;
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    const before = Array.from({ length: 5 }, (_, i) =>
      c2.invoke('kv.increment', { key: `k${i}` }, 'weak'),
    );
    await within(Promise.all(before.map((o) => o.done)), 10_000, 'ops answered at replica 2');
    c2.close();
    await cluster.converged();
    expect((await cluster.status(2))!.identity).toEqual({ origin: 2, incarnation: 0 });
    await wipeReplica2();
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
      {
        t: 'error',
        code: 'unavailable',
        message: expect.stringMatching(/learning from its peers/),
      },
    ]);
    expect((await cluster.status(2))!.identity).toEqual({ origin: null, incarnation: null });
    // Live, but not ready: /health 200, /ready 503 with the reason (probes need no JSON parsing).
    const health = await fetch(`${cluster.httpUrl(2)}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${cluster.httpUrl(2)}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/learning/),
    });
    // Its peers speak again: they hold its old ops, so it takes its slot's next incarnation and
    // numbers its ops under origin 2 + 256; the old ones stay what they were.
    await cluster.admin(0, 'resume');
    await cluster.admin(1, 'resume');
    await cluster.until(
      async () => (await cluster!.status(2))?.learning === false,
      10_000,
      'replica 2 done learning',
    );
    expect((await cluster.status(2))!.identity).toEqual({ origin: 258, incarnation: 1 });
    const again = fresh.invoke('kv.increment', { key: 'k0' }, 'strong');
    await within(again.done, 10_000, 'a strong op at the new replica 2');
    const view = again.views.frames.find((f) => f.t === 'view') as { id?: { replica: number } };
    expect(view.id?.replica).toBe(258);
    fresh.close();
    await cluster.converged();
    const s = await cluster.statuses();
    expect(s[2]!.digest).toBe(s[0]!.digest);
    expect(s[0]!.digest).toBe(digestOf({ k0: 2, k1: 1, k2: 1, k3: 1, k4: 1 }));
    // Only the SIGKILL ended a replica: nobody halted.
    expect(exits).toEqual([{ replica: 2, code: null }]);
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
    await wipeReplica2();
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
    // The holder comes back: replica 2 learns of its lost op and numbers its ops above it, under
    // a new incarnation, rather than like it.
    await cluster.admin(1, 'resume');
    await cluster.until(
      async () => (await cluster!.status(2))?.learning === false,
      10_000,
      'replica 2 done learning',
    );
    expect((await cluster.status(2))!.identity.incarnation).toBe(1);
    await within(fresh.invoke('kv.increment', { key: 'b' }, 'strong').done, 10_000, 'strong op');
    fresh.close();
    await cluster.converged();
    expect(await digest(0)).toBe(digestOf({ b: 2 }));
    expect(await digest(2)).toBe(digestOf({ b: 2 }));
    expect(exits).toEqual([{ replica: 2, code: null }]);
  });

  it('a replica restarted on an older copy of its data directory halts instead of reusing its op ids', async () => {
    const { started, exits } = await startRecordingExits('fatal');
    cluster = started;
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    await within(c2.invoke('kv.increment', { key: 'a' }, 'strong').done, 10_000, 'op at 2');
    await cluster.converged();
    // A copy of its directory, taken while it runs (SQLite's WAL makes a consistent one).
    const copy = join(cluster.dir, 'replica-2-copy');
    cpSync(join(cluster.dir, 'replica-2'), copy, { recursive: true });
    await within(c2.invoke('kv.increment', { key: 'a' }, 'strong').done, 10_000, 'op at 2');
    c2.close();
    await cluster.converged();
    await wipeReplica2();
    cpSync(copy, join(cluster.dir, 'replica-2'), { recursive: true });
    cluster.startReplica(2);
    // Its peers hold an op of its own that the copy lacks: it cannot tell which ids are taken.
    await replica2Halts(exits);
    const c0 = await RawClient.connect(cluster.url(0), cluster.token);
    await within(c0.invoke('kv.increment', { key: 'a' }, 'strong').done, 10_000, 'strong op');
    c0.close();
  });

  it('a replica whose data directory is deleted under load rebuilds itself from a peer (state transfer) and converges', async () => {
    const { started, exits } = await startRecordingExits('error');
    cluster = started;
    const clients = await Promise.all(
      [0, 1].map((i) => RawClient.connect(cluster!.url(i), cluster!.token)),
    );
    // Load from replicas 0 and 1 while replica 2 is wiped and comes back: increments of 50 keys,
    // one in five strong; each key's final count says how many were applied (each once).
    let stop = false;
    let sent = 0;
    const applied = new Map<string, number>();
    const load = Promise.all(
      clients.map(async (c, ci) => {
        for (let n = 0; !stop; n++) {
          const key = `k${(n * 7 + ci) % 50}`;
          const op = c.invoke('kv.increment', { key }, n % 5 === 0 ? 'strong' : 'weak');
          sent++;
          await within(op.done, 20_000, 'a load op');
          if (op.views.frames.some((f) => f.t === 'view'))
            applied.set(key, (applied.get(key) ?? 0) + 1);
        }
      }),
    );
    await cluster.until(async () => sent > 300, 20_000, 'load under way');
    // Compacted by the others: the Reqs of what every replica had are pruned.
    await cluster.until(
      async () => (await cluster!.statuses()).every((s) => s!.memory.pruned >= 100),
      20_000,
      'Reqs pruned everywhere',
    );
    await wipeReplica2();
    await new Promise((r) => setTimeout(r, 300));
    cluster.startReplica(2);
    await cluster.until(
      async () => (await cluster!.status(2))?.learning === false,
      20_000,
      'replica 2 rebuilt and done learning',
    );
    const rebuilt = (await cluster.status(2))!;
    expect(rebuilt.transfers.installed).toBeGreaterThanOrEqual(1);
    expect(rebuilt.transfers.chunksReceived).toBeGreaterThanOrEqual(1);
    // A new incarnation only if its peers held ops of its slot (its no-ops, if it issued any).
    expect(rebuilt.identity.origin).not.toBeNull();
    // It serves again, under load.
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    await within(c2.invoke('kv.increment', { key: 'k0' }, 'strong').done, 10_000, 'op at 2');
    applied.set('k0', (applied.get('k0') ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    for (const c of [...clients, c2]) c.close();
    await cluster.converged();
    const s = await cluster.statuses();
    expect(s[1]!.digest).toBe(s[0]!.digest);
    expect(s[2]!.digest).toBe(s[0]!.digest);
    // Every answered op applied once: the agreed state is the one the answers add up to.
    expect(s[0]!.digest).toBe(digestOf(Object.fromEntries(applied)));
    expect(exits).toEqual([{ replica: 2, code: null }]);
  });
});

/** /status's digest of a state (the state itself is not shown). */
function digestOf(state: Record<string, number>): string {
  return StateDigest.of(Object.entries(state));
}
