import { LocalCluster } from '@creek/server/node';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, CreekError, type CreekClient } from '../src/index.js';

/**
 * Indeterminate ops against real replica processes: an op whose fate the caller does not know is
 * abandoned for good, and a copy of it that reaches the others later never takes effect; or its
 * fate is awaited and it is applied once.
 */
let cluster: LocalCluster | null = null;
let creek: CreekClient | null = null;
afterEach(async () => {
  creek?.close();
  creek = null;
  await cluster?.stop(1_000);
  cluster = null;
});

/** A strong increment taken by replica 0 while it is cut off: it times out, fate unknown. */
async function stuckIncrement(key: string) {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  const c = (creek = connect({
    urls: cluster.urls,
    token: cluster.token,
    stallTimeoutMs: 500,
    nearest: false,
  }));
  await c.invokeWeak('kv.get', { key: 'warm-up' });
  expect(c.replica()).toBe(0);
  for (const peer of [1, 2]) await cluster.admin(0, 'block', { peer });
  const e = await c.invokeStrong('kv.increment', { key }, { timeoutMs: 100 }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CreekError);
  const err = e as CreekError;
  expect(err.code).toBe('timeout');
  expect(err.mayHaveTakenEffect).toBe(true);
  return { c, cluster, err };
}

describe('an indeterminate op, real replicas', () => {
  it('abandoned while its only copy is on a cut-off replica: it never takes effect, even once that replica is back', async () => {
    const { c, cluster, err } = await stuckIncrement('abandoned');
    // The abandon waits on replica 0 without a stable answer, so the client moves on to a
    // replica that commits it; the op itself is not resubmitted.
    const fate = await err.indeterminate!.abandon();
    expect(fate).toEqual({ fate: 'abandoned' });
    expect(c.replica()).not.toBe(0);
    // Heal: replica 0's copy of the op now reaches the others and is committed, as a no-op.
    await cluster.admin(0, 'unblock');
    await cluster.converged();
    expect(await c.invokeStrong('kv.get', { key: 'abandoned' })).toBeNull();
    for (const s of await cluster.converged()) expect(s.tentative).toBe(0);
  });

  it('awaited instead: once the replica is back the op is committed, applied once', async () => {
    const { c, cluster, err } = await stuckIncrement('awaited');
    const fate = err.indeterminate!.settled();
    await cluster.admin(0, 'unblock');
    await expect(fate).resolves.toEqual({ fate: 'committed', outcome: { ok: true, value: 1 } });
    await cluster.converged();
    expect(await c.invokeStrong('kv.get', { key: 'awaited' })).toBe(1);
  });
});
