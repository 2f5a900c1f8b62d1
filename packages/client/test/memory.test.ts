import { defineApp, op } from '@creek/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ClientClosed, InvalidArguments, OperationFailed, Unavailable } from '../src/index.js';
import { connectInMemory, MemoryBinding, type MemoryCluster } from '../src/memory/index.js';
import { CreekClient } from '../src/client.js';

const app = defineApp({
  withdraw: op({
    args: z.object({ account: z.string(), amount: z.number().positive() }),
    run(tx, { account, amount }) {
      const balance = (tx.get(account) as number | undefined) ?? 0;
      if (balance < amount) throw new Error(`insufficient funds: ${balance} < ${amount}`);
      tx.put(account, balance - amount);
      return balance - amount;
    },
  }),
});

describe('the in-memory binding', () => {
  let cluster: MemoryCluster | null = null;
  afterEach(() => cluster?.close());

  it('gives a preliminary and a final view, typed from the app', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    await m.client.invokeStrong('kv.put', { key: 'acct', value: 100 });
    const views: [unknown, string][] = [];
    const left = await m.client.invoke('withdraw', { account: 'acct', amount: 30 }).setCallbacks({
      onUpdate: (v, view) => views.push([v, view.level]),
    });
    expect(views).toEqual([[70, 'weak']]);
    expect(left).toBe(70);
  });

  it('reports a failing op and rejects bad arguments before ordering', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    await expect(
      m.client.invokeStrong('withdraw', { account: 'empty', amount: 5 }),
    ).rejects.toBeInstanceOf(OperationFailed);
    await expect(m.client.invoke('withdraw', { account: 'x', amount: -1 })).rejects.toBeInstanceOf(
      InvalidArguments,
    );
  });

  it('answers weak ops at an isolated replica but holds its strong ops until the partition heals', async () => {
    const m = connectInMemory({ app, replicas: 3, replica: 2 });
    cluster = m.cluster;
    await m.client.invokeStrong('kv.put', { key: 'warm', value: 1 });
    m.cluster.isolate(2);
    expect(await m.client.invokeWeak('kv.increment', { key: 'n' })).toBe(1);
    let stable = false;
    let tentative: unknown;
    const c = m.client.invoke('kv.increment', { key: 'n' }).setCallbacks({
      onUpdate: (v) => (tentative = v),
      onFinal: () => (stable = true),
    });
    // Wait for the tentative answer (not a fixed sleep); the isolated replica cannot make it
    // stable however long it waits.
    await vi.waitFor(() => expect(tentative).toBe(2), { timeout: 30_000, interval: 10 });
    expect(stable).toBe(false);
    m.cluster.heal();
    expect(await c).toBe(2);
    // Another client at another replica sees both increments once everything is stable.
    const other = new CreekClient(new MemoryBinding(m.cluster, 0));
    expect(await other.invokeStrong('kv.get', { key: 'n' })).toBe(2);
  });

  it('fails an op still waiting when the cluster closes, and every call after', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    m.cluster.isolate(0); // its strong ops wait for the others
    const waiting = m.client.invokeStrong('kv.put', { key: 'k', value: 1 });
    m.cluster.close();
    await expect(waiting).rejects.toBeInstanceOf(Unavailable);
    await expect(m.client.invokeWeak('kv.get', { key: 'k' })).rejects.toThrow(/cluster was closed/);
  });

  it('fails calls after client.close() with ClientClosed; the cluster runs on for others', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    const told: string[] = [];
    m.client.onStatus((s) => told.push(s));
    expect(m.client.status()).toBe('connected');
    m.client.close();
    // It says it is closed, to status() and to its listeners, however it was connected.
    expect(m.client.status()).toBe('closed');
    expect(told).toEqual(['closed']);
    await expect(m.client.invokeWeak('kv.get', { key: 'k' })).rejects.toBeInstanceOf(ClientClosed);
    const other = new CreekClient(new MemoryBinding(m.cluster, 1));
    expect(await other.invokeStrong('kv.get', { key: 'k' })).toBeNull();
  });

  it('answers an unknown op with advice about its name, not its arguments', async () => {
    const m = connectInMemory({ app });
    cluster = m.cluster;
    const call = m.client.invoke('withdrow' as 'withdraw', { account: 'a', amount: 1 });
    await expect(call).rejects.toMatchObject({
      code: 'invalid-arguments',
      op: 'withdrow',
      field: 'op',
    });
    await expect(call).rejects.toThrow(/unknown operation 'withdrow'.*check the op name/);
    await expect(call).rejects.not.toThrow(/fix the arguments/);
  });

  it('refuses a replica the cluster does not have when the client is made', () => {
    const m = connectInMemory({ app, replicas: 2 });
    cluster = m.cluster;
    expect(() => new MemoryBinding(m.cluster, 2)).toThrow(/replicas 0 to 1/);
  });
});
