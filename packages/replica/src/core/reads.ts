import type { JsonValue, User } from '@creek/app';
import { MAX_OWN_OPS_LISTED } from '@creek/protocol';
import { correctionCauses, shownReads, type ShownReads } from './corrections.js';
import { Entry } from './entry.js';
import { END_REQ, type Job, type ReplicaContext } from './replica-context.js';
import { sessionOpsAt } from './session-dedupe.js';
import { RecordingSnapshot } from './snapshot.js';
import { outcomesEqual, type Outcome, type ReadSet } from './types.js';

/** A read-only op to run: what it is, and who asked (absent: anonymous), as `tx.user` sees it. */
export interface ReadOp {
  readonly op: string;
  readonly args: JsonValue;
  readonly user?: User | undefined;
}

/**
 * Read-only ops, which are never ordered: weak reads answered from the end of the list (§4.4),
 * strong reads answered stably at the committed state by read index (cab/read-index.ts), and live
 * queries' reads at either level with what they read; plus the keys whose values changed for the
 * live queries to re-run. The execution pipeline (execution.ts) serves them when the state they
 * read is executed.
 */
export class Reads {
  private readonly pendingReads: (ReadOp & { readonly tag: number })[] = [];
  /**
   * Strong read-only ops answered by read index (cab/read-index.ts), by tag: each waits until the
   * driver reports its index delivered (`indexed`) and every op this replica issued before it is
   * committed (its own writes, weak ones included, are in the state it reads), then reads the
   * committed state.
   */
  private readonly strongReads = new Map<
    number,
    {
      readonly read: ReadOp;
      readonly ownUpTo: number;
      indexed: boolean;
      /** Its tentative answer, once given, and what that read saw (an explained correction). */
      shown?: { readonly outcome: Outcome; readonly reads: ShownReads };
    }
  >();
  /** Live queries' reads waiting to run (InvokeRequest.watch). */
  private readonly pendingWatchReads: (ReadOp & {
    readonly tag: number;
    readonly level: 'tentative' | 'stable';
    readonly reader: string | undefined;
  })[] = [];

  constructor(
    private readonly ctx: ReplicaContext,
    /** ReplicaOptions.readIndex. */
    readonly readIndex: boolean,
  ) {}

  /** A weak read-only op (§4.4): read at the end of the list, never ordered or gossiped. */
  weak(tag: number, read: ReadOp): void {
    this.pendingReads.push({ ...read, tag });
  }

  /**
   * A strong read-only op, answered without a log write: tentatively at the end of the list as a
   * weak read would be, stably at the committed state once its read index is delivered here
   * (cab/read-index.ts).
   */
  strong(tag: number, read: ReadOp): void {
    const c = this.ctx;
    if (c.speculative) this.pendingReads.push({ ...read, tag });
    this.strongReads.set(tag, {
      read,
      ownUpTo: c.eventNo,
      indexed: false,
    });
    c.out.push({ type: 'readIndex', tag });
  }

  /** A live query's read (InvokeRequest.watch), for a client session's `reader`. */
  watch(
    tag: number,
    read: ReadOp,
    level: 'tentative' | 'stable',
    reader: string | undefined,
  ): void {
    this.pendingWatchReads.push({ ...read, tag, level, reader });
  }

  /**
   * Every instance below the read index of the strong read `tag` is delivered here: it reads the
   * committed state once this replica's own earlier ops are committed too. False: no such read.
   */
  indexReached(tag: number): boolean {
    const read = this.strongReads.get(tag);
    if (read === undefined) return false;
    read.indexed = true;
    return true;
  }

  /** A strong read waits for an op of this replica's own to commit. */
  readWaitsForOwnOps(): boolean {
    for (const r of this.strongReads.values())
      if (r.ownUpTo > this.ctx.own.committedOwnUpTo) return true;
    return false;
  }

  /** The strong reads whose index is delivered and whose own ops are committed: read now. */
  serveStrongReads(): void {
    if (this.strongReads.size === 0) return;
    let at: Entry | null = null;
    for (const [tag, strong] of this.strongReads) {
      if (!strong.indexed || strong.ownUpTo > this.ctx.own.committedOwnUpTo) continue;
      this.strongReads.delete(tag);
      at ??= this.readPoint(true);
      this.startRead(strong.read, at, {
        tag,
        trace: undefined,
        strongRead: true,
        position: this.ctx.committedCount,
        ...(strong.shown === undefined ? {} : { shown: strong.shown }),
      });
    }
  }

  /**
   * Runs the live queries' reads of one level: `tentative` at the end of the list (as weak reads),
   * `stable` at the committed state (exactly the committed entries' writes).
   */
  serveWatchReads(level: 'tentative' | 'stable'): void {
    if (!this.pendingWatchReads.some((r) => r.level === level)) return;
    const at = this.readPoint(level === 'stable');
    const keep: typeof this.pendingWatchReads = [];
    for (const read of this.pendingWatchReads.splice(0)) {
      if (read.level !== level) {
        keep.push(read);
        continue;
      }
      this.startRead(read, at, {
        tag: read.tag,
        trace: undefined,
        watch: level,
        ...(level === 'stable' ? { position: this.ctx.committedCount } : {}),
        // Read now, at the snapshot the read itself gets: a read-only job runs at once (it has
        // no rank, so even the worker pool runs it inline), so both see the same state.
        ...(read.reader === undefined
          ? {}
          : {
              sessionOps: sessionOpsAt(
                new RecordingSnapshot(this.ctx.store, at),
                read.reader,
                MAX_OWN_OPS_LISTED,
              ),
            }),
      });
    }
    this.pendingWatchReads.push(...keep);
  }

  serveReads(): void {
    if (this.pendingReads.length === 0) return;
    // Without speculation the tentative entries have no versions: the read sees the committed state.
    const end = this.readPoint(false);
    const trace = this.ctx.trace(this.ctx.executable());
    for (const read of this.pendingReads.splice(0))
      this.startRead(read, end, { tag: read.tag, trace });
  }

  /** A read-only execution finished: answer it at its level. */
  answer(ro: NonNullable<Job['readOnly']>, snapshot: RecordingSnapshot, outcome: Outcome): void {
    const c = this.ctx;
    if (ro.strongRead === true) {
      // Read at the committed state otherwise than the tentative answer shown: which writes did it.
      const causes =
        ro.shown === undefined || outcomesEqual(ro.shown.outcome, outcome)
          ? []
          : correctionCauses(null, ro.shown.reads, snapshot.reads);
      c.out.push({
        type: 'respond',
        tag: ro.tag,
        id: null,
        level: 'stable',
        outcome,
        ...(ro.position === undefined ? {} : { position: ro.position }),
        ...(causes.length === 0 ? {} : { causes }),
      });
    } else if (ro.watch === undefined) {
      c.respond(ro.tag, null, 'tentative', outcome, ro.trace);
      // The tentative answer of a strong read: kept to explain a stable answer that differs.
      const strong = this.strongReads.get(ro.tag);
      if (strong !== undefined && strong.shown === undefined)
        strong.shown = { outcome, reads: shownReads(snapshot.reads) };
    } else
      c.out.push({
        type: 'respond',
        tag: ro.tag,
        id: null,
        level: ro.watch,
        outcome,
        reads: readSetOf(snapshot),
        ...(ro.position === undefined ? {} : { position: ro.position }),
        ...(ro.sessionOps === undefined ? {} : { sessionOps: ro.sessionOps }),
      });
  }

  /**
   * The keys whose value at the end of the list or in the committed state may have changed since
   * the last call (over-approximated: every write, withdrawal and commit): a driver re-runs the
   * live queries whose read sets they touch.
   */
  takeChangedKeys(): Set<string> {
    const out = this.ctx.changedKeys ?? new Set<string>();
    this.ctx.changedKeys = new Set();
    return out;
  }

  /**
   * Where a read-only execution reads: at the end of the list, or (`committed`) right after the
   * last committed entry, where every committed write precedes it and no tentative one does.
   */
  private readPoint(committed: boolean): Entry {
    const at = new Entry(END_REQ, null, this.ctx.nowMs);
    if (committed) at.commitSeq = this.ctx.committedCount;
    return at;
  }

  /** Hands out the execution of a read-only op that reads at `at` (it is never ordered). */
  private startRead(read: ReadOp, at: Entry, readOnly: NonNullable<Job['readOnly']>): void {
    const c = this.ctx;
    const jobId = c.nextJobId++;
    const snapshot = new RecordingSnapshot(c.store, at);
    c.jobs.set(jobId, { entry: null, snapshot, ahead: false, readOnly });
    c.out.push({
      type: 'execute',
      job: {
        jobId,
        op: read.op,
        args: read.args,
        ts: c.clock.current(),
        id: null,
        snapshot,
        ...(read.user === undefined ? {} : { user: read.user }),
      },
    });
  }
}

/** What a live query's read read, from its snapshot's record. */
function readSetOf(snapshot: RecordingSnapshot): ReadSet {
  const keys: string[] = [];
  const prefixes: string[] = [];
  for (const r of snapshot.reads) {
    if (r.kind === 'key') keys.push(r.key);
    else prefixes.push(r.prefix);
  }
  return { keys, prefixes };
}
