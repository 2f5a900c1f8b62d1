import { rankOf, type Entry, type ReadRecord, type Version } from '../core/entry.js';
import { opKey } from '../core/op-id.js';
import type { Write } from '../core/types.js';
import type { StoreObserver, VersionStore } from '../core/version-store.js';
import { BASE, type MirrorUpdate, type ReadTrace } from './mirror-messages.js';

const names = new WeakMap<Entry, string>();

/** Worker jobs whose installation MirrorFeed remembers for reads of their own versions. */
const JOBS_REMEMBERED = 1024;

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
  /**
   * A worker's result being handed to the core (`ownResult`): which mirror ran it, and its
   * writer's name and keys; cleared when the core installs exactly those keys for that writer (the
   * result itself), at `ownResultDone`, or when a new store is attached.
   */
  private own: { mirror: number; jobId: number; writer: string; keys: string[] } | null = null;
  /** The installation each recent worker job's result became, for reads of its own versions. */
  private readonly installOfJob = new Map<number, number>();
  /** Reads that named a version the store no longer has: their execution cannot validate. */
  staleReads = 0;
  /**
   * New stores attached so far. A driver notes it when it sends a job and gives it back with the
   * result (`ownResult`): a job sent before the last reset ran against a mirror that has been reset
   * since, and its result goes to a replica that ignores it, so it is no mirror's own (else the
   * `remove` that follows would drop the versions the mirror made of a later job of the same op).
   */
  resets = 0;

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
    this.resets++;
    this.own = null;
    // A new replica (a recovery) made a new store: every mirror starts over.
    for (let i = 0; i < this.logs.length; i++) this.logs[i] = [['reset']];
  }

  installed(written: readonly Version[]): void {
    if (written.length === 0) return;
    const writer = written[0]!.writer;
    const install = ++this.installs;
    for (const v of written) v.install = install;
    const name = writerName(writer);
    // The result being handed over, if this is its installation: the same writer and exactly its
    // keys. (A result with no writes installs nothing; the same op run again on the main thread
    // within the same hand-off is another execution, sent with its values.)
    const own = this.own !== null && isOwn(this.own, name, written) ? this.own : null;
    if (own !== null) {
      this.installOfJob.set(own.jobId, install);
      // Reads of a job's own versions come from the jobs queued behind it on one worker, all
      // resolved soon after: older entries go (a read that misses one is stale, and runs again).
      if (this.installOfJob.size > JOBS_REMEMBERED)
        this.installOfJob.delete(this.installOfJob.keys().next().value!);
      this.own = null;
    }
    let writes: Write[] | null = null;
    for (let i = 0; i < this.logs.length; i++) {
      // The mirror that ran the job has its writes already (the core installs a result's writes
      // as they are): only their installation number goes to it.
      if (own !== null && own.mirror === i)
        this.logs[i]!.push(['own', name, install, rankOf(writer), own.jobId]);
      else
        this.logs[i]!.push([
          'install',
          name,
          install,
          rankOf(writer),
          (writes ??= written.map((v) => [v.key, v.value])),
        ]);
    }
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
   * The result of job `jobId`, which mirror `mirror` ran and made versions of (MirrorStore
   * installOwn), is being handed to the core: its installation, if the core installs it, is what
   * reads of those versions resolve to. `sentUnder` is `resets` when the job was sent: a job
   * sent before the last reset is ignored. Call `ownResultDone` once the core has the result.
   */
  ownResult(
    mirror: number,
    jobId: number,
    writer: string,
    keys: string[],
    sentUnder: number,
  ): void {
    if (sentUnder !== this.resets) return;
    this.own = { mirror, jobId, writer, keys };
  }

  /** The core did not install the result (its op was dropped): the mirror drops its versions. */
  ownResultDone(): void {
    const own = this.own;
    this.own = null;
    if (own !== null && own.keys.length > 0)
      this.logs[own.mirror]!.push(['remove', own.writer, own.keys]);
  }

  /**
   * A read from a mirror as the core records reads: the very version it saw (same writer, same
   * installation), or a stale record that never validates when the store no longer has it.
   */
  resolve(trace: ReadTrace): ReadRecord {
    const store = this.store;
    if (store === null) throw new Error('MirrorFeed: not the store observer of a replica');
    // An installation number names one execution of one writer: the writer's name adds nothing.
    // A negative one names a worker's own versions of a job's writes: those the core installed.
    const find = (key: string, _writer: string, install: number): Version | null => {
      const installed = install >= 0 ? install : this.installOfJob.get(-install);
      return installed === undefined ? null : store.installedAs(key, installed);
    };
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

/** Whether `written` is the installation of `own`'s result: its writer, and its keys in order. */
function isOwn(
  own: { writer: string; keys: string[] },
  writer: string,
  written: readonly Version[],
): boolean {
  if (own.writer !== writer || own.keys.length !== written.length) return false;
  for (let i = 0; i < written.length; i++) if (written[i]!.key !== own.keys[i]) return false;
  return true;
}
