/**
 * Op ids remembered to answer a retry (a client resubmitting after a reconnect does so within
 * seconds). Each costs its views and bookkeeping, about a kilobyte: 100,000 held ~100 MB per
 * replica under steady load; sessions make an older resubmission apply once anyway.
 */
export const REMEMBERED_OPS = 10_000;

/**
 * The client ops a replica remembers by key (client-connections.ts), the newest `capacity` of
 * them: a retry of one is answered with its views so far, and never applied twice.
 */
export class RememberedOps<T> {
  private readonly byKey = new Map<string, T>();
  /** Keys of remembered ops, oldest first from `count % capacity` (a ring). */
  private readonly keys: (string | undefined)[] = [];
  private count = 0;

  constructor(private readonly capacity = REMEMBERED_OPS) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`RememberedOps: capacity must be a positive integer, got ${capacity}`);
  }

  get(key: string): T | undefined {
    return this.byKey.get(key);
  }

  /**
   * Remembers `op` under `key`, forgetting the oldest beyond the capacity. The order lives in a
   * ring of keys: taking a Map's first key instead walks past every deleted entry V8 has not
   * compacted yet, which made this the hottest line of a busy replica.
   */
  remember(key: string, op: T): void {
    const slot = this.count++ % this.capacity;
    const oldest = this.keys[slot];
    if (oldest !== undefined) this.byKey.delete(oldest);
    this.keys[slot] = key;
    this.byKey.set(key, op);
  }
}
