import { LocalCluster } from '@creek/server/node';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type CreekClient } from '../src/index.js';

/**
 * A client whose replica dies: every op it had in flight is resubmitted to another replica and
 * applied once; the session keeps read-your-writes across the move (issue: client SDK). The
 * clients keep to their URLs' order (`nearest: false`): on one machine, round trips differ by
 * load, not distance, and these tests name the replica a client starts at.
 */
let cluster: LocalCluster | null = null;
let creek: CreekClient | null = null;
afterEach(async () => {
  creek?.close();
  creek = null;
  await cluster?.stop(1_000);
  cluster = null;
});

async function connectedTo(c: CreekClient, replica: number): Promise<void> {
  await c.invokeWeak('kv.get', { key: 'warm-up' });
  expect(c.replica()).toBe(replica);
}

describe('failover to another replica', () => {
  it('gives every op in flight its result once when its replica is killed', async () => {
    const local = (cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' }));
    const c = (creek = connect({ urls: local.urls, token: local.token, nearest: false }));
    await connectedTo(c, 0);
    // Each op increments a key of its own: a loss leaves it absent, a double application at 2.
    const n = 150;
    let answered = 0;
    const ops = Array.from({ length: n }, (_, i) => {
      const args = { key: `once/${i}` };
      const op = i % 4 === 0 ? c.invoke('kv.increment', args) : c.invokeWeak('kv.increment', args);
      // Killed at the 20th answer, not after a poll: a poll on a busy machine could find every op
      // answered already (the strong ones too), and nothing would be in flight to fail over.
      void op.then(() => {
        if (++answered === 20) local.kill(0);
      });
      return op;
    });
    const results = await Promise.all(ops);
    expect(results).toEqual(Array.from({ length: n }, () => 1));
    // The client serves from another replica now. Asked through an op, not read at once: on a
    // busy machine the last answers can arrive before the killed socket's close does.
    await c.invokeWeak('kv.get', { key: 'after-the-kill' });
    expect(c.replica()).not.toBe(0);
    // The killed replica comes back with what it had made durable, re-gossips it and converges:
    // submissions it held are now found to be duplicates.
    cluster.startReplica(0);
    await cluster.converged();
    for (let i = 0; i < n; i++)
      expect(await c.invokeStrong('kv.get', { key: `once/${i}` }), `once/${i}`).toBe(1);
  });

  it('leaves a replica that is frozen (SIGSTOP: connection open, nothing answered), ops applied once', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const c = (creek = connect({
      urls: cluster.urls,
      nearest: false,
      token: cluster.token,
      stallTimeoutMs: 1_000,
    }));
    await connectedTo(c, 0);
    expect(cluster.signal(0, 'SIGSTOP')).toBe(true);
    try {
      const n = 40;
      const ops = Array.from({ length: n }, (_, i) => {
        const args = { key: `frozen/${i}` };
        return i % 2 === 0
          ? c.invokeStrong('kv.increment', args)
          : c.invokeWeak('kv.increment', args);
      });
      // Every op is answered while replica 0 is still frozen: by another replica.
      expect(await Promise.all(ops)).toEqual(Array.from({ length: n }, () => 1));
      expect(c.replica()).not.toBe(0);
    } finally {
      cluster.signal(0, 'SIGCONT');
    }
    // Replica 0 held the first submissions: once it catches up, they are duplicates.
    await cluster.converged();
    for (let i = 0; i < 40; i++)
      expect(await c.invokeStrong('kv.get', { key: `frozen/${i}` }), `frozen/${i}`).toBe(1);
  });

  it('leaves a replica that is paused (it refuses ops) at once: no op fails, each applied once', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const c = (creek = connect({ urls: cluster.urls, token: cluster.token, nearest: false }));
    await connectedTo(c, 0);
    await cluster.admin(0, 'pause');
    const n = 20;
    const ops = Array.from({ length: n }, (_, i) => {
      const args = { key: `paused/${i}` };
      return i % 2 === 0 ? c.invokeStrong('kv.increment', args) : c.invoke('kv.increment', args);
    });
    expect(await Promise.all(ops)).toEqual(Array.from({ length: n }, () => 1));
    expect(c.replica()).not.toBe(0);
    await cluster.admin(0, 'resume');
    await cluster.converged();
    for (let i = 0; i < n; i++)
      expect(await c.invokeStrong('kv.get', { key: `paused/${i}` }), `paused/${i}`).toBe(1);
  });

  it('leaves a replica cut off from the others, which answers only tentatively, for one that commits', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const c = (creek = connect({
      urls: cluster.urls,
      nearest: false,
      token: cluster.token,
      stallTimeoutMs: 1_000,
    }));
    await connectedTo(c, 0);
    for (const peer of [1, 2]) await cluster.admin(0, 'block', { peer });
    const write = c.invoke('kv.increment', { key: 'cut-off' });
    // Replica 0 answers at once from its own order: alive, not useful for a stable answer.
    await new Promise<void>((resolve) => write.setCallbacks({ onUpdate: () => resolve() }));
    expect(c.replica()).toBe(0);
    // The stable answer comes while replica 0 is still cut off: from another replica.
    expect(await write).toBe(1);
    expect(c.replica()).not.toBe(0);
    await cluster.admin(0, 'unblock');
    await cluster.converged();
    expect(await c.invokeStrong('kv.get', { key: 'cut-off' })).toBe(1);
  });

  it('keeps read-your-writes when the write reached no other replica before its replica died', async () => {
    cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
    const c = (creek = connect({ urls: cluster.urls, token: cluster.token, nearest: false }));
    await connectedTo(c, 0);
    await c.invokeStrong('kv.put', { key: 'mine', value: 'old' });
    // Replica 0's messages to the others now take 60 s: the next write stays on its disk alone.
    await cluster.admin(0, 'delay', { peer: 1, ms: 60_000 });
    await cluster.admin(0, 'delay', { peer: 2, ms: 60_000 });
    expect(await c.invokeWeak('kv.put', { key: 'mine', value: 'new' })).toBeNull();
    cluster.kill(0);
    // The read goes to replica 1 or 2, which must not answer before they have the write: replica
    // 0 restarts and re-gossips it.
    const read = c.invokeWeak('kv.get', { key: 'mine' });
    await new Promise((r) => setTimeout(r, 1_000));
    cluster.startReplica(0);
    expect(await read).toBe('new');
    // And every later read, wherever it runs, sees it too (monotonic reads).
    expect(await c.invokeWeak('kv.get', { key: 'mine' })).toBe('new');
  });
});
