import { z } from 'zod';
import { op, defineApp, type JsonValue } from '@creek/app';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import { Replica, type ReplicaOptions } from '@creek/replica/core/replica.js';
import type { ExecutionResult, Output, Req, Response } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';

/** Ops whose read and write sets are obvious, to count (re-)executions precisely. */
export const testApp = defineApp({
  /** Reads `from`, writes its value to `to`. */
  copy: op({
    args: z.object({ from: z.string(), to: z.string() }),
    run(tx, { from, to }) {
      const v = tx.get(from) ?? null;
      tx.put(to, v);
      return v;
    },
  }),
  /** Sums every key under a prefix into `into`. */
  total: op({
    args: z.object({ prefix: z.string(), into: z.string() }),
    run(tx, { prefix, into }) {
      const t = tx.scan(prefix).reduce((s, [, v]) => s + (typeof v === 'number' ? v : 0), 0);
      tx.put(into, t);
      return t;
    },
  }),
});

export const T0 = 1_700_000_000_000;

/** Drives one replica by hand: runs executions inline and keeps what came out. */
export class Driven {
  readonly replica: Replica;
  readonly responses: Response[] = [];
  readonly rbCast: Req[] = [];
  readonly cabCast: OpId[] = [];
  readonly commits: OpId[][] = [];
  /** Tags of strong reads that asked for a read index (Output `readIndex`). */
  readonly readIndex: number[] = [];
  private readonly executor: InlineExecutor;
  private tag = 1;

  constructor(options: Partial<ReplicaOptions> & { id: number }) {
    const app = options.app ?? testApp;
    this.replica = new Replica({ app, noopIntervalMs: 1_000_000, ...options });
    this.executor = new InlineExecutor(app);
  }

  handle(outputs: Output[]): void {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.type === 'execute')
        outputs.push(...this.replica.executed(this.executor.execute(o.job) as ExecutionResult));
      else if (o.type === 'respond') this.responses.push(o);
      else if (o.type === 'rbCast') this.rbCast.push(o.req);
      else if (o.type === 'cabCast') this.cabCast.push(o.id);
      else if (o.type === 'readIndex') this.readIndex.push(o.tag);
      else if (o.type === 'persist' && o.record.kind === 'commit')
        this.commits.push([...o.record.ids]);
    }
  }

  invoke(atMs: number, opName: string, args: unknown, strong = false): number {
    const tag = this.tag++;
    this.handle(this.replica.invoke(T0 + atMs, { op: opName, args, strong, tag }));
    return tag;
  }

  deliver(req: Req): void {
    this.handle(this.replica.deliverReq(req));
  }

  deliverStrong(id: OpId): void {
    this.handle(this.replica.deliverStrong(id));
  }

  /** The read index of strong read `tag` is delivered (ReplicaHost reports it). */
  readIndexReached(tag: number): void {
    this.handle(this.replica.readIndexReached(tag));
  }

  tick(atMs: number): void {
    this.handle(this.replica.tick(T0 + atMs));
  }

  responsesFor(tag: number): Response[] {
    return this.responses.filter((r) => r.tag === tag);
  }

  valueOf(tag: number, level?: Response['level']): JsonValue | undefined {
    const r = this.responsesFor(tag).filter((x) => level === undefined || x.level === level);
    const last = r[r.length - 1];
    return last?.outcome.ok ? last.outcome.value : undefined;
  }
}

/** A Req as another replica would have gossiped it. */
export function remoteReq(
  replica: number,
  eventNo: number,
  atMs: number,
  opName: string,
  args: JsonValue,
  strong = false,
  ctx: DottedVersionVector | null = null,
): Req {
  return {
    ts: (T0 + atMs) * 1000,
    id: { replica, eventNo },
    op: opName,
    args,
    strong,
    causalCtx: strong ? (ctx ?? new DottedVersionVector()) : null,
  };
}
