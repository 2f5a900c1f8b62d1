import { precedes, type Entry, type Version } from './entry.js';

/**
 * Told of every change to the store, in order: what an executor that keeps a copy of the store in
 * another thread needs (exec/worker-pool-executor.ts). Called synchronously; must not throw.
 */
export interface StoreObserver {
  /** The store it observes, once, when the store is made. */
  attach(store: VersionStore): void;
  installed(written: readonly Version[]): void;
  removed(written: readonly Version[]): void;
  finalized(written: readonly Version[]): void;
  /** These entries were committed: their place in the order (`commitSeq`) changed. */
  committed(entries: readonly Entry[]): void;
}
import type { JsonValue, StateReader } from '@creek/app';
import type { FinalChanges } from './final-digests.js';
import { KeyIndex } from './key-index.js';
import { StateDigest } from './state-digest.js';

/**
 * The multiversion store of Creek §4.4. Each key has a chain of immutable versions sorted by the
 * position of their writers in `committed · tentative`. An execution of entry E reads, for each key,
 * the last version whose writer precedes E: a consistent snapshot of the serial order up to E.
 *
 * Versions of rolled-back executions are removed at rollback, so no snapshot taken afterwards can
 * see them. Garbage collection happens when an entry is finalized (committed, executed at its final
 * position, and everything before it finalized too): every older version of the keys it wrote is
 * dropped, so a key keeps one committed version plus the versions of not-yet-final entries.
 */
export class VersionStore {
  private readonly chains = new Map<string, Version[]>();
  /** The keys of `chains`, for scans by prefix. */
  private readonly keys = new KeyIndex();
  private versions = 0;
  private peakVersions = 0;
  private readonly digestOfLatest = new StateDigest();
  /**
   * Keys whose newest version may have changed since `digest()` last looked: the digest is brought
   * up to date for these alone, when asked, so the execution path pays one Set.add per write and
   * no hashing.
   */
  private readonly changed = new Set<string>();

  constructor(private readonly observer: StoreObserver | null = null) {
    observer?.attach(this);
  }

  /** The newest version of `key` that `which` picks, if the store still has one. */
  versionBy(key: string, which: (v: Version) => boolean): Version | null {
    const chain = this.chains.get(key);
    if (chain === undefined) return null;
    for (let i = chain.length - 1; i >= 0; i--) if (which(chain[i]!)) return chain[i]!;
    return null;
  }

  /** The version of `key` a store observer numbered `install` (Version.install), if still here. */
  installedAs(key: string, install: number): Version | null {
    const chain = this.chains.get(key);
    if (chain === undefined) return null;
    for (let i = chain.length - 1; i >= 0; i--) if (chain[i]!.install === install) return chain[i]!;
    return null;
  }

  /** Tells the observer that these entries were committed (see StoreObserver.committed). */
  noteCommitted(entries: readonly Entry[]): void {
    if (this.observer !== null && entries.length > 0) this.observer.committed(entries);
  }

  /** The version of `key` that `reader` sees, or null if the key has never been written before it. */
  visible(key: string, reader: Entry): Version | null {
    const chain = this.chains.get(key);
    if (chain === undefined) return null;
    for (let i = chain.length - 1; i >= 0; i--) {
      const v = chain[i]!;
      if (precedes(v.writer, reader)) return v;
    }
    return null;
  }

  /** Live (non-deleted) versions visible to `reader` of keys starting with `prefix`, sorted by key. */
  scan(prefix: string, reader: Entry): Version[] {
    const out: Version[] = [];
    for (const key of this.keys.withPrefix(prefix)) {
      const v = this.visible(key, reader);
      if (v !== null && v.value !== undefined) out.push(v);
    }
    return out;
  }

  /**
   * The finalized state right after `through` (a committed entry whose predecessors are all
   * final): for each key, its last version written by a committed entry no later than `through`.
   * Versions of later entries, committed or tentative, sit after it in each chain.
   */
  finalReader(through: Entry): StateReader {
    const seq = through.commitSeq;
    const valueOf = (key: string): JsonValue | undefined => {
      const chain = this.chains.get(key);
      if (chain === undefined) return undefined;
      let value: JsonValue | undefined;
      for (const v of chain) {
        if (v.writer.commitSeq > seq) break;
        value = v.value;
      }
      return value;
    };
    return {
      get: valueOf,
      scan: (prefix) => {
        const out: [string, JsonValue][] = [];
        for (const key of this.keys.withPrefix(prefix)) {
          const value = valueOf(key);
          if (value !== undefined) out.push([key, value]);
        }
        return out;
      },
    };
  }

  install(written: readonly Version[]): void {
    for (const v of written) {
      this.changed.add(v.key);
      let chain = this.chains.get(v.key);
      if (chain === undefined) {
        chain = [];
        this.chains.set(v.key, chain);
        this.keys.add(v.key);
      }
      let i = chain.length;
      while (i > 0 && precedes(v.writer, chain[i - 1]!.writer)) i--;
      chain.splice(i, 0, v);
    }
    this.versions += written.length;
    if (this.versions > this.peakVersions) this.peakVersions = this.versions;
    this.observer?.installed(written);
  }

  /** Removes the versions of a rolled-back execution: never visible again. */
  remove(written: readonly Version[]): void {
    for (const v of written) {
      this.changed.add(v.key);
      const chain = this.chains.get(v.key);
      const i = chain === undefined ? -1 : chain.lastIndexOf(v);
      if (chain === undefined || i < 0)
        throw new Error(`version store: no version of '${v.key}' to remove`);
      chain.splice(i, 1);
      this.versions--;
      if (chain.length === 0) {
        this.chains.delete(v.key);
        this.keys.delete(v.key);
      }
    }
    this.observer?.removed(written);
  }

  /** Restores the sort order of these keys' chains after their writers moved (a commit reorder). */
  reposition(keys: Iterable<string>): void {
    for (const key of keys) {
      const chain = this.chains.get(key);
      if (chain === undefined) continue;
      this.changed.add(key);
      // Insertion sort: chains are short and nearly sorted.
      for (let i = 1; i < chain.length; i++) {
        const v = chain[i]!;
        let j = i;
        while (j > 0 && precedes(v.writer, chain[j - 1]!.writer)) {
          chain[j] = chain[j - 1]!;
          j--;
        }
        chain[j] = v;
      }
    }
  }

  /**
   * Garbage-collects what a finalized entry's writes make unreachable, and tells `finals` what
   * each write changed in the finalized state: the version right before it in its chain is the
   * key's previous final one (every writer before a finalized entry is finalized, and kept no
   * older version), none meaning the key was absent.
   */
  finalize(written: readonly Version[], finals?: FinalChanges): void {
    for (const v of written) {
      this.changed.add(v.key);
      const chain = this.chains.get(v.key)!;
      const i = chain.indexOf(v);
      finals?.changed(i > 0 ? chain[i - 1]! : null, v);
      if (i > 0) {
        chain.splice(0, i);
        this.versions -= i;
      }
      if (v.value === undefined && chain.length === 1) {
        // A final delete with nothing after it: the key is simply absent.
        this.chains.delete(v.key);
        this.keys.delete(v.key);
        this.versions--;
      }
    }
    this.observer?.finalized(written);
  }

  /**
   * What `reader` sees of every key that has a live (non-deleted) version before it, sorted by
   * key: the state of the serial order up to `reader` (a checkpoint reads it after the finalized
   * prefix).
   */
  stateBefore(reader: Entry): [string, JsonValue][] {
    const out: [string, JsonValue][] = [];
    for (const key of this.chains.keys()) {
      const v = this.visible(key, reader);
      if (v !== null && v.value !== undefined) out.push([key, v.value]);
    }
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /** The newest version of every key: the replica's state once nothing is tentative. */
  latest(): Map<string, Version> {
    const out = new Map<string, Version>();
    for (const [key, chain] of this.chains) out.set(key, chain[chain.length - 1]!);
    return out;
  }

  /**
   * A digest of `latest()`'s values (see StateDigest): equal on replicas holding the same state.
   * Costs one hash per key changed since the last call, not a pass over the state.
   */
  digest(): string {
    for (const key of this.changed) {
      const chain = this.chains.get(key);
      this.digestOfLatest.set(
        key,
        chain === undefined ? undefined : chain[chain.length - 1]!.value,
      );
    }
    this.changed.clear();
    return this.digestOfLatest.hex();
  }

  size(): number {
    return this.versions;
  }

  peakSize(): number {
    return this.peakVersions;
  }

  keyCount(): number {
    return this.chains.size;
  }
}
