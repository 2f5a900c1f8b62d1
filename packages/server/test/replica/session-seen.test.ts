/**
 * `Replica.lastOpNotPendingOf`, kept as ops are issued and committed, against its definition
 * walked over every op: from the newest of the replica's own ops down, skip the session's own ops
 * and no-ops while they are tentative; the answer is the first op not skipped (0: none). Random
 * runs of sessions' weak and strong ops, strong deliveries in CAB's order, no-ops and executions,
 * then recovery from the records, with and without a checkpoint.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NOOP_OP } from '@creek/app';
import { Replica } from '@creek/replica/core/replica.js';
import type { DurableRecord, ExecutionResult, Output } from '@creek/replica/core/types.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { T0, testApp } from './harness.js';

const SESSIONS = ['a', 'b', null] as const;
const options = { id: 0, app: testApp, noopIntervalMs: 20 };
const executor = new InlineExecutor(testApp);

type Command =
  | {
      readonly kind: 'invoke';
      readonly session: (typeof SESSIONS)[number];
      readonly strong: boolean;
    }
  | { readonly kind: 'deliver' }
  | { readonly kind: 'tick' };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('invoke' as const),
      session: fc.constantFrom(...SESSIONS),
      strong: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'deliver' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'tick' as const }) },
);

/** A replica, every record it wrote, and what the test knows of each of its own ops. */
class Model {
  replica = new Replica(options);
  readonly records: DurableRecord[] = [];
  /** Own ops by event number: session (null: none) and whether it is a no-op. */
  readonly ops = new Map<number, { session: string | null; noop: boolean }>();
  readonly committed = new Set<number>();
  /** Own strong casts not delivered yet, in CAB's order. */
  readonly casts: OpId[] = [];
  now = 0;
  private seq = 1;

  handle(outputs: Output[]): void {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.type === 'execute')
        outputs.push(...this.replica.executed(executor.execute(o.job) as ExecutionResult));
      else if (o.type === 'cabCast') this.casts.push(o.id);
      else if (o.type === 'persist') {
        this.records.push(o.record);
        if (o.record.kind === 'req' && o.record.req.id.replica === 0) {
          const req = o.record.req;
          this.ops.set(req.id.eventNo, {
            session: req.session?.id ?? null,
            noop: req.op === NOOP_OP,
          });
        } else if (o.record.kind === 'commit')
          for (const id of o.record.ids) if (id.replica === 0) this.committed.add(id.eventNo);
      }
    }
  }

  run(c: Command): void {
    this.now += 7;
    if (c.kind === 'invoke') {
      const seq = this.seq++;
      this.handle(
        this.replica.invoke(T0 + this.now, {
          op: 'kv.increment',
          args: { key: `k${seq % 3}` },
          strong: c.strong,
          tag: seq,
          ...(c.session === null ? {} : { session: { id: c.session, seq, acked: 0 } }),
        }),
      );
    } else if (c.kind === 'deliver') {
      const id = this.casts.shift();
      if (id !== undefined) this.handle(this.replica.deliverStrong(id));
    } else {
      this.handle(this.replica.tick(T0 + this.now));
    }
  }

  /** The definition, walked. */
  walked(session: string): number {
    let e = this.replica.issuedCount();
    for (; e > 0; e--) {
      const op = this.ops.get(e)!;
      if (this.committed.has(e)) break;
      if (op.session !== session && !op.noop) break;
    }
    return e;
  }

  check(): void {
    for (const s of ['a', 'b', 'c'])
      expect(this.replica.lastOpNotPendingOf(s), `session ${s}`).toBe(this.walked(s));
  }
}

describe('Replica.lastOpNotPendingOf', () => {
  it('equals the walk over every op, as ops are issued and committed and after recovery', () => {
    fc.assert(
      fc.property(
        fc.array(command, { minLength: 1, maxLength: 60 }),
        fc.boolean(),
        (commands, withCheckpoint) => {
          const m = new Model();
          for (const c of commands) {
            m.run(c);
            m.check();
          }
          // Recovery: from every record, or from a checkpoint and nothing after it (the ops
          // before the checkpoint's Reqs are final, so not on the list any more).
          const checkpoint = withCheckpoint ? m.replica.checkpoint() : undefined;
          const { replica, outputs } = Replica.recover(
            options,
            withCheckpoint ? [] : m.records,
            T0 + m.now,
            checkpoint,
          );
          m.replica = replica;
          m.casts.length = 0; // it casts its undelivered strong ops again
          m.handle(outputs);
          m.check();
          // And it goes on from there.
          for (const c of commands.slice(0, 10)) {
            m.run(c);
            m.check();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
