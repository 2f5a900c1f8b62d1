import { rankOf, type Entry, type ReadRecord, type Version } from '../core/entry.js';
import { opKey } from '../core/op-id.js';
import type { Write } from '../core/types.js';
import type { StoreObserver, VersionStore } from '../core/version-store.js';
import { BASE, type MirrorUpdate, type ReadTrace } from './mirror-messages.js';

const names = new WeakMap<Entry, string>();

/** The name a writer has in the mirrors (kept per entry: reads resolve it for every version). */
export function writerName(e: Entry): string {
  let name = names.get(e);
  if (name === undefined) {
    name = e.commitSeq === -1 ? BASE : opKey(e.req.id);
    names.set(e, name);
  }
  return name;
}

/**
 * The main thread's side of the store mirrors (mirror-store.ts): as the replica's store observer,
 * it turns every change into a MirrorUpdate for each of `mirrors` logs, which the driver takes
 * (`take`) and sends with a mirror's next job; and it turns what a job read from a mirror back
 * into the versions of the store (`resolve`), so the core validates it as any execution.
 * Pure and synchronous: the worker pool and the simulator both use it.
 */
export class MirrorFeed implements StoreObserver {
  private store: VersionStore | null = null;
  private readonly logs: MirrorUpdate[][];
  /** Installations so far: each version is tagged with its own (Version.install). */
  private installs = 0;
  /** Reads that named a version the store no longer has: their execution cannot validate. */
  staleReads = 0;

  constructor(mirrors: number) {
    this.logs = Array.from({ length: mirrors }, () => []);
  }

  /** The changes mirror `i` has not been sent yet. */
  take(i: number): MirrorUpdate[] {
    const log = this.logs[i]!;
    this.logs[i] = [];
    return log;
  }

  attach(store: VersionStore): void {
    this.store = store;
    // A new replica (a recovery) made a new store: every mirror starts over.
    for (let i = 0; i < this.logs.length; i++) this.logs[i] = [['reset']];
  }

  installed(written: readonly Version[]): void {
    if (written.length === 0) return;
    const writer = written[0]!.writer;
    const install = ++this.installs;
    for (const v of written) v.install = install;
    const writes: Write[] = written.map((v) => [v.key, v.value]);
    this.log(['install', writerName(writer), install, rankOf(writer), writes]);
  }

  removed(written: readonly Version[]): void {
    if (written.length === 0) return;
    this.log(['remove', writerName(written[0]!.writer), written.map((v) => v.key)]);
  }

  finalized(written: readonly Version[]): void {
    if (written.length === 0) return;
    this.log(['finalize', writerName(written[0]!.writer), written.map((v) => v.key)]);
  }

  committed(entries: readonly Entry[]): void {
    for (const e of entries) this.log(['commit', writerName(e), e.commitSeq]);
  }

  /**
   * A read from a mirror as the core records reads: the very version it saw (same writer, same
   * installation), or a stale record that never validates when the store no longer has it.
   */
  resolve(trace: ReadTrace): ReadRecord {
    const store = this.store;
    if (store === null) throw new Error('MirrorFeed: not the store observer of a replica');
    // An installation number names one execution of one writer: the writer's name adds nothing.
    const find = (key: string, _writer: string, install: number): Version | null =>
      store.installedAs(key, install);
    if (trace[0] === 'key') {
      const [, key, writer, install] = trace;
      if (writer === null) return { kind: 'key', key, version: null };
      const version = find(key, writer, install);
      if (version !== null) return { kind: 'key', key, version };
      this.staleReads++;
      return { kind: 'key', key, version: null, stale: true };
    }
    const [, prefix, found] = trace;
    const versions: Version[] = [];
    for (const [key, writer, install] of found) {
      const v = find(key, writer, install);
      if (v === null) {
        this.staleReads++;
        return { kind: 'scan', prefix, versions: [], stale: true };
      }
      versions.push(v);
    }
    return { kind: 'scan', prefix, versions };
  }

  private log(update: MirrorUpdate): void {
    for (const log of this.logs) log.push(update);
  }
}
