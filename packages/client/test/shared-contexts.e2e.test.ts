import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArguments } from '../src/index.js';
import { cutOffHelpers } from './cut-off-cluster.js';

/**
 * Shared contexts against real replicas: two clients join one context, one on replica 0 and one
 * on replica 2, which is cut off from the others. The first's write is acknowledged in the
 * context (its merge commits at replicas 0 and 1); the second's next op in the context waits
 * until replica 2 is back and has the write, and reads it, while the same client's read outside
 * the context is answered at once without it. An op ref (`context.ref`) makes an op of another
 * context wait the same way. Bad context ids, refs and frontiers are refused with errors that
 * say so. Clients keep to their replica (`nearest: false`, `discover: false`).
 */
let cluster: LocalCluster;
const { on, cut, closeAll } = cutOffHelpers(() => cluster);

beforeAll(async () => {
  // Replica 2 is the one cut off: the leader is elsewhere, so the others keep committing.
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error', preferredLeader: 0 });
  await cluster.waitForLeader();
}, 60_000);

afterAll(async () => {
  closeAll();
  await cluster?.stop(1_000);
});

describe('shared contexts across clients', () => {
  it('a member reads another member’s acknowledged write, whichever replica it uses', async () => {
    const branchA = on(0);
    const branchB = on(2);
    await Promise.all([
      branchA.invokeWeak('kv.get', { key: 'warm-up' }),
      branchB.invokeWeak('kv.get', { key: 'warm-up' }),
    ]);
    const a = branchA.joinContext('customer-42');
    const b = branchB.joinContext('customer-42');
    expect(b.id).toBe('customer-42');
    // Both branches work in the context while nothing is cut.
    expect(await b.invokeWeak('kv.put', { key: 'c42/opened', value: true })).toBe(null);
    expect(await a.invokeWeak('kv.get', { key: 'c42/opened' })).toBe(true);

    await cut(true);
    const deposit = a.invokeWeak('kv.put', { key: 'c42/balance', value: 100 });
    expect(await deposit).toBe(null);
    const ref = await a.ref(deposit);
    expect(ref).toMatch(/^ct1\.[0-9:-]*\.[A-Za-z0-9_-]{22}$/);

    // Branch B's op in the context waits for the deposit; its read outside it does not.
    const balance = b.invokeWeak('kv.get', { key: 'c42/balance' });
    let answered = false;
    void balance.then(() => (answered = true));
    expect(await branchB.invokeWeak('kv.get', { key: 'c42/balance' })).toBe(null);
    // An op of another context that names the deposit's ref waits for it too.
    const audit = branchB
      .joinContext('audit')
      .invokeWeak('kv.get', { key: 'c42/balance' }, { after: ref });
    expect(await branchB.invokeWeak('kv.get', { key: 'still-behind' })).toBe(null);
    expect(answered).toBe(false);
    await cut(false);
    expect(await balance).toBe(100);
    expect(await audit).toBe(100);
    expect(branchB.replica()).toBe(2);
  });

  it('refuses a bad context id, a bad op ref and a bad frontier, saying why', async () => {
    const client = on(1);
    expect(() => client.joinContext('')).toThrow(/joinContext: a context id is a non-empty/);
    expect(() => client.joinContext('x'.repeat(129))).toThrow(/at most 128 characters/);
    expect(() => client.joinContext(42 as unknown as string)).toThrow(/a string, not number/);
    const context = client.joinContext('doc');
    await expect(
      context.invokeWeak('kv.get', { key: 'k' }, { after: 'not a ref' }),
    ).rejects.toThrow(/after: this is not a context token/);
    await expect(context.ref(client.invokeWeak('kv.get', { key: 'k' }))).rejects.toThrow(
      /ref\(\) takes an op invoked in this context/,
    );
    // The context's built-ins refuse malformed frontiers, from any client.
    const bad = await client
      .invokeStrong('creek.context.merge' as never, { id: 'doc', seen: [[0, -1]] } as never)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(bad).toBeInstanceOf(InvalidArguments);
    // The context still works after all that.
    expect(await context.invokeWeak('kv.put', { key: 'doc/x', value: 1 })).toBe(null);
    expect(await context.invokeWeak('kv.get', { key: 'doc/x' })).toBe(1);
  });
});
