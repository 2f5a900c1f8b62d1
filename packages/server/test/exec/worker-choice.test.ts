import { fileURLToPath } from 'node:url';
import type { App } from '@creek/app';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Replica } from '@creek/replica/core/replica.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import type { ExecutionResult, Output } from '@creek/replica/core/types.js';
import { loadApp } from '../../src/exec/load-app.js';
import { WorkerPayoff, workersForCores } from '../../src/exec/worker-choice.js';
import { WorkerPoolExecutor } from '../../src/exec/worker-pool-executor.js';

/**
 * `--workers auto` (exec/worker-choice.ts): a count from the cores, and workers turned off for good
 * once a window of jobs shows that handing a job over costs the main thread as much as running it
 * — with the ops' results unchanged across the switch.
 */
const APP_PATH = fileURLToPath(new URL('./fixtures/bank-app.mjs', import.meta.url));
const T0 = 1_700_000_000_000;
let app: App;
let pool: WorkerPoolExecutor | null = null;
beforeAll(async () => {
  app = await loadApp(APP_PATH);
});
afterEach(async () => {
  await pool?.close();
  pool = null;
});

describe('how many workers auto starts', () => {
  it('one per core beside the main thread, none on one core, at most eight', () => {
    expect(workersForCores(1)).toMatchObject({ workers: 0 });
    expect(workersForCores(2)).toMatchObject({
      workers: 1,
      why: '2 cores: 1 worker beside the main thread',
    });
    expect(workersForCores(4).workers).toBe(3);
    expect(workersForCores(16)).toMatchObject({
      workers: 8,
      why: expect.stringMatching(/at most 8/),
    });
  });
});

describe('whether the workers pay', () => {
  it('decides once its window is measured: off when the hand-off costs as much as the job', () => {
    const cheap = new WorkerPayoff(3);
    cheap.record(40, 10);
    cheap.record(40, 10);
    expect(cheap.decided).toBeNull();
    cheap.record(40, 10);
    expect(cheap.decided).toMatchObject({ pays: false });
    expect(cheap.decided!.reason).toMatch(
      /40\.0 µs handing each to a worker, which ran it in 10\.0 µs/,
    );
    const heavy = new WorkerPayoff(2);
    heavy.record(40, 900);
    heavy.record(60, 1100);
    expect(heavy.decided).toMatchObject({ pays: true });
    expect([heavy.handoffMicros, heavy.jobMicros]).toEqual([50, 1000]);
    expect(() => new WorkerPayoff(0)).toThrow(/positive integer/);
  });
});

/** One replica on `pool`; resolves once every op of `ops` has its first answer. */
async function run(
  p: WorkerPoolExecutor,
  ops: readonly { op: string; args: unknown }[],
): Promise<{ replica: Replica; answers: Map<number, unknown> }> {
  const replica = new Replica({
    id: 0,
    app,
    noopIntervalMs: 1e9,
    executionSlots: 3,
    storeObserver: p,
  });
  const answers = new Map<number, unknown>();
  const handle = (outputs: Output[]): void => {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.type === 'execute') {
        const r = p.execute(o.job);
        if (r !== undefined) outputs.push(...replica.executed(r));
      } else if (o.type === 'respond' && !answers.has(o.tag)) answers.set(o.tag, o.outcome);
    }
  };
  driving = (r) => handle(replica.executed(r));
  for (let i = 0; i < ops.length; i++) {
    handle(replica.invoke(T0 + i, { ...ops[i]!, strong: false, tag: i + 1 } as never));
    if (i % 10 === 9) await new Promise((r) => setTimeout(r, 1));
  }
  for (let i = 0; i < 4000 && answers.size < ops.length; i++)
    await new Promise((r) => setTimeout(r, 5));
  return { replica, answers };
}
/** Where the pool's deferred results go: the replica of the current `run`. */
let driving: (r: ExecutionResult) => void = () => undefined;

/**
 * Measurements as a machine would make them, fixed: the hand-off and the job's µs. Real figures
 * depend on the machine and its load (they are in /status and the benchmarks, not asserted here).
 */
class FixedPayoff extends WorkerPayoff {
  constructor(
    window: number,
    private readonly fixedHandoff: number,
    private readonly fixedJob: number,
  ) {
    super(window);
  }
  override record(): void {
    super.record(this.fixedHandoff, this.fixedJob);
  }
}

async function autoPool(window: number, handoff: number, job: number): Promise<WorkerPoolExecutor> {
  pool = await WorkerPoolExecutor.start({
    appPath: APP_PATH,
    app,
    workers: 1,
    auto: { why: 'a test', payoff: new FixedPayoff(window, handoff, job) },
    onResult: (r) => driving(r),
    onWorkerLost: (e) => {
      throw e;
    },
  });
  return pool;
}

describe('a pool under auto', () => {
  it('turns its workers off when its jobs are cheaper than their hand-off, and the ops go on inline with the same results', async () => {
    const p = await autoPool(40, 30, 20);
    const ops = Array.from({ length: 200 }, (_, i) => ({
      op: 'acct.transfer',
      args: { from: `acct/${i % 3}`, to: `acct/${(i + 1) % 3}`, amount: 1 },
    }));
    const { replica, answers } = await run(p, ops);
    expect(answers.size).toBe(ops.length);
    const choice = p.choice();
    expect(choice).toMatchObject({ mode: 'auto', workers: 1, active: false });
    expect(choice.reason).toMatch(
      /^a test; over 40 jobs .* executing inline costs the main thread less, so its ops run inline from now on$/,
    );
    // Fewer than all on workers: the rest ran inline after the switch.
    expect(p.dispatched).toBeLessThan(ops.length);
    // The state serial execution gives, inline, of the same ops.
    const serial = new Replica({ id: 0, app, noopIntervalMs: 1e9 });
    const inline = new InlineExecutor(app);
    ops.forEach((o, i) => {
      const outputs = serial.invoke(T0 + i, { ...o, strong: false, tag: i + 1 } as never);
      for (let k = 0; k < outputs.length; k++) {
        const out = outputs[k]!;
        if (out.type === 'execute') outputs.push(...serial.executed(inline.execute(out.job)));
      }
    });
    expect(Object.fromEntries(replica.state())).toEqual(Object.fromEntries(serial.state()));
  });

  it('keeps its workers when a job costs more than its hand-off', async () => {
    const p = await autoPool(10, 30, 900);
    const ops = Array.from({ length: 20 }, (_, i) => ({
      op: 'work.spin',
      args: { key: `k${i % 4}`, iterations: 400_000 },
    }));
    const { answers } = await run(p, ops);
    expect(answers.size).toBe(ops.length);
    expect(p.choice()).toMatchObject({ mode: 'auto', active: true });
    expect(p.choice().reason).toMatch(
      /the workers take more off the main thread than they cost it/,
    );
  });
});
