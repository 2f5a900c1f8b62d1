import {
  correctionCauses,
  shownReads,
  type CorrectionCause,
  type ShownReads,
} from './corrections.js';
import { jsonEqual, type Invariant } from '@creek/app';
import { newVersion, rankOf, type Entry, type Execution, type Version } from './entry.js';
import { brokenInvariants } from './invariant-check.js';
import { opKey } from './op-id.js';
import type { Reads } from './reads.js';
import type { ReplicaContext } from './replica-context.js';
import { RecordingSnapshot } from './snapshot.js';
import { outcomesEqual, type ExecutionResult } from './types.js';

/** How far beyond the frontier concurrent executions may start (bounds the scan per pump). */
const AHEAD_WINDOW = 256;

/**
 * Multiversion execution of the list (§4.4): hands out executions in order from the validation
 * frontier (and, with free slots, ahead of it), validates finished ones against the versions now
 * visible at their positions, rolls back and re-executes those whose reads changed, answers the
 * clients, and finalizes committed entries that can never change again. Read-only ops are served
 * (reads.ts) once the state they read is executed.
 */
export class ExecutionPipeline {
  /** Jobs of list entries (not weak reads) now running, and how many may. */
  private runningEntries = 0;
  private readonly executionSlots: number;
  private readonly deferExecution: boolean;
  /** An input changed the list since executions last ran (with `deferExecution`). */
  private pumpDue = false;
  /** A store observer is set: jobs carry their rank (ExecutionJob.rank). */
  private readonly mirrored: boolean;
  private readonly invariants: Readonly<Record<string, Invariant>> | null;

  constructor(
    private readonly ctx: ReplicaContext,
    private readonly reads: Reads,
    options: {
      executionSlots: number;
      deferExecution: boolean;
      mirrored: boolean;
      /** ReplicaOptions.checkInvariants: the invariants to check on each finalized state. */
      invariants: Readonly<Record<string, Invariant>> | null;
    },
  ) {
    this.invariants = options.invariants;
    this.executionSlots = options.executionSlots;
    this.deferExecution = options.deferExecution;
    this.mirrored = options.mirrored;
    if (!Number.isInteger(this.executionSlots) || this.executionSlots < 1)
      throw new Error('executionSlots must be a positive integer');
  }

  /** The list or the reads waiting changed: run executions now, or when the driver says. */
  changed(): void {
    if (this.deferExecution) this.pumpDue = true;
    else this.pump();
  }

  /** Replica.runDeferred: runs the executions that inputs since the last call made necessary. */
  runDeferred(): void {
    if (this.pumpDue) this.pump();
  }

  get executionDue(): boolean {
    return this.pumpDue;
  }

  /** An execution requested by an `execute` output finished. */
  executed(result: ExecutionResult): void {
    const c = this.ctx;
    const job = c.jobs.get(result.jobId);
    if (job === undefined) throw new Error(`execution result for unknown job ${result.jobId}`);
    c.jobs.delete(result.jobId);
    if (job.entry === null) {
      this.reads.answer(job.readOnly!, job.snapshot, result.outcome);
    } else {
      const e = job.entry;
      e.running = 0;
      this.runningEntries--;
      // Dropped while it ran (a close of its origin): off the list, its writes go nowhere.
      if (e.dropped) {
        this.pump();
        return;
      }
      e.executions++;
      c.metrics.executions++;
      const hashes = result.pairHashes;
      const writes: Version[] = result.writes.map(([key, value], i) =>
        newVersion(
          e,
          key,
          value,
          hashes === undefined || value === undefined
            ? undefined
            : hashes.subarray(i * 4, i * 4 + 4),
        ),
      );
      c.store.install(writes);
      if (c.changedKeys !== null) for (const w of writes) c.changedKeys.add(w.key);
      e.exec = { reads: job.snapshot.reads, writes, outcome: result.outcome, ahead: job.ahead };
    }
    this.pump();
  }

  /** Validates, executes and answers entries in order from `frontier`, then serves local reads. */
  pump(): void {
    const c = this.ctx;
    this.pumpDue = false;
    this.finalizeReady();
    // `c.order` is re-read on every step: finalizing may compact it.
    while (c.frontier < c.executable()) {
      const e = c.order[c.frontier]!;
      if (e.running !== 0) break;
      if (e.exec !== null) {
        if (this.stillValid(e)) {
          this.accept(e);
          c.frontier++;
          this.finalizeReady();
          continue;
        }
        if (e.exec.ahead) c.metrics.aheadConflicts++;
        c.store.remove(e.exec.writes);
        if (c.changedKeys !== null) for (const w of e.exec.writes) c.changedKeys.add(w.key);
        e.exec = null;
        c.metrics.rollbacks++;
      }
      this.startExecution(e, false);
      break;
    }
    // The committed state is whole once every committed entry is executed and valid.
    if (c.frontier >= c.committedEnd) {
      this.reads.serveWatchReads('stable');
      this.reads.serveStrongReads();
    }
    if (c.frontier < c.executable()) this.startAhead();
    // Held, the state at the end of the list is not executed: a read served from the committed
    // state could miss the session's own tentative writes (read-your-writes), so reads wait.
    else if (!c.held) {
      this.reads.serveReads();
      this.reads.serveWatchReads('tentative');
    }
  }

  /**
   * Concurrent execution (§4.4): while the frontier's execution runs, free slots start entries
   * after it that were never executed, each on the snapshot of its own position. Their writes are
   * installed when they finish; whether what they read still holds is checked when the frontier
   * reaches them (`stillValid`), as for any execution, so a conflict with an earlier execution that
   * finished meanwhile discards the result and re-executes. Entries with a stale execution are not
   * started here: they are validated first, in order.
   */
  private startAhead(): void {
    const c = this.ctx;
    const end = Math.min(c.executable(), c.frontier + AHEAD_WINDOW);
    for (let i = c.frontier + 1; i < end && this.runningEntries < this.executionSlots; i++) {
      const e = c.order[i]!;
      if (e.running === 0 && e.exec === null) this.startExecution(e, true);
    }
  }

  private startExecution(e: Entry, ahead: boolean): void {
    const c = this.ctx;
    const jobId = c.nextJobId++;
    const snapshot = new RecordingSnapshot(c.store, e);
    e.running = jobId;
    this.runningEntries++;
    if (ahead) c.metrics.aheadExecutions++;
    c.jobs.set(jobId, { entry: e, snapshot, ahead });
    const req = e.req;
    c.out.push({
      type: 'execute',
      job: {
        jobId,
        op: req.op,
        args: req.args,
        ts: req.ts,
        id: req.id,
        snapshot,
        ahead,
        retry: e.executions > 0,
        // Only executors that read a mirror of the store need it (they are its observer).
        ...(this.mirrored ? { rank: rankOf(e) } : {}),
        ...(req.session === undefined ? {} : { session: req.session }),
        ...(req.user === undefined ? {} : { user: req.user }),
      },
    });
  }

  /** Every read of the execution still sees the same value at the entry's current position. */
  private stillValid(e: Entry): boolean {
    const store = this.ctx.store;
    const exec = e.exec as Execution;
    for (const read of exec.reads) {
      if (read.stale === true) return false;
      if (read.kind === 'key') {
        const now = store.visible(read.key, e);
        if (now === read.version) continue;
        if (!jsonEqual(now?.value, read.version?.value)) return false;
        read.version = now;
      } else {
        const now = store.scan(read.prefix, e);
        const was = read.versions;
        if (now.length !== was.length) return false;
        for (let k = 0; k < now.length; k++) {
          const a = now[k]!;
          const b = was[k]!;
          if (a !== b && (a.key !== b.key || !jsonEqual(a.value, b.value))) return false;
        }
        read.versions = now;
      }
    }
    return true;
  }

  /** An execution became valid at its position: answer the client if it is waiting. */
  private accept(e: Entry): void {
    const c = this.ctx;
    const local = e.local;
    if (local === null) return;
    const outcome = (e.exec as Execution).outcome;
    if (e.committed) {
      // A weak op first executed after it was committed: its only response is already final.
      // (A strong op's stable response is sent when it is finalized.)
      if (!e.req.strong && local.first === null) {
        local.first = outcome;
        c.respond(local.tag, e.req.id, 'stable', outcome);
      }
      return;
    }
    if (!e.req.strong) {
      // Lines 66-68: a weak op answers after its first execution.
      if (local.first !== null) return;
      local.first = outcome;
      local.firstWasTentative = true;
      c.respond(local.tag, e.req.id, 'tentative', outcome, c.trace(c.frontier));
      return;
    }
    // Lines 69-71: a strong op answers tentatively after each execution whose result changed.
    if (local.lastTentative !== null && outcomesEqual(local.lastTentative, outcome)) return;
    const reads = (e.exec as Execution).reads;
    // A new tentative answer that replaces one the client was shown says why, as a stable one does.
    const shown = local.shown ?? null;
    const causes =
      local.lastTentative !== null && shown !== null ? explain(e, shown, reads) : undefined;
    local.lastTentative = outcome;
    local.shown = shownReads(reads);
    if (local.first === null) {
      local.first = outcome;
      local.firstWasTentative = true;
    }
    c.respond(local.tag, e.req.id, 'tentative', outcome, c.trace(c.frontier), causes);
  }

  /** Reports each invariant the finalized state right after `e` breaks (checkInvariants). */
  private checkInvariants(e: Entry, invariants: Readonly<Record<string, Invariant>>): void {
    const c = this.ctx;
    for (const { invariant, error } of brokenInvariants(invariants, c.store.finalReader(e))) {
      c.metrics.invariantsBroken++;
      c.out.push({
        type: 'invariantBroken',
        violation: { invariant, position: e.commitSeq + 1, id: e.req.id, op: e.req.op, error },
      });
    }
  }

  /** Drops entries that can never change again, and the versions they made unreachable. */
  private finalizeReady(): void {
    const c = this.ctx;
    const order = c.order;
    while (c.head < c.frontier && c.head < c.committedEnd) {
      const e = order[c.head]!;
      const exec = e.exec as Execution;
      c.store.finalize(exec.writes, c.finals);
      c.finals.finalized(e.commitSeq + 1, e.req.id, e.req.op);
      const local = e.local;
      // A strong op whose client was shown another answer: which writes made the difference.
      const shown = local?.shown ?? null;
      const causes =
        local !== null &&
        e.req.strong &&
        local.lastTentative !== null &&
        shown !== null &&
        !outcomesEqual(local.lastTentative, exec.outcome)
          ? explain(e, shown, exec.reads)
          : undefined;
      if (local !== null) local.shown = null;
      if (this.invariants !== null) this.checkInvariants(e, this.invariants);
      exec.reads.length = 0;
      c.live.delete(opKey(e.req.id));
      c.metrics.finalized++;
      c.metrics.executionsOfFinalized += e.executions;
      if (e.req.strong && e.req.id.replica === c.origin) c.finalizedOwnStrong = e.req.id.eventNo;
      // Lines 55-57 and 73: the stable response of a strong op, without re-execution when its
      // speculative execution held at its final position.
      // A weak op answered tentatively gets its stable outcome too: the driver tells the client
      // the op is committed (a session acknowledges only committed ops; see session-dedupe.ts).
      if (local !== null && (e.req.strong || local.firstWasTentative))
        c.respond(local.tag, e.req.id, 'stable', exec.outcome, undefined, causes);
      if (local !== null && local.firstWasTentative)
        c.metrics.countSpeculation(e.req.op, outcomesEqual(local.first!, exec.outcome));
      c.head++;
    }
    if (c.head >= 1024 && c.head * 2 >= order.length) {
      c.order = order.slice(c.head);
      c.frontier -= c.head;
      c.committedEnd -= c.head;
      c.head = 0;
    }
  }
}

/**
 * The causes of `e`'s answer changing from the one its client was shown, kept on the entry too (a
 * later op that read its write inherits them); undefined when none is found.
 */
function explain(
  e: Entry,
  shown: ShownReads,
  reads: Execution['reads'],
): readonly CorrectionCause[] | undefined {
  const causes = correctionCauses(e, shown, reads);
  if (causes.length === 0) return undefined;
  e.causes = causes;
  return causes;
}
