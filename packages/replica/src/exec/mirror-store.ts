import type { JsonValue } from '@creek/app';
import { rankPrecedes } from '../core/entry.js';
import type { Rank } from '../core/rank.js';
import { KeyIndex } from '../core/key-index.js';
import type { SnapshotReader } from '../core/types.js';
import type { MirrorUpdate, ReadTrace } from './mirror-messages.js';

interface MirrorVersion {
  readonly writer: string;
  readonly install: number;
  readonly key: string;
  readonly value: JsonValue | undefined;
}

/**
 * An execution worker's copy of the replica's version store (core/version-store.ts), fed in order
 * with the changes the main thread made (MirrorUpdate). A job reads the versions of writers that
 * precede its rank, as the core's snapshot would.
 *
 * It may be behind or slightly wrong: a job started beside earlier ones cannot see their writes
 * yet, and a writer's rank is the one it had when last told. That is safe, because nothing a
 * worker reads counts until the core has validated it: every read is reported by writer, and the
 * core checks that each is still the version visible at the job's position (§4.4), re-executing
 * on the main thread, on the exact snapshot, when one is not. The mirror only has to be right
 * often enough that few results are discarded.
 *
 * Memory: the same versions as the main thread's store (one finalized version per key plus the
 * versions of entries not yet final), values shared with nothing (a structured clone).
 */
export class MirrorStore {
  private readonly chains = new Map<string, MirrorVersion[]>();
  private keys = new KeyIndex();
  /** Each writer's rank, shared by its versions, and the keys it has versions of. */
  private readonly writers = new Map<string, { rank: Rank; keys: Set<string> }>();

  apply(updates: readonly MirrorUpdate[]): void {
    for (const u of updates) {
      switch (u[0]) {
        case 'reset':
          this.chains.clear();
          this.writers.clear();
          this.keys = new KeyIndex();
          break;
        case 'install':
          this.install(u[1], u[2], u[3], u[4]);
          break;
        case 'own':
          this.installedOwn(u[1], u[2], u[3], u[4]);
          break;
        case 'remove':
          for (const key of u[2]) this.drop(key, u[1]);
          break;
        case 'commit':
          this.commit(u[1], u[2]);
          break;
        case 'finalize':
          for (const key of u[2]) this.finalize(key, u[1]);
          break;
      }
    }
  }

  /**
   * The writes of job `jobId` (writer `writer`, at `rank`), which ran here, as versions of this
   * mirror until the main thread's installation of them arrives and renumbers them (an `own`
   * update): the jobs queued behind it on this worker read them, instead of the versions they
   * replace, which would fail validation whenever the two touch the same keys (a TPC-C district,
   * a warehouse).
   */
  installOwn(
    writer: string,
    jobId: number,
    rank: Rank,
    writes: readonly (readonly [string, JsonValue | undefined])[],
  ): void {
    this.install(writer, -jobId, rank, writes);
  }

  /**
   * The main thread installed job `jobId`'s result as installation `install` of `writer` (an
   * `own` update): this mirror's versions of it (installOwn) are those versions, renumbered. Only
   * versions still tagged with the job are: one replaced or dropped since is not that result, and
   * a read that misses the installation is stale, so it never validates.
   */
  private installedOwn(writer: string, install: number, rank: Rank, jobId: number): void {
    const w = this.writers.get(writer);
    if (w === undefined) return;
    for (const key of w.keys) {
      const chain = this.chains.get(key)!;
      const i = chain.findIndex((v) => v.writer === writer && v.install === -jobId);
      if (i >= 0) chain[i] = { ...chain[i]!, install };
    }
    // Only the commit position of a writer's rank changes (committed since the job ran).
    if (w.rank[0] !== rank[0]) {
      w.rank = rank;
      this.sortChainsOf(w.keys);
    }
  }

  /** A snapshot at `rank` that records what it read, by writer. */
  reader(rank: Rank): SnapshotReader & { readonly reads: ReadTrace[] } {
    const reads: ReadTrace[] = [];
    const seen = new Map<string, JsonValue | undefined>();
    return {
      reads,
      get: (key) => {
        if (seen.has(key)) return seen.get(key);
        const v = this.visible(key, rank);
        reads.push(v === null ? ['key', key, null, 0] : ['key', key, v.writer, v.install]);
        const value = v === null ? undefined : v.value;
        seen.set(key, value);
        return value;
      },
      scan: (prefix) => {
        const found: [string, string, number][] = [];
        const out: [string, JsonValue][] = [];
        for (const key of this.keys.withPrefix(prefix)) {
          const v = this.visible(key, rank);
          if (v === null || v.value === undefined) continue;
          found.push([key, v.writer, v.install]);
          out.push([key, v.value]);
        }
        reads.push(['scan', prefix, found]);
        return out;
      },
    };
  }

  /** Writers with versions held (for tests and memory accounting). */
  writersHeld(): number {
    return this.writers.size;
  }

  /** Versions held (for tests and memory accounting). */
  size(): number {
    let n = 0;
    for (const chain of this.chains.values()) n += chain.length;
    return n;
  }

  private visible(key: string, rank: Rank): MirrorVersion | null {
    const chain = this.chains.get(key);
    if (chain === undefined) return null;
    for (let i = chain.length - 1; i >= 0; i--) {
      const v = chain[i]!;
      if (rankPrecedes(this.writers.get(v.writer)!.rank, rank)) return v;
    }
    return null;
  }

  private install(
    writer: string,
    install: number,
    rank: Rank,
    writes: readonly (readonly [string, JsonValue | undefined])[],
  ): void {
    // A job that wrote nothing leaves nothing: a writer entry without keys would never be
    // forgotten (a writer goes when its last key does), one more per such job, for good.
    if (writes.length === 0) return;
    let w = this.writers.get(writer);
    if (w === undefined) {
      w = { rank, keys: new Set() };
      this.writers.set(writer, w);
    } else w.rank = rank;
    for (const [key, value] of writes) {
      let chain = this.chains.get(key);
      if (chain === undefined) {
        chain = [];
        this.chains.set(key, chain);
        this.keys.add(key);
      }
      // A writer has one version per key: a new execution's replaces its last one.
      const old = chain.findIndex((v) => v.writer === writer);
      if (old >= 0) chain.splice(old, 1);
      let i = chain.length;
      while (i > 0 && rankPrecedes(rank, this.writers.get(chain[i - 1]!.writer)!.rank)) i--;
      chain.splice(i, 0, { writer, install, key, value });
      w.keys.add(key);
    }
  }

  private commit(writer: string, commitSeq: number): void {
    const w = this.writers.get(writer);
    if (w === undefined) return;
    w.rank = [commitSeq, w.rank[1], w.rank[2], w.rank[3]];
    this.sortChainsOf(w.keys);
  }

  /** Puts the versions of these keys back in rank order (a writer's rank changed). */
  private sortChainsOf(keys: Iterable<string>): void {
    for (const key of keys) {
      const chain = this.chains.get(key)!;
      chain.sort((a, b) => {
        const ra = this.writers.get(a.writer)!.rank;
        const rb = this.writers.get(b.writer)!.rank;
        return rankPrecedes(ra, rb) ? -1 : rankPrecedes(rb, ra) ? 1 : 0;
      });
    }
  }

  private finalize(key: string, writer: string): void {
    const chain = this.chains.get(key);
    if (chain === undefined) return;
    const i = chain.findIndex((v) => v.writer === writer);
    if (i < 0) return;
    for (const old of chain.splice(0, i)) this.forget(old.writer, key);
    if (chain.length === 1 && chain[0]!.value === undefined) {
      this.chains.delete(key);
      this.keys.delete(key);
      this.forget(writer, key);
    }
  }

  private drop(key: string, writer: string): void {
    const chain = this.chains.get(key);
    if (chain === undefined) return;
    const i = chain.findIndex((v) => v.writer === writer);
    if (i < 0) return;
    chain.splice(i, 1);
    if (chain.length === 0) {
      this.chains.delete(key);
      this.keys.delete(key);
    }
    this.forget(writer, key);
  }

  private forget(writer: string, key: string): void {
    const w = this.writers.get(writer);
    if (w === undefined) return;
    w.keys.delete(key);
    if (w.keys.size === 0) this.writers.delete(writer);
  }
}
