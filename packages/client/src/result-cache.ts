import { canonicalJson, type JsonValue } from '@creek/app';

/** How many read results a client keeps by default (`connect({ cacheEntries })`). */
export const DEFAULT_CACHE_ENTRIES = 1_000;

/**
 * The client's cache of read-only results (the `cached` level, Correctables §4.3): the latest value
 * each read (op and arguments) was answered with, at any level, the least recently used dropped
 * beyond `max`. A cached value is shown at once as a preliminary view and corrected by the
 * replica's views; it is never taken for an answer.
 */
export class ResultCache {
  private readonly entries = new Map<string, unknown>();

  constructor(private readonly max: number) {}

  /** The key of a read: its op and its arguments, written canonically. */
  static key(op: string, args: unknown): string {
    return `${op}\u0000${canonicalJson(args as JsonValue)}`;
  }

  get(key: string): { value: unknown } | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key);
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, value);
    return { value };
  }

  set(key: string, value: unknown): void {
    if (this.max <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Forgets every result (they were read as another user). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
