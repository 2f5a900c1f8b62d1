import { fileURLToPath } from 'node:url';
import type { App } from '@creek/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import type { ExecutionResult, Output, Response } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import type { Executor } from '@creek/replica/exec/executor.js';
import { WorkerPoolExecutor } from '../../src/exec/worker-pool-executor.js';
import { Prng } from '../../src/sim/prng.js';

const APP_PATH = fileURLToPath(new URL('./fixtures/bank-app.mjs', import.meta.url));
const T0 = 1_700_000_000_000;

/** One replica whose executions go through `executor`; results may come back later. */
class Driver {
  readonly responses = new Map<number, Response[]>();
  constructor(
    readonly replica: Replica,
    private readonly executor: Executor,
  ) {}

  handle(outputs: Output[]): void {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.type === 'execute') {
        const r = this.executor.execute(o.job);
        if (r !== undefined) outputs.push(...this.replica.executed(r));
      } else if (o.type === 'respond') {
        const list = this.responses.get(o.tag) ?? [];
        list.push(o);
        this.responses.set(o.tag, list);
      }
    }
  }

  executed(result: ExecutionResult): void {
    this.handle(this.replica.executed(result));
  }

  async settled(): Promise<void> {
    for (let i = 0; i < 2000; i++) {
      const s = this.replica.stats();
      if (s.running === 0 && s.unvalidated === 0) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('the replica did not settle');
  }
}

/** A contended workload: transfers among 4 accounts, CPU-costly ops on 3 keys, some totals. */
function workload(seed: number, n: number): { op: string; args: unknown }[] {
  const prng = new Prng(seed);
  return Array.from({ length: n }, () => {
    const pick = prng.float(0, 1);
    if (pick < 0.5) {
      const from = `acct/${prng.int(0, 3)}`;
      return {
        op: 'acct.transfer',
        args: { from, to: `acct/${prng.int(0, 3)}`, amount: prng.int(1, 60) },
      };
    }
    if (pick < 0.9)
      return {
        op: 'work.spin',
        args: { key: `spin/${prng.int(0, 2)}`, iterations: prng.int(0, 20_000) },
      };
    return { op: 'acct.total', args: {} };
  });
}

let app: App;
let pool: WorkerPoolExecutor;
let driver: Driver;

beforeAll(async () => {
  app = ((await import(APP_PATH)) as { default: App }).default;
});
afterAll(async () => {
  await pool?.close();
});

describe('the worker-pool executor', () => {
  it('gives every op the result serial execution gives, with results arriving out of order', async () => {
    const ops = workload(42, 400);
    // Serial reference: one slot, inline.
    const serialReplica = new Replica({ id: 0, app, noopIntervalMs: 1e9 });
    const serial = new Driver(serialReplica, new InlineExecutor(app));
    ops.forEach((o, i) =>
      serial.handle(serialReplica.invoke(T0 + i, { ...o, strong: false, tag: i + 1 })),
    );
    await serial.settled();

    pool = await WorkerPoolExecutor.start({
      appPath: APP_PATH,
      app,
      workers: 2,
      onResult: (r) => driver.executed(r),
      onWorkerLost: (e) => {
        throw e;
      },
    });
    const replica = new Replica({
      id: 0,
      app,
      noopIntervalMs: 1e9,
      executionSlots: 3,
      storeObserver: pool,
    });
    driver = new Driver(replica, pool);
    // Ops arrive in bursts, so that several are ahead of the frontier at once.
    for (let i = 0; i < ops.length; i++) {
      driver.handle(replica.invoke(T0 + i, { ...ops[i]!, strong: false, tag: i + 1 } as never));
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 1));
    }
    await driver.settled();

    const first = (d: Driver, tag: number): unknown => d.responses.get(tag)?.[0]?.outcome;
    // Ordered ops only: a weak read-only op is answered from the state when it is served, which
    // the two runs reach at different moments.
    const mismatches = ops.flatMap((o, i) => {
      const got = JSON.stringify(first(driver, i + 1));
      const want = JSON.stringify(first(serial, i + 1));
      return o.op === 'acct.total' || got === want ? [] : [`${i + 1} ${o.op}: ${got} vs ${want}`];
    });
    expect(mismatches).toEqual([]);
    expect(Object.fromEntries(replica.state())).toEqual(Object.fromEntries(serialReplica.state()));
    expect(pool.dispatched).toBeGreaterThan(50);
    expect(replica.metrics.aheadExecutions).toBeGreaterThan(0);
  });
});
