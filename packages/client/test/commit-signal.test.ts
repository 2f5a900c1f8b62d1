import { defineApp } from '@creek/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientClosed, InvalidArguments, Timeout } from '../src/errors.js';
import { connectInMemory, type MemoryCluster } from '../src/memory/index.js';
import { scriptedClients } from './scripted-sockets.js';

/**
 * `correctable.committed()`: when an op has its place in the committed order (a weak op's
 * "synced" mark), carried by the frames the replica already sends (`committed`, stable views).
 */
const client = scriptedClients();

/** Whether `p` has settled yet, and how. */
async function peek(p: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  const t = Symbol('pending');
  const r = await Promise.race([
    p.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    new Promise<typeof t>((res) => setTimeout(() => res(t), 10)),
  ]);
  return r === t ? 'pending' : r;
}

describe('committed(), over the Creek binding', () => {
  it('a weak op: answered tentatively first, committed when the replica says so', async () => {
    const { creek, socket } = client();
    const s = await socket(0);
    s.welcome();
    const op = creek.invokeWeak('kv.put' as never, { key: 'k', value: 1 } as never);
    const [sent] = s.invokes();
    s.receive({
      t: 'view',
      opId: sent!.opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 1 },
    });
    await expect(op).resolves.toBeNull();
    const committed = op.committed();
    expect(await peek(committed)).toBe('pending');
    s.receive({ t: 'committed', below: (sent!.seq as number) + 1 });
    await expect(committed).resolves.toBeUndefined();
  });

  it('a strong op at its stable view; a weak read, never ordered, at its answer', async () => {
    const { creek, socket } = client();
    const s = await socket(0);
    s.welcome();
    const strong = creek.invokeStrong('kv.put' as never, { key: 'k', value: 1 } as never);
    const read = creek.invokeWeak('kv.get' as never, { key: 'k' } as never);
    const [a, b] = s.invokes();
    expect(await peek(strong.committed())).toBe('pending');
    s.receive({ t: 'view', opId: a!.opId, level: 'stable', outcome: { ok: true, value: null } });
    s.receive({
      t: 'view',
      opId: b!.opId,
      level: 'tentative',
      outcome: { ok: true, value: 1 },
      id: null,
    });
    await expect(strong.committed()).resolves.toBeUndefined();
    await expect(read.committed()).resolves.toBeUndefined();
  });

  it('rejects for an op that never will be: refused arguments, a timeout before it was sent, a closed client', async () => {
    const { creek, socket } = client();
    await expect(creek.invoke('' as never, {} as never).committed()).rejects.toBeInstanceOf(
      InvalidArguments,
    );
    const early = creek.invoke('kv.put' as never, { key: 'k', value: 1 } as never, {
      timeoutMs: 10,
    });
    await expect(early.committed()).rejects.toBeInstanceOf(Timeout);
    const s = await socket(0);
    s.welcome();
    const answered = creek.invokeWeak('kv.put' as never, { key: 'k', value: 2 } as never);
    const [sent] = s.invokes();
    s.receive({
      t: 'view',
      opId: sent!.opId,
      level: 'tentative',
      outcome: { ok: true, value: null },
      id: { replica: 0, eventNo: 2 },
    });
    await answered;
    const committed = answered.committed();
    creek.close();
    await expect(committed).rejects.toBeInstanceOf(ClientClosed);
  });
});

describe('committed(), over the in-memory binding', () => {
  let cluster: MemoryCluster | null = null;
  afterEach(() => cluster?.close());

  it('waits for the commit of a weak op while its replica is cut off, and comes once healed', async () => {
    const m = connectInMemory({ app: defineApp({}) });
    cluster = m.cluster;
    await m.client.invokeStrong('kv.put', { key: 'warm', value: 1 });
    m.cluster.isolate(0);
    const op = m.client.invokeWeak('kv.put', { key: 'k', value: 1 });
    await op;
    const committed = op.committed();
    await new Promise((r) => setTimeout(r, 200));
    expect(await peek(committed)).toBe('pending');
    m.cluster.heal();
    await expect(committed).resolves.toBeUndefined();
  });
});
