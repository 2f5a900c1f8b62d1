import type { Binding, ConsistencyLevel, ViewSink } from '../binding.js';
import { errorFromWire, OperationFailed } from '../errors.js';
import type { MemoryCluster } from './memory-cluster.js';

/** The in-memory binding (Correctables §5.1): views straight from an in-process replica. */
export class MemoryBinding implements Binding {
  constructor(
    private readonly cluster: MemoryCluster,
    /** The replica this client talks to. */
    readonly replica: number = 0,
  ) {}

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
    const strong = levels.includes('strong');
    const preliminary = strong && levels.includes('weak');
    let done = false;
    // A weak op may be answered inside invoke() itself, before it returns.
    let stop = (): void => undefined;
    stop = this.cluster.invoke(this.replica, op, args, strong, (r) => {
      if (done) return;
      if (r.level === 'failed') {
        done = true;
        const message = r.outcome.ok ? 'rejected' : r.outcome.error;
        return sink.error(
          errorFromWire(
            message.startsWith('unknown operation') ? 'unknown-op' : 'invalid-arguments',
            message,
          ),
        );
      }
      if (r.level === 'tentative' && strong) {
        if (preliminary && r.outcome.ok)
          sink.view({ value: r.outcome.value as T, level: 'weak', final: false });
        return;
      }
      done = true;
      stop();
      if (!r.outcome.ok) return sink.error(new OperationFailed(r.outcome.error));
      sink.view({
        value: r.outcome.value as T,
        level: r.level === 'stable' ? 'strong' : 'weak',
        final: true,
      });
    });
    if (done) stop(); // answered synchronously: forget it now
    signal?.addEventListener(
      'abort',
      () => {
        done = true;
        stop();
      },
      { once: true },
    );
  }
}
