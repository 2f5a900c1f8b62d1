import type { App } from '@creek/app';
import { CreekClient, OperationFailed } from '@creek/client';
import { connectInMemory, MemoryBinding, type MemoryCluster } from '@creek/client/memory';
import { afterEach, describe, expect, it } from 'vitest';
import app, { INVALID_ITEM, type TpccApp } from '../src/tpcc/app.js';
import { checkConsistency, readRows, readState } from '../src/tpcc/consistency.js';
import { forgettingTheDistrict } from './support/tpcc-planted.js';
import { TPCC_LEVELS, TpccInputs, type TpccTransaction } from '../src/tpcc/inputs.js';
import { districtNextKey, orderKey, type DistrictNext, type OrderRow } from '../src/tpcc/keys.js';
import { loadPlan } from '../src/tpcc/population.js';
import { DISTRICTS_PER_WAREHOUSE, scaleOf, TINY } from '../src/tpcc/scale.js';

/**
 * TPC-C through a whole in-process Creek cluster (three replicas, the real replica code): the
 * database is loaded with `tpcc.load` chunks, three terminals (one per replica) run the mix
 * concurrently, each transaction at its level (Payment strong; New-Order, Delivery weak;
 * Order-Status, Stock-Level weak reads), and once the cluster has settled, every replica's state
 * passes the §3.3.2 consistency check. Outcomes only; no timing is asserted.
 */
const LOAD_SEED = 11;
const scale = scaleOf(TINY, 1);
const REPLICAS = 3;

let cluster: MemoryCluster | null = null;
afterEach(() => {
  cluster?.close();
  cluster = null;
});

/** A cluster running `a`, a client per replica, and the database loaded and known everywhere. */
async function loadedCluster(a: App): Promise<CreekClient<TpccApp>[]> {
  // `a` is the TPC-C app or a variant of it with the same ops.
  const tpcc = a as TpccApp;
  const { client, cluster: c } = connectInMemory({ app: tpcc, replicas: REPLICAS });
  cluster = c;
  const clients = [
    client,
    ...Array.from(
      { length: REPLICAS - 1 },
      (_, i) => new CreekClient<TpccApp>(new MemoryBinding(c, i + 1), { app: tpcc }),
    ),
  ];
  // Strong: each chunk is in the committed order when its answer comes.
  for (const chunk of loadPlan(scale, LOAD_SEED)) await client.invokeStrong('tpcc.load', chunk);
  // A strong read at each replica is ordered after the load: once it answers, so has the load.
  for (const cl of clients) await cl.invokeStrong('tpcc.rows', { prefix: 'tpcc/w/', limit: 1 });
  return clients;
}

/** Every replica has executed everything (no tentative ops) and holds the same state. */
async function settled(c: MemoryCluster): Promise<void> {
  await until(() => c.hosts.every((h) => h.settled()));
  await until(() => new Set(c.hosts.map((h) => h.inspect().replica.stateDigest())).size === 1);
}

interface Run {
  done: Map<string, number>;
  failures: string[];
  /** New-Orders drawn with an unused item: exactly these must fail. */
  rollbacks: number;
  newOrders: number;
}

/** One terminal per client, each running `perTerminal` transactions of the mix, concurrently. */
async function workload(clients: CreekClient<TpccApp>[], perTerminal: number): Promise<Run> {
  const run: Run = { done: new Map(), failures: [], rollbacks: 0, newOrders: 0 };
  await Promise.all(
    clients.map(async (client, k) => {
      const inputs = new TpccInputs({ seed: 100 + k, scale, loadSeed: LOAD_SEED });
      for (let n = 0; n < perTerminal; n++) {
        const t: TpccTransaction = inputs.nextTransaction();
        if (t.op === 'tpcc.newOrder' && t.args.lines.some((l) => l.OL_I_ID > scale.items))
          run.rollbacks++;
        try {
          await client.invoke(t.op, t.args, { levels: [t.level], timeoutMs: 20_000 });
          run.done.set(t.op, (run.done.get(t.op) ?? 0) + 1);
          if (t.op === 'tpcc.newOrder') run.newOrders++;
        } catch (e) {
          if (!(e instanceof OperationFailed)) throw e;
          run.failures.push(e.reason);
        }
      }
    }),
  );
  return run;
}

describe('TPC-C on an in-memory Creek cluster', () => {
  it('three terminals, 600 transactions at their levels: every replica consistent (§3.3.2)', async () => {
    const clients = await loadedCluster(app);
    const run = await workload(clients, 200);
    expect([...run.done.keys()].sort()).toEqual(Object.keys(TPCC_LEVELS).sort());
    // The only failures are New-Order's rollbacks (1 %): each one drawn, and nothing else.
    expect(run.rollbacks).toBeGreaterThan(0);
    expect(run.failures.length).toBe(run.rollbacks);
    for (const f of run.failures) expect(f).toMatch(INVALID_ITEM);

    await settled(cluster!);
    for (const h of cluster!.hosts)
      expect(checkConsistency(h.inspect().replica.state())).toEqual([]);

    // Every successful New-Order, wherever it ran and whatever O_ID it was told first, has its
    // own O_ID in the committed state: D_NEXT_O_ID advanced once per order, none lost.
    const state = cluster!.hosts[0]!.inspect().replica.state();
    let placed = 0;
    for (let d = 1; d <= DISTRICTS_PER_WAREHOUSE; d++)
      placed += (state.get(districtNextKey(1, d)) as DistrictNext).D_NEXT_O_ID - 1;
    expect(placed - DISTRICTS_PER_WAREHOUSE * TINY.ordersPerDistrict).toBe(run.newOrders);

    // The same check, on the rows read through ops, as against a live cluster.
    const client = clients[1]!;
    const rows = await readRows((args) => client.invokeWeak('tpcc.rows', args));
    expect(rows.size).toBe([...state.keys()].filter((k) => k.startsWith('tpcc/')).length);
    expect(checkConsistency(rows)).toEqual([]);
    // Read piece by piece where the schema puts rows (as bench:tpcc does): the same rows.
    const pieces = await readState(
      (args) => client.invokeWeak('tpcc.rows', args),
      (key) => client.invokeWeak('kv.get', { key }),
      scale.warehouses,
    );
    expect(pieces).toEqual(rows);
  });

  it('weak New-Orders on both sides of a partition are told the same O_ID; the committed order gives each its own', async () => {
    const clients = await loadedCluster(app);
    const [a, , b] = clients;
    const next = (
      cluster!.hosts[0]!.inspect().replica.state().get(districtNextKey(1, 5)) as DistrictNext
    ).D_NEXT_O_ID;
    cluster!.isolate(2);
    const order = (C_ID: number) => ({
      W_ID: 1,
      D_ID: 5,
      C_ID,
      lines: [{ OL_I_ID: 9, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 1 }],
    });
    const toA = await a!.invokeWeak('tpcc.newOrder', order(1));
    const toB = await b!.invokeWeak('tpcc.newOrder', order(2));
    expect([toA.O_ID, toB.O_ID]).toEqual([next, next]);
    cluster!.heal();
    await settled(cluster!);
    const state = cluster!.hosts[2]!.inspect().replica.state();
    expect((state.get(districtNextKey(1, 5)) as DistrictNext).D_NEXT_O_ID).toBe(next + 2);
    const customersOf = [next, next + 1].map(
      (o) => (state.get(orderKey(1, 5, o)) as OrderRow | undefined)?.O_C_ID,
    );
    expect(customersOf.sort()).toEqual([1, 2]);
    expect(checkConsistency(state)).toEqual([]);
  });

  it('a tentative New-Order is not re-executed when a Payment of its district and customer is committed ahead of it', async () => {
    // The point of the vertical partitioning (keys.ts): New-Order reads no key Payment writes.
    const clients = await loadedCluster(app);
    const [a, , b] = clients;
    await settled(cluster!);
    const replica = cluster!.hosts[2]!.inspect().replica;
    cluster!.isolate(2);
    const told = await b!.invokeWeak('tpcc.newOrder', {
      W_ID: 1,
      D_ID: 5,
      C_ID: 7,
      lines: [{ OL_I_ID: 9, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 1 }],
    });
    const { rollbacks } = replica.metrics;
    // Committed by replicas 0 and 1 while 2 is cut off: ordered before the New-Order, which
    // commits only once the partition heals, so replica 2 must validate its execution again.
    const paid = await a!.invokeStrong('tpcc.payment', {
      W_ID: 1,
      D_ID: 5,
      C_W_ID: 1,
      C_D_ID: 5,
      customer: { by: 'id', C_ID: 7 },
      H_AMOUNT: 1_000,
    });
    expect(paid.C_ID).toBe(7);
    cluster!.heal();
    await settled(cluster!);
    // The Payment is ahead of the New-Order in every replica's order (it committed first), and
    // replica 2 had executed the New-Order before it heard of the Payment. That execution stood:
    // with one key per row it was rolled back, having read the rows the Payment rewrote.
    expect(replica.metrics.rollbacks).toBe(rollbacks);
    const state = replica.state();
    expect((state.get(orderKey(1, 5, told.O_ID)) as OrderRow).O_C_ID).toBe(7);
    expect(checkConsistency(state)).toEqual([]);
  });

  it('a New-Order with an unused item fails, weak or strong, and changes no replica', async () => {
    const clients = await loadedCluster(app);
    await settled(cluster!);
    const before = cluster!.hosts.map((h) => h.inspect().replica.stateDigest());
    const args = {
      W_ID: 1,
      D_ID: 3,
      C_ID: 7,
      lines: [
        { OL_I_ID: 5, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 2 },
        { OL_I_ID: scale.items + 1, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 2 },
      ],
    };
    const client = clients[2]!;
    await expect(client.invokeStrong('tpcc.newOrder', args)).rejects.toThrow(INVALID_ITEM);
    await expect(client.invokeWeak('tpcc.newOrder', args)).rejects.toBeInstanceOf(OperationFailed);
    await settled(cluster!);
    expect(cluster!.hosts.map((h) => h.inspect().replica.stateDigest())).toEqual(before);
    // The same order without the bad line goes through, with the O_ID the rollback did not take.
    const next = (
      cluster!.hosts[0]!.inspect().replica.state().get(districtNextKey(1, 3)) as DistrictNext
    ).D_NEXT_O_ID;
    const ok = await client.invokeStrong('tpcc.newOrder', { ...args, lines: [args.lines[0]!] });
    expect(ok).toMatchObject({ O_ID: next });
  });

  it('catches a New-Order that forgets to increment D_NEXT_O_ID, run through the same workload', async () => {
    const buggy = forgettingTheDistrict('tpcc.newOrder');
    const clients = await loadedCluster(buggy);
    await workload(clients, 60);
    await settled(cluster!);
    const found = checkConsistency(cluster!.hosts[1]!.inspect().replica.state());
    expect(found.map((v) => v.condition)).toContain(2);
  });
});

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the cluster to settle');
    await new Promise((r) => setTimeout(r, 5));
  }
}
