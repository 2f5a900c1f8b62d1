import { fileURLToPath } from 'node:url';
import type { App } from '@creek/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import type { ExecutionResult, Outcome, Output } from '@creek/replica/core/types.js';
import type { Executor } from '@creek/replica/exec/executor.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { WorkerPoolExecutor } from '../../src/exec/worker-pool-executor.js';

/**
 * The execution guard as each executor runs it: the same app, loaded on this thread for the
 * inline executor and by worker threads for the pool, refuses each source of nondeterminism with
 * a failed outcome naming the alternative, and leaves what is deterministic alone.
 */

const APP_PATH = fileURLToPath(new URL('./fixtures/guarded-app.mjs', import.meta.url));
const T0 = 1_700_000_000_000;

/** Each op of the fixture that must be refused, and what its error must say. */
const REFUSED: ReadonlyArray<[op: string, message: RegExp]> = [
  ['use.mathRandom', /^Math\.random\(\) is not allowed inside an op: .*Use tx\.random\(\)/],
  ['use.dateNow', /^Date\.now\(\) is not allowed inside an op: .*Use tx\.now\(\)/],
  ['use.newDate', /^new Date\(\) without arguments is not allowed .*new Date\(tx\.now\(\)\)/],
  ['use.dateCall', /^Date\(\) is not allowed inside an op: .*tx\.now\(\)/],
  ['use.performanceNow', /^performance\.now\(\) is not allowed inside an op: .*Use tx\.now\(\)/],
  ['use.randomUUID', /^crypto\.randomUUID\(\) is not allowed .*from tx\.random\(\)/],
  ['use.getRandomValues', /^crypto\.getRandomValues\(\) is not allowed .*from tx\.random\(\)/],
  ['use.setTimeout', /^setTimeout\(\) is not allowed inside an op: /],
  ['use.setInterval', /^setInterval\(\) is not allowed inside an op: /],
  ['use.setImmediate', /^setImmediate\(\) is not allowed inside an op: /],
  ['use.queueMicrotask', /^queueMicrotask\(\) is not allowed inside an op: /],
  ['returns.thenable', /^operation 'returns\.thenable' returned a Promise .*must be synchronous/],
];

/** One replica; invokes each op weak and collects its first (tentative) outcome. */
class Driver {
  readonly outcomes = new Map<number, Outcome>();
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
      } else if (o.type === 'respond' && !this.outcomes.has(o.tag))
        this.outcomes.set(o.tag, o.outcome);
    }
  }

  executed(result: ExecutionResult): void {
    this.handle(this.replica.executed(result));
  }

  /** Invokes every op once, and waits until each has its outcome. */
  async run(ops: readonly string[]): Promise<Map<string, Outcome>> {
    ops.forEach((op, i) =>
      this.handle(this.replica.invoke(T0 + i, { op, args: {}, strong: false, tag: i + 1 })),
    );
    for (let tries = 0; this.outcomes.size < ops.length; tries++) {
      if (tries > 2000) throw new Error(`only ${this.outcomes.size} of ${ops.length} answered`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return new Map(ops.map((op, i) => [op, this.outcomes.get(i + 1)!]));
  }
}

let app: App;
let pool: WorkerPoolExecutor | undefined;

beforeAll(async () => {
  app = ((await import(APP_PATH)) as { default: App }).default;
});
afterAll(async () => {
  await pool?.close();
});

const OPS = [...REFUSED.map(([op]) => op), 'use.allowed'];

function expectGuarded(outcomes: Map<string, Outcome>): void {
  for (const [op, message] of REFUSED) {
    const outcome = outcomes.get(op);
    expect(outcome?.ok, op).toBe(false);
    expect(outcome?.ok === false ? outcome.error : '', op).toMatch(message);
  }
  const allowed = outcomes.get('use.allowed');
  expect(allowed?.ok).toBe(true);
  expect(allowed?.ok === true ? allowed.value : null).toMatchObject({
    // Invoked last, at T0 + its index: tx.now() is that time.
    iso: new Date(T0 + OPS.indexOf('use.allowed')).toISOString(),
    isDate: true,
    utc: Date.UTC(2024, 0, 1),
    parsed: Date.parse('2024-01-01T00:00:00Z'),
  });
}

describe('the execution guard', () => {
  it('refuses each source of nondeterminism in the inline executor', async () => {
    const replica = new Replica({ id: 0, app, noopIntervalMs: 1e9 });
    expectGuarded(await new Driver(replica, new InlineExecutor(app)).run(OPS));
    // And this thread's globals are its own again.
    expect(typeof Math.random()).toBe('number');
    expect(Date.now()).toBeGreaterThan(T0);
    expect(new Date()).toBeInstanceOf(Date);
    expect(typeof performance.now()).toBe('number');
    expect(crypto.randomUUID()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses each source of nondeterminism in the worker threads', async () => {
    pool = await WorkerPoolExecutor.start({
      appPath: APP_PATH,
      app,
      workers: 1,
      onResult: (r) => driver.executed(r), // results arrive once `driver` is set
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
    const driver = new Driver(replica, pool);
    expectGuarded(await driver.run(OPS));
    // The first executions ran on the worker, not inline on this thread.
    expect(pool.dispatched).toBeGreaterThanOrEqual(OPS.length);
  });
});
