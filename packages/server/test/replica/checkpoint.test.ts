import { describe, expect, it } from 'vitest';
import type { ReplicaCheckpoint } from '@creek/replica/core/checkpoint.js';
import { Replica } from '@creek/replica/core/replica.js';
import type {
  DurableRecord,
  ExecutionJob,
  ExecutionResult,
  Output,
} from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { remoteReq, T0, testApp } from './harness.js';

const options = { id: 0, app: testApp, noopIntervalMs: 1_000_000 };
const executor = new InlineExecutor(testApp);

/** One replica whose executions run only when the test says so. */
class Manual {
  readonly replica = new Replica(options);
  readonly records: DurableRecord[] = [];
  readonly jobs: ExecutionJob[] = [];
  readonly cast: Extract<Output, { type: 'cabCast' }>[] = [];
  private tag = 1;

  handle(outputs: Output[]): void {
    for (const o of outputs) {
      if (o.type === 'persist') this.records.push(o.record);
      else if (o.type === 'execute') this.jobs.push(o.job);
      else if (o.type === 'cabCast') this.cast.push(o);
    }
  }

  invoke(at: number, op: string, args: unknown, strong = false): void {
    this.handle(this.replica.invoke(T0 + at, { op, args, strong, tag: this.tag++ }));
  }

  runAll(): void {
    while (this.jobs.length > 0)
      this.handle(this.replica.executed(executor.execute(this.jobs.shift()!) as ExecutionResult));
  }
}

function recovered(records: DurableRecord[], checkpoint?: ReplicaCheckpoint) {
  const { replica, outputs } = Replica.recover(options, records, T0 + 10_000, checkpoint);
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs[i]!;
    if (o.type === 'execute')
      outputs.push(...replica.executed(executor.execute(o.job) as ExecutionResult));
  }
  const { peakVersions: _, ...stats } = replica.stats();
  return {
    state: replica.stateJson(),
    digest: replica.stateDigest(),
    stats,
    tentative: replica.tentativeIds(),
    casts: outputs.flatMap((o) => (o.type === 'cabCast' ? [[o.id.eventNo, o.prevStrong]] : [])),
  };
}

describe('Replica.checkpoint', () => {
  it('sums up the finalized prefix and keeps committed ops that are not final as Reqs', () => {
    const m = new Manual();
    m.invoke(1, 'kv.put', { key: 'a', value: 1 });
    m.invoke(2, 'kv.put', { key: 'gone', value: 1 });
    m.invoke(3, 'kv.delete', { key: 'gone' });
    m.invoke(4, 'copy', { from: 'a', to: 'b' }, true);
    m.runAll();
    m.handle(m.replica.deliverStrong(m.cast[0]!.id));
    m.runAll();
    // Committed but not executed yet: not final.
    m.invoke(5, 'kv.increment', { key: 'a' });
    m.invoke(6, 'copy', { from: 'a', to: 'c' }, true);
    m.handle(m.replica.deliverStrong(m.cast[1]!.id));
    // And tentative ones, a remote one among them.
    m.invoke(7, 'kv.increment', { key: 'c', by: 5 });
    m.handle(m.replica.deliverReq(remoteReq(1, 1, 8, 'kv.put', { key: 'r', value: 'x' })));
    m.invoke(9, 'total', { prefix: '', into: 't' }, true);

    const cp = m.replica.checkpoint();
    expect(cp.finalized).toBe(4);
    expect(cp.state).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    expect(cp.committedLive).toBe(2);
    expect(cp.reqs.map((q) => `${q.id.replica}#${q.id.eventNo}`)).toEqual([
      '0#5',
      '0#6',
      '0#7',
      '1#1',
      '0#8',
    ]);
    expect(cp.eventNo).toBe(8);
    expect(cp.lastStrongEventNo).toBe(8);
    expect(cp.finalizedOwnStrong).toBe(4);
    // Ops 1-7 (the strong ones delivered), not op 8, whose CAB delivery is pending.
    expect(cp.known.toJSON()).toEqual({ '0': [7], '1': [1] });

    // The records after it, then a crash.
    const at = m.records.length;
    m.runAll();
    m.invoke(10, 'kv.increment', { key: 'a', by: 10 });
    m.runAll();
    expect(m.replica.finalizedCount()).toBe(6);

    const all = recovered(m.records);
    const fromCheckpoint = recovered(m.records.slice(at), cp);
    expect(fromCheckpoint).toEqual(all);
    // Op 8 is re-cast behind op 6, whose Req is in the checkpoint.
    expect(all.casts).toEqual([[8, 6]]);
    expect(all.stats.committed).toBe(6);
    expect(all.tentative).toHaveLength(4);
  });

  it('recovers the op after its last final strong op in CAB order', () => {
    const m = new Manual();
    m.invoke(1, 'kv.put', { key: 'a', value: 1 }, true);
    m.runAll();
    m.handle(m.replica.deliverStrong(m.cast[0]!.id));
    m.runAll();
    m.invoke(2, 'kv.put', { key: 'a', value: 2 }, true);
    m.runAll();
    const cp = m.replica.checkpoint();
    expect(cp.finalizedOwnStrong).toBe(1);
    const all = recovered(m.records);
    expect(all.casts).toEqual([[2, 1]]);
    expect(recovered([], cp)).toEqual(all);
    // Without the last final strong op the re-cast would wait for a predecessor that never comes.
    expect(recovered([], { ...cp, finalizedOwnStrong: 0 }).casts).toEqual([[2, 0]]);
  });
});

describe('recovery and strong reads', () => {
  /** Runs `outputs`' executions (and theirs) at once; every output, in order. */
  function run(replica: Replica, outputs: Output[]): Output[] {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.type === 'execute')
        outputs.push(...replica.executed(executor.execute(o.job) as ExecutionResult));
    }
    return outputs;
  }

  /**
   * A replica just recovered (its recovery's outputs run) takes a strong read of `a` and then
   * reaches its read index: whether it wanted a no-op before that, and its stable answers.
   */
  function strongReadAfterRestart({ replica, outputs }: { replica: Replica; outputs: Output[] }) {
    run(replica, outputs);
    run(
      replica,
      replica.invoke(T0 + 10_001, { op: 'kv.get', args: { key: 'a' }, strong: true, tag: 99 }),
    );
    const noopWanted = replica.noopWanted;
    const out = run(replica, replica.readIndexReached(99));
    return { noopWanted, stable: out.filter((o) => o.type === 'respond' && o.level === 'stable') };
  }

  it('a restarted replica whose own ops are all committed reads at once, without a no-op', () => {
    for (const fromCheckpoint of [false, true]) {
      const m = new Manual();
      m.invoke(1, 'kv.put', { key: 'a', value: 1 });
      m.invoke(2, 'kv.put', { key: 'a', value: 2 }, true);
      m.runAll();
      m.handle(m.replica.deliverStrong(m.cast[0]!.id)); // commits both
      m.runAll();
      const read = strongReadAfterRestart(
        fromCheckpoint
          ? Replica.recover(options, [], T0 + 10_000, m.replica.checkpoint())
          : Replica.recover(options, m.records, T0 + 10_000),
      );
      expect(read.noopWanted).toBe(false);
      expect(read.stable).toMatchObject([{ tag: 99, outcome: { ok: true, value: 2 } }]);
    }
  });

  it('one whose own op is still tentative waits for it, and asks for a no-op', () => {
    const m = new Manual();
    m.invoke(1, 'kv.put', { key: 'a', value: 1 }, true);
    m.runAll();
    m.handle(m.replica.deliverStrong(m.cast[0]!.id));
    m.invoke(2, 'kv.put', { key: 'a', value: 2 }); // weak, not committed
    m.runAll();
    const read = strongReadAfterRestart(Replica.recover(options, m.records, T0 + 10_000));
    expect(read.noopWanted).toBe(true);
    expect(read.stable).toEqual([]);
  });
});
