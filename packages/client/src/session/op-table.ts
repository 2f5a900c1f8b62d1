import type { ErrorCode } from '@creek/protocol';
import type { ConsistencyLevel, CorrectionCause, ViewSink } from '../binding.js';
import {
  ClientClosed,
  CreekError,
  errorFromWire,
  OperationFailed,
  type Fate,
  type Indeterminate,
} from '../errors.js';
import { settleIndeterminacy } from '../indeterminacy.js';
import { OpViews, type Outcome } from '../op-views.js';

/** An op of this client's session, from its submission until the cluster may forget it. */
export interface SessionOp {
  readonly opId: string;
  /** Its number in the session (exactly-once across replicas). */
  readonly seq: number;
  readonly op: string;
  readonly args: unknown;
  readonly level: 'weak' | 'strong';
  /** A strong op asked for its stable view alone (`invokeStrong`): the replica sends no other. */
  readonly stableOnly: boolean;
  /** The views still to deliver; null once the caller has its answer (or gave up). */
  views: OpViews<unknown> | null;
  /** The caller's sink, which also hears of the op's commit (Correctable.committed). */
  readonly sink: ViewSink<unknown>;
  /** Known committed (or never to be ordered): with `views` null, it may be acknowledged. */
  committed: boolean;
  /** The connection it was last sent on (`committed` frames speak for that connection only). */
  sentOn: number;
  /**
   * The connection that last answered it (a view or a confirmation): a context token asked for on
   * a connection covers the op only once that connection's replica has answered it, durable.
   */
  answeredOn: number;
  /** When it was last sent (the session's clock), for the stall check. */
  sentAt: number;
  /**
   * How many times it was sent, and how many of those the replica refused (busy, unavailable):
   * while the two are equal no replica took it, so it certainly did not take effect.
   */
  sends: number;
  refusals: number;
  /** Its stable outcome, once a replica sent it (or confirmed its last tentative one). */
  outcome: Outcome | null;
  /** Its last tentative outcome: what a confirmation confirms. */
  tentative: Outcome | null;
  /** What became of it, once known (Indeterminate), and who waits to learn it. */
  fate: Fate | null;
  readonly waiting: { resolve(f: Fate): void; reject(e: CreekError): void }[];
  /** Its client asked the cluster to abandon it: it is not resubmitted any more. */
  abandoning: boolean;
  /** It waits in the offline queue (its Correctable says so). */
  queued: boolean;
}

/** A new op of the session, numbered `seq`, not yet sent (its views are the table's to make). */
function newSessionOp(
  seq: number,
  op: string,
  args: unknown,
  levels: readonly ConsistencyLevel[],
  sink: ViewSink<unknown>,
): SessionOp {
  return {
    // Unique within the session, which is all op ids need to be; short, since every frame
    // about the op carries it.
    opId: String(seq),
    seq,
    op,
    args,
    level: levels.includes('strong') ? 'strong' : 'weak',
    stableOnly: levels.includes('strong') && !levels.includes('weak'),
    views: null,
    sink,
    committed: false,
    sentOn: 0,
    answeredOn: 0,
    sentAt: 0,
    sends: 0,
    refusals: 0,
    outcome: null,
    tentative: null,
    fate: null,
    waiting: [],
    abandoning: false,
    queued: false,
  };
}

/** The op the cluster abandons an earlier op of the session with (the server's session-dedupe.ts). */
const ABANDON_OP = 'creek.abandon';

/** What the op table needs of its session. */
export interface OpTableHooks {
  /** The ops the offline storage keeps changed. */
  persist(): void;
  /** The session takes no more ops (closed, or the cluster refused it). */
  closed(): boolean;
  /** Submits an op as the session's next one (the abandon of an earlier one). */
  submit<T>(
    op: string,
    args: unknown,
    levels: readonly ConsistencyLevel[],
    sink: ViewSink<T>,
  ): void;
  /** Sends an op again on the connection, if one is open (its abandon failed, not taken). */
  resume(o: SessionOp): void;
}

/**
 * The session's ops by op id, until committed and answered, and the numbering of new ones. What
 * the table holds is what the cluster must not forget yet: an op leaves it once the caller has its
 * answer and the op is known committed (or never to be ordered). It also keeps what became of
 * each op (its fate) for a caller that got an error and does not know (errors' `indeterminate`).
 */
export class OpTable {
  private readonly ops = new Map<string, SessionOp>();
  /** The number the next op of the session gets. */
  nextSeq = 1;

  constructor(private readonly hooks: OpTableHooks) {}

  get size(): number {
    return this.ops.size;
  }

  get(opId: string): SessionOp | undefined {
    return this.ops.get(opId);
  }

  delete(opId: string): void {
    this.ops.delete(opId);
  }

  /** The ops in the order they were tracked (live: an op deleted meanwhile is not visited). */
  values(): IterableIterator<SessionOp> {
    return this.ops.values();
  }

  /** How many ops still wait for their answer. */
  waiting(): number {
    return [...this.ops.values()].filter((x) => x.views !== null).length;
  }

  /**
   * When the oldest op still waiting for its answer on `connection` was sent, and the oldest strong
   * one (Infinity: none waits).
   */
  oldestWaiting(connection: number): { oldest: number; oldestStrong: number } {
    let oldest = Number.POSITIVE_INFINITY;
    let oldestStrong = Number.POSITIVE_INFINITY;
    for (const o of this.ops.values()) {
      if (o.views === null || o.sentOn !== connection) continue;
      oldest = Math.min(oldest, o.sentAt);
      if (o.level === 'strong') oldestStrong = Math.min(oldestStrong, o.sentAt);
    }
    return { oldest, oldestStrong };
  }

  /**
   * Whether the replica of `connection` holds every op whose caller has an answer and that is not
   * seen committed: each was answered again on it. A resubmitted op's new copy is in the replica's
   * counts only once it is durable, so a context token asked for sooner could cover no copy of the
   * write (the simulator, seed 2099).
   */
  answeredAgainOn(connection: number): boolean {
    for (const o of this.ops.values())
      if (o.views === null && !o.committed && !o.abandoning && o.answeredOn !== connection)
        return false;
    return true;
  }

  /**
   * The session gave up on every replica: each op waiting for its answer fails with `gaveUp`
   * (whether it may have taken effect: a replica refused each send, or not), and one no replica
   * ever took is forgotten, so that it is not resubmitted behind its caller.
   */
  giveUp(gaveUp: (mayHaveTakenEffect: boolean) => CreekError): void {
    this.failAll((o) => {
      const mayHaveTakenEffect = o.refusals < o.sends;
      if (!mayHaveTakenEffect) o.committed = true;
      return gaveUp(mayHaveTakenEffect);
    });
    this.forgetSettled();
  }

  /** Every op of the session numbered below this is answered and committed. */
  acked(): number {
    let min = this.nextSeq;
    for (const o of this.ops.values()) if (o.seq < min) min = o.seq;
    return min;
  }

  /** An op of the session, numbered `seq`, from its invocation (or its restoring) on. */
  track(
    seq: number,
    op: string,
    args: unknown,
    levels: readonly ConsistencyLevel[],
    sink: ViewSink<unknown>,
  ): SessionOp {
    const o = newSessionOp(seq, op, args, levels, sink);
    o.views = new OpViews(levels, {
      view: (v) => sink.view(v),
      error: (e) => {
        this.settleError(o, e);
        sink.error(e);
      },
    });
    this.ops.set(o.opId, o);
    return o;
  }

  /**
   * The caller stopped listening to `o` (Cancelled, Timeout: `reason`). An op no replica took is
   * forgotten and never sent; one that may have landed is tracked until committed.
   */
  abort(o: SessionOp, reason: unknown): void {
    const taken = o.refusals < o.sends;
    if (!taken) {
      o.committed = true;
      o.sink.neverCommits?.(reason instanceof CreekError ? reason : undefined);
    }
    if (reason instanceof CreekError)
      settleIndeterminacy(reason, taken, taken ? this.handle(o) : null);
    this.answered(o);
  }

  /** The caller has its answer (or stopped listening): the op is forgotten once committed. */
  answered(o: SessionOp): void {
    o.views = null;
    if (o.committed && !o.abandoning) this.ops.delete(o.opId);
    this.hooks.persist();
  }

  /** A replica says the op is committed, and no more (a `committed` frame). */
  commit(o: SessionOp): void {
    this.committed(o, null);
    // An op being abandoned stays until the abandon's answer: the session must not acknowledge
    // past it before, or the abandon could no longer find which came first.
    if (o.views === null && !o.abandoning) this.ops.delete(o.opId);
    this.hooks.persist();
  }

  /**
   * A replica says the op is committed: its fate is known, with its outcome there if it said. Not
   * for an op being abandoned: a copy of it committed after the abandon is committed as a no-op,
   * and only the abandon's answer says which came first.
   */
  committed(o: SessionOp, outcome: Outcome | null): void {
    o.committed = true;
    if (outcome !== null) o.outcome = outcome;
    if (o.abandoning) return;
    this.settle(o, { fate: 'committed', outcome: o.outcome });
    o.sink.committed?.();
  }

  /**
   * A view of `o` from a replica, tentative or stable; `ordered`: it names the op's place in the
   * order (its id), which a weak read answered from the replica's state has not.
   */
  viewed(
    o: SessionOp,
    level: 'tentative' | 'stable',
    outcome: Outcome,
    ordered: boolean,
    causes?: readonly CorrectionCause[],
  ): void {
    // A stable view is of a committed op. A weak view without an op id is of an op that is never
    // ordered (a read, answered from the replica's state): the cluster keeps nothing to forget.
    if (level === 'tentative') o.tentative = outcome;
    if (level === 'stable') this.committed(o, outcome);
    else if (o.level === 'weak' && !ordered) {
      // Never ordered (a read answered from the replica's state): done at its answer.
      o.committed = true;
      o.sink.committed?.();
    }
    if (o.views?.outcome(level, outcome, causes) === true) this.answered(o);
  }

  /** The stable outcome of `o` equals its last tentative one (Correctables §5.2). */
  confirmed(o: SessionOp): void {
    this.committed(o, o.tentative);
    if (o.views?.confirm() === true) this.answered(o);
  }

  /** A replica refused `o` with an error of its own (not busy or unavailable, which pass). */
  refusedEverywhere(o: SessionOp, code: ErrorCode, message: string): void {
    // Refused arguments, op names, frames or callers are refused everywhere: never ordered.
    if (
      code === 'invalid-arguments' ||
      code === 'unknown-op' ||
      code === 'bad-frame' ||
      code === 'out-of-order' ||
      code === 'unauthorized' ||
      code === 'forbidden'
    )
      o.committed = true;
    o.views?.error(errorFromWire(code, message));
    this.answered(o);
  }

  /** Ends every op still waiting for its answer with the error `fail` gives for it. */
  failAll(fail: (o: SessionOp) => CreekError): void {
    for (const o of this.ops.values()) {
      o.views?.error(fail(o));
      o.views = null;
    }
  }

  /** Forgets the ops that are answered and known committed (or never to be ordered). */
  forgetSettled(): void {
    for (const o of [...this.ops.values()])
      if (o.views === null && o.committed) this.ops.delete(o.opId);
  }

  /**
   * The session is closed (or ended, its user gone): whoever waits for an op's fate learns it will
   * not be known, every op not known committed never will be (`why`, given whether the op was
   * sent), and the table is emptied.
   */
  closeAll(why: (sent: boolean) => CreekError = (sent) => new ClientClosed(sent)): void {
    for (const o of this.ops.values()) {
      for (const w of o.waiting.splice(0)) w.reject(why(true));
      if (!o.committed) o.sink.neverCommits?.(why(o.sentOn > 0));
    }
    this.ops.clear();
  }

  /**
   * Says on an op's error whether the op may have taken effect, with a handle on it if so: a weak
   * op's failure is its tentative answer (it still runs where it is committed, unless it is never
   * ordered), a strong op's stable one is final; other errors say for themselves.
   */
  private settleError(o: SessionOp, e: CreekError): void {
    const may =
      e instanceof OperationFailed ? o.level === 'weak' && !o.committed : e.mayHaveTakenEffect;
    settleIndeterminacy(e, may, may && !this.hooks.closed() ? this.handle(o) : null);
  }

  /** The handle on an op whose fate the caller does not know (errors' `indeterminate`). */
  private handle(o: SessionOp): Indeterminate {
    return { settled: () => this.fateOf(o), abandon: () => this.abandon(o) };
  }

  private fateOf(o: SessionOp): Promise<Fate> {
    if (o.fate !== null) return Promise.resolve(o.fate);
    if (this.hooks.closed()) return Promise.reject(new ClientClosed(true));
    return new Promise((resolve, reject) => o.waiting.push({ resolve, reject }));
  }

  /** What became of an op is known: tell whoever waits. */
  private settle(o: SessionOp, fate: Fate): void {
    if (o.fate !== null) return;
    o.fate = fate;
    for (const w of o.waiting.splice(0)) w.resolve(fate);
  }

  /**
   * Asks the cluster to abandon `o` for good (`creek.abandon`, strong, the session's next op): it
   * is no longer resubmitted, and wherever the abandon lands in the committed order decides.
   */
  private abandon(o: SessionOp): Promise<Fate> {
    if (o.fate !== null) return Promise.resolve(o.fate);
    if (o.committed) return Promise.resolve({ fate: 'committed', outcome: o.outcome });
    o.abandoning = true;
    return new Promise<Fate>((resolve, reject) => {
      this.hooks.submit<{ abandoned: boolean; outcome?: Outcome | null }>(
        ABANDON_OP,
        { seq: o.seq },
        ['strong'],
        {
          view: (v) => {
            if (!v.final) return;
            const fate: Fate = v.value.abandoned
              ? { fate: 'abandoned' }
              : { fate: 'committed', outcome: v.value.outcome ?? o.outcome };
            this.settle(o, fate);
            if (fate.fate === 'abandoned') o.sink.neverCommits?.();
            else o.sink.committed?.();
            // Settled either way: nothing of it is left to resubmit or wait for, and the session
            // may acknowledge past it.
            o.committed = true;
            o.abandoning = false;
            if (o.views === null) this.ops.delete(o.opId);
            this.hooks.persist();
            resolve(o.fate!);
          },
          error: (e) => {
            // No replica took the abandon (the connect timeout failed it before it went, or it
            // was refused): the op is as it was before, resubmitted until it commits, and the
            // caller may abandon it again. Left marked, it was never sent again nor settled, and
            // a live query waited for it for good (the simulator, seed 1087 with 5 replicas).
            if (!e.mayHaveTakenEffect && o.abandoning && o.fate === null) {
              o.abandoning = false;
              this.hooks.resume(o);
            }
            reject(e);
          },
        },
      );
    });
  }
}
