import type { Binding, ConsistencyLevel, ViewSink } from '../binding.js';
import { Cancelled, ClientClosed, errorFromWire, Unavailable } from '../errors.js';
import { OpViews } from '../op-views.js';
import type { MemoryCluster } from './memory-cluster.js';

/** The in-memory binding (Correctables §5.1): views straight from an in-process replica. */
export class MemoryBinding implements Binding {
  private closed = false;

  constructor(
    private readonly cluster: MemoryCluster,
    /** The replica this client talks to. */
    readonly replica: number = 0,
  ) {
    if (cluster.hosts[replica] === undefined)
      throw new RangeError(
        `replica ${replica}: the in-memory cluster has replicas 0 to ${cluster.hosts.length - 1}`,
      );
  }

  consistencyLevels(): ConsistencyLevel[] {
    return ['weak', 'strong'];
  }

  submitOperation<T>(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal?: AbortSignal,
  ): void {
    if (this.closed) return sink.error(new ClientClosed(false));
    const views = new OpViews(levels, sink);
    // A weak op may be answered inside invoke() itself, before it returns.
    let stop = (): void => undefined;
    stop = this.cluster.invoke(this.replica, op, args, levels.includes('strong'), {
      response: (r) => {
        const finished =
          r.level === 'failed'
            ? views.error(rejection(r.outcome.ok ? 'rejected' : r.outcome.error))
            : views.outcome(r.level, r.outcome, r.causes);
        if (finished) stop();
      },
      closed: () => {
        const e = new Unavailable(
          'the in-memory cluster was closed (cluster.close()) before this op was done',
          { mayHaveTakenEffect: true },
        );
        views.error(e);
        sink.neverCommits?.(e);
      },
      committed: () => sink.committed?.(),
    });
    if (views.done) stop(); // answered synchronously: forget it now
    signal?.addEventListener(
      'abort',
      () => {
        views.error(new Cancelled());
        stop();
      },
      { once: true },
    );
  }

  /** Later invokes through this binding fail with ClientClosed; the cluster runs on. */
  close(): void {
    this.closed = true;
  }
}

/** A replica refused the op before ordering it (unknown op, bad arguments). */
function rejection(message: string) {
  return errorFromWire(
    message.startsWith('unknown operation') ? 'unknown-op' : 'invalid-arguments',
    message,
  );
}
