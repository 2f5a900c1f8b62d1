import type { JsonValue, User } from '@creek/app';
import { incarnationOf, opKey, slotOf, type OpId } from '@creek/replica/core/op-id.js';
import type {
  OrderTrace,
  Outcome,
  Req,
  Response,
  ResponseLevel,
  SessionStamp,
} from '@creek/replica/core/types.js';
import type { DivergenceReport } from '@creek/replica/host/divergence.js';
import type { InvariantViolation } from '@creek/replica/core/invariant-check.js';
import type { CallerSightings } from './callers.js';
import { callerText } from './users.js';

/** Everything the checkers look at after a run. */
export interface RunRecord {
  /** How many replica ids the run used (0..replicas-1): the genesis ones and those added. */
  replicas: number;
  /** Every Req that was ever RB-cast, by op key. */
  readonly reqs: Map<string, Req>;
  /** Per replica: its commit records, in order (after a crash, those that survived on disk). */
  readonly commits: OpId[][][];
  readonly invocations: Invocation[];
  /**
   * Symmetric partitions: when they started and healed, and the groups they made. A replica
   * started during one (a new member) is in none of its groups, and no link of it is cut:
   * `bridgedAt` is when the first one started, from which the groups can reach each other through
   * it.
   */
  readonly splits: {
    readonly start: number;
    end: number;
    readonly groups: readonly (readonly number[])[];
    bridgedAt?: number;
  }[];
  /**
   * When each replica held speculation for a catch-up (ReplicaHost.speculationHeld): its reads and
   * first tentative answers waited. `end` is Infinity while it still holds.
   */
  readonly holds: { readonly replica: number; readonly start: number; end: number }[];
  /**
   * When each replica had an execution of its list under way (its executor held a job of an op,
   * not of a read): a tentative answer waits until every entry before its op is executed and
   * valid, and after a reorder that can take many executions. `end` is Infinity while one runs.
   */
  readonly executing: { readonly replica: number; readonly start: number; end: number }[];
  /** Per replica, at the end of the run. */
  readonly finals: FinalReplicaState[];
  /** Replicas that crashed for good: the end-of-run checks leave their final state out. */
  readonly lost: number[];
  /**
   * Origins that will never issue another op (core/op-id.ts): those of replicas lost for good, and
   * of the incarnations that lost disks ran under. Their ops that follow one nobody received stay
   * tentative for good (FinalReplicaState.stranded), and those nobody received are gone.
   */
  readonly deadOrigins: number[];
  /** Replicas whose removal came into force (their origins are dead, and the cluster knows it). */
  readonly removed: number[];
  /**
   * Disks that were lost ('wipe'), each with its replica, which of its disks it was (0 the first),
   * its commit list, and the Reqs of that replica's ops that no other replica held then: gone from
   * `reqs` (their ids may be used again), but the responses given on that disk saw them. The
   * replica's list in `commits` is that of its current disk.
   */
  readonly retired: {
    readonly replica: number;
    readonly disk: number;
    readonly commits: OpId[][];
    readonly lostReqs: ReadonlyMap<string, Req>;
  }[];
  /**
   * The cluster's membership over time: from `at` on, `members` were the configuration in force
   * at every live member, or null while a change was in progress (asked, and not yet in force
   * everywhere); `decided`, on an entry of a change in progress, is a configuration a change made
   * (from when the operator heard it was decided: replicas may have applied it before). The
   * genesis configuration at 0.
   */
  readonly memberships: {
    readonly at: number;
    readonly members: readonly number[] | null;
    readonly decided?: readonly number[];
  }[];
  /**
   * What the clients saw (SimConfig.clients 'sdk'): every op their sessions were asked for, as the
   * session reported it to its caller. Absent with the model's clients, whose invocations are
   * what their clients saw.
   */
  readonly clientOps?: ClientOpRecord[];
  /**
   * What replicas reported of divergences (HostEvent `divergence`), in order: when, which replica,
   * and its report (null: over).
   */
  readonly divergences: {
    readonly at: number;
    readonly replica: number;
    readonly report: DivergenceReport | null;
  }[];
  /** What replicas reported of invariants their finalized state broke (SimConfig.invariants). */
  readonly invariantReports: InvariantReport[];
  /** With the planted nondeterministic op: when each of its ops was first committed, by op key. */
  readonly plantedCommittedAt: Map<string, number>;
}

/** An invariant a replica reported broken (HostEvent `invariantBroken`), when, in simulated time. */
export interface InvariantReport {
  readonly at: number;
  readonly replica: number;
  readonly violation: InvariantViolation;
}

/** One op a client session was asked for, and what it told its caller (RunRecord.clientOps). */
export interface ClientOpRecord {
  /** Its session, and its number there (every copy of it a replica took carries both). */
  readonly session: string;
  readonly seq: number;
  readonly op: string;
  readonly args: JsonValue;
  readonly strong: boolean;
  /** Strong, and its caller asked for the stable view alone. */
  readonly stableOnly: boolean;
  /** Simulated time of the call. */
  readonly invokedAt: number;
  /** The views its caller got, in order (the last one final). */
  readonly views: {
    readonly at: number;
    readonly level: 'cached' | 'weak' | 'strong';
    readonly final: boolean;
    readonly value: JsonValue;
  }[];
  /** The error its caller got instead of a final view, if one. */
  error: {
    readonly at: number;
    readonly code: string;
    readonly message: string;
    readonly mayHaveTakenEffect: boolean;
  } | null;
  /** When the session said it is committed (ViewSink.committed), or null. */
  committedAt: number | null;
  /** The session said it never will be (ViewSink.neverCommits). */
  neverCommitted: boolean;
  /** When its caller stopped waiting for it (a timeout), and whether it then asked to abandon it. */
  timedOutAt: number | null;
  abandonAsked: boolean;
  /** What became of it as the session knew at the end (its `indeterminate` handle's fate). */
  fate: { readonly fate: 'committed' | 'abandoned' } | null;
}

export interface Invocation {
  readonly replica: number;
  readonly tag: number;
  readonly op: string;
  readonly args: JsonValue;
  readonly strong: boolean;
  /** Simulated time of the invocation and of each response. */
  readonly invokedAt: number;
  id: OpId | null;
  readonly responses: RecordedResponse[];
  /** Its replica crashed before the op completed: its client is gone. */
  abandoned: boolean;
  /** The client session's numbering; a resubmission elsewhere has the same id and seq. */
  readonly session?: SessionStamp;
  /** Which of its replica's disks it ran on, when that replica lost one before (RunRecord.retired). */
  readonly disk?: number;
  /** When its client sent it (SimConfig.clients 'sdk'; the replica took it later, at `invokedAt`). */
  readonly sentAt?: number;
  /** Who invoked it, as the replica took it (absent: anonymous). */
  readonly user?: User;
}

export interface RecordedResponse {
  readonly at: number;
  readonly level: ResponseLevel;
  readonly outcome: Outcome;
  readonly trace?: OrderTrace;
  /** A stable read that was not ordered (a strong read by read index): its committed position. */
  readonly position?: number;
}

export interface FinalReplicaState {
  /** The state as canonical JSON (`Replica.stateJson`): checker (b) compares and reads it. */
  readonly digest: string;
  /** The replica's own fixed-size digest (`Replica.stateDigest`, kept up to date key by key). */
  readonly hash: string;
  readonly tentative: number;
  readonly unvalidated: number;
  /**
   * Tentative ops of a replica lost for good that follow an op of that origin this replica never
   * received (it died with its origin): program order keeps them tentative, and in the state.
   */
  readonly stranded: readonly OpId[];
  /**
   * Tentative ops of a dead origin the cluster knows is dead (`closableOrigins`): they must end
   * committed or dropped by the origin's close (core/closing-origins.ts), never stay tentative.
   */
  readonly unclosed: readonly OpId[];
}

/** The replicas up at the end of the run, ascending. */
export function liveReplicas(record: RunRecord): number[] {
  return Array.from({ length: record.replicas }, (_, r) => r).filter(
    (r) => !record.lost.includes(r),
  );
}

/** The committed list of a replica: its commit records concatenated. */
export function committedList(record: RunRecord, replica: number): OpId[] {
  return record.commits[replica]!.flat();
}

/**
 * The committed list of one of a replica's disks (0 the first; its current one if it lost none
 * after it), lost ones included, and the Reqs that were lost with it: what its responses on that
 * disk were given against.
 */
export function committedListOn(
  record: RunRecord,
  replica: number,
  disk = 0,
): { readonly committed: OpId[]; readonly lostReqs: ReadonlyMap<string, Req> } {
  const retired = record.retired.find((r) => r.replica === replica && r.disk === disk);
  return retired === undefined
    ? { committed: committedList(record, replica), lostReqs: new Map() }
    : { committed: retired.commits.flat(), lostReqs: retired.lostReqs };
}

/** Every commit list the run produced, with whose it was: each replica's, and those of lost disks. */
export function allCommitLists(
  record: RunRecord,
): { readonly whose: string; readonly commits: OpId[][] }[] {
  return [
    ...record.commits.map((commits, r) => ({ whose: `replica ${r}`, commits })),
    ...record.retired.map((x) => ({
      whose: `replica ${x.replica} (disk ${x.disk}, lost)`,
      commits: x.commits,
    })),
  ];
}

/** The longest commit list of the run (they are prefixes of one another: checker (a)). */
export function longestCommitted(record: RunRecord): OpId[] {
  let best: OpId[] = [];
  for (const { commits } of allCommitLists(record)) {
    const l = commits.flat();
    if (l.length > best.length) best = l;
  }
  return best;
}

/**
 * What a `creek.abandon` invocation's stable answer said: true (abandoned: the op never takes
 * effect), false (it had taken effect first), or null while it has no stable answer.
 */
export function abandonAnswer(inv: Invocation): boolean | null {
  const stable = inv.responses.find((r) => r.level === 'stable');
  if (stable === undefined || !stable.outcome.ok) return null;
  const v = stable.outcome.value as { abandoned?: unknown } | null;
  return typeof v?.abandoned === 'boolean' ? v.abandoned : null;
}

/** What recording a response needs of the run (RunState has it). */
export interface Recording {
  readonly now: number;
  readonly record: RunRecord;
  readonly callers: CallerSightings;
}

/**
 * A response to `inv`, as its replica released it, into the record: the op's id from the first
 * response that names one (and, with it, the caller its client invoked it as: RunState.callers),
 * then the response itself, at the simulated time it was released.
 */
export function recordResponse(run: Recording, inv: Invocation, o: Response): void {
  if (inv.id === null && o.id !== null)
    run.callers.sawInvoked(o.id, run.record.reqs.get(opKey(o.id)), inv.op, callerText(inv.user));
  inv.id ??= o.id;
  inv.responses.push({
    at: run.now,
    level: o.level,
    outcome: o.outcome,
    ...(o.trace === undefined ? {} : { trace: o.trace }),
    ...(o.position === undefined ? {} : { position: o.position }),
  });
}

/**
 * The dead origins whose death the cluster can know (core/closing-origins.ts closes them): a later
 * incarnation of their replica issued an op or runs (`current`: the origins of the replicas up,
 * not halted), or their replica's removal came into force. A replica lost for good without
 * either is dead to the run, not to the cluster.
 */
export function closableOrigins(record: RunRecord, current: readonly number[]): Set<number> {
  // Asked at every quiescence check: kept while the record's Reqs and deaths are what they were.
  const stamp = `${record.reqs.size}/${record.deadOrigins.length}/${record.removed.length}/${current.join(',')}`;
  const cached = closableCache.get(record);
  if (cached?.stamp === stamp) return cached.origins;
  const newest = new Map<number, number>();
  const origins = [...[...record.reqs.values()].map((q) => q.id.replica), ...current];
  for (const o of origins)
    if (o >= 0) newest.set(slotOf(o), Math.max(newest.get(slotOf(o)) ?? 0, incarnationOf(o)));
  const out = new Set<number>();
  for (const origin of record.deadOrigins)
    if (
      record.removed.includes(slotOf(origin)) ||
      (newest.get(slotOf(origin)) ?? 0) > incarnationOf(origin)
    )
      out.add(origin);
  closableCache.set(record, { stamp, origins: out });
  return out;
}

const closableCache = new WeakMap<RunRecord, { stamp: string; origins: Set<number> }>();
