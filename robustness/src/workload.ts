import type { JsonValue } from '@creek/app';
import { connect, CreekError, type Correctable, type CreekClient } from '@creek/client';
import { Prng } from '@creek/server/sim';
import type { LocalCluster } from '@creek/server/node';
import type { Level, OpKind, RecordedOp } from './history.js';
import { sleep } from './nemesis.js';

/** SDK clients, each one session, and the workers that keep each busy. */
const CLIENTS = 3;
const WORKERS_PER_CLIENT = 2;
/** Lists and queues the ops spread over. */
export const LIST_KEYS = 12;
export const QUEUES = 2;
/**
 * An op with no final view by then ends with Timeout: indeterminate, its client still sending it
 * until it is committed. A quarter of the ops get the short one, shorter than most faults, so
 * that indeterminate ops are common and the final state has their fates to settle.
 */
const OP_TIMEOUT_MS = 10_000;
const SHORT_TIMEOUT_MS = 1_500;

export const listKey = (k: number): string => `list/${k}`;
export const queueName = (q: number): string => `q${q}`;

/**
 * The load: SDK clients (@creek/client) of every member, their workers invoking one op at a time
 * drawn from a seeded sequence — list appends and reads, queue enqueues and dequeues, weak and
 * strong — recording each op's invocation, its outcome and whether it was committed.
 */
export class Workload {
  readonly ops: RecordedOp[] = [];
  private readonly clients: CreekClient[] = [];
  private stopped = false;
  private workers: Promise<void> = Promise.resolve();

  constructor(
    private readonly cluster: LocalCluster,
    private readonly seed: number,
    private readonly now: () => number,
  ) {}

  start(): void {
    for (let c = 0; c < CLIENTS; c++)
      this.clients.push(
        connect({
          // Each client starts at another member and fails over to the rest.
          urls: [...this.cluster.urls.slice(c), ...this.cluster.urls.slice(0, c)],
          token: this.cluster.token,
          nearest: false,
        }),
      );
    const runs: Promise<void>[] = [];
    for (let c = 0; c < CLIENTS; c++)
      for (let w = 0; w < WORKERS_PER_CLIENT; w++) runs.push(this.worker(c, w));
    this.workers = Promise.all(runs).then(() => undefined);
  }

  /** Stops invoking; resolves once every worker's current op has an outcome. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.workers;
  }

  /**
   * Waits (up to `timeoutMs`) until every write the clients were not told failed is known
   * committed: the clients resubmit ops of unknown fate until a replica commits them, so once
   * the cluster is healed they all get there. Resolves with how many are still open.
   */
  async settle(timeoutMs: number): Promise<number> {
    const open = (): number =>
      this.ops.filter(
        (o) => o.kind !== 'read' && o.committed === false && o.outcome?.type !== 'failed',
      ).length;
    const deadline = Date.now() + timeoutMs;
    while (open() > 0 && Date.now() < deadline) await sleep(100);
    return open();
  }

  close(): void {
    for (const c of this.clients) c.close();
  }

  private async worker(c: number, w: number): Promise<void> {
    const prng = Prng.named(this.seed, `client ${c} worker ${w}`);
    const client = this.clients[c]!;
    for (let n = 0; !this.stopped; n++) {
      const id = `c${c}w${w}/${n}`;
      const r = prng.next();
      const list = listKey(prng.int(0, LIST_KEYS - 1));
      const queue = queueName(prng.int(0, QUEUES - 1));
      const weak = prng.chance(0.5);
      const timeoutMs = prng.chance(0.25) ? SHORT_TIMEOUT_MS : OP_TIMEOUT_MS;
      if (r < 0.45)
        await this.invoke(
          client,
          id,
          'append',
          'list.append',
          { key: list, value: id },
          weak,
          timeoutMs,
        );
      else if (r < 0.7)
        await this.invoke(client, id, 'read', 'list.read', { key: list }, weak, timeoutMs);
      else if (r < 0.85)
        await this.invoke(
          client,
          id,
          'enqueue',
          'queue.enqueue',
          { queue, item: id },
          weak,
          timeoutMs,
        );
      // Dequeues are strong: a weak dequeue's item is tentative, and may change at commit.
      else await this.invoke(client, id, 'dequeue', 'queue.dequeue', { queue }, false, timeoutMs);
    }
  }

  /** Invokes one op and records it; resolves at its outcome (not its commit). */
  async invoke(
    client: CreekClient,
    id: string,
    kind: OpKind,
    op: string,
    args: JsonValue,
    weak: boolean,
    timeoutMs = OP_TIMEOUT_MS,
    final = false,
  ): Promise<RecordedOp> {
    const level: Level = weak ? 'weak' : 'strong';
    const rec: RecordedOp = {
      id,
      kind,
      op,
      args,
      level,
      invokedAt: this.now(),
      outcome: null,
      committed: false,
      ...(final ? { final: true as const } : {}),
    };
    this.ops.push(rec);
    const options = { timeoutMs };
    const call = (
      weak
        ? client.invokeWeak(op as never, args as never, options)
        : client.invokeStrong(op as never, args as never, options)
    ) as Correctable<unknown>;
    // committed() also rejects when its fate will not be known here (the client closed with the
    // op sent: ClientClosed, mayHaveTakenEffect): that is no "never", and the final state decides.
    call.committed().then(
      () => (rec.committed = true),
      (err: unknown) => {
        if (!(err instanceof CreekError && err.mayHaveTakenEffect)) rec.committed = 'never';
      },
    );
    try {
      const value = (await call) as JsonValue;
      rec.outcome = { type: 'ok', at: this.now(), value, replica: client.replica() };
    } catch (err) {
      const at = this.now();
      const message = err instanceof Error ? err.message : String(err);
      rec.outcome =
        err instanceof CreekError && !err.mayHaveTakenEffect
          ? { type: 'failed', at, error: message }
          : { type: 'indeterminate', at, error: message };
    }
    return rec;
  }
}
