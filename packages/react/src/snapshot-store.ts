/**
 * What `useSyncExternalStore` reads: a snapshot that stays the same object until it changes
 * (React compares snapshots by identity), and the listeners to tell when it does.
 */
export abstract class SnapshotStore<S> {
  protected readonly listeners = new Set<() => void>();

  constructor(protected snapshot: S) {}

  readonly getSnapshot = (): S => this.snapshot;

  abstract readonly subscribe: (listener: () => void) => () => void;

  /** Takes `next` as the snapshot and tells every listener. */
  protected publish(next: S): void {
    this.snapshot = next;
    for (const l of [...this.listeners]) l();
  }
}
