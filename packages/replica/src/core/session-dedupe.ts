import { toFrozenJson, type JsonValue, type User } from '@creek/app';
import type {
  FailedSessionOp,
  Outcome,
  SessionOpsHeld,
  SessionStamp,
  SnapshotReader,
  Write,
} from './types.js';

/**
 * Exactly-once across replicas for client sessions.
 *
 * A client whose replica dies resubmits its op elsewhere with the same session `seq`. The first
 * submission may still be applied (it was durable and gossiped before the crash), so the cluster
 * may hold two Reqs for one op. Both are ordered like any op; the decision is made in the state,
 * at each Req's position in the total order, so every replica makes the same one:
 *
 * - the first of them in the order runs the op and records its outcome under
 *   `~creek/session/<id>/<seq>`;
 * - a later one finds that record and answers with the recorded outcome, changing nothing else.
 *
 * Records are forgotten by the client's acknowledgements: each invoke carries `acked`, below which
 * every op of the session has its final answer at the client *and is committed*. An op carrying
 * `acked` is invoked after those ops were committed, so it follows all of them in the committed
 * order (a committed prefix only grows at its end), and it deletes their records
 * (`~creek/session/<id>` keeps the session's `acked`). A Req of the session with `seq < acked`
 * found later in the order is therefore a resubmission of an op that was applied: it is refused
 * without running. Memory is one small record per session plus one per op the client has not
 * acknowledged, not one per op ever run.
 *
 * Abandoning (the built-in `creek.abandon`, itself an op of the session): a client that does not
 * know whether op `seq` took effect may abandon it. At the abandon's position in the order, if the
 * op's record is there (it ran earlier in the order) the answer is that it was not abandoned, with
 * its outcome; otherwise the abandon writes the op's record itself, with the ABANDONED mark and an
 * error outcome, and every Req of the op later in the order finds it and does not run. Either way
 * every replica decides the same, at the same place; the record goes when the client acknowledges
 * past `seq`, after which a late copy is refused by `acked` like any resubmission.
 *
 * Reads of the session record are value-compared like any read, and `acked` does not depend on op
 * results, so re-executions of one op of a session do not cascade to its later ops.
 */
export const RESERVED_PREFIX = '~creek/';

/**
 * The session as the cluster keeps it: a session belongs to the user who invokes its ops. The
 * session id is the client's choice and travels in the clear, so another user naming it (in a
 * hello, or in a resubmission) must not reach its records: its ops would be answered with the
 * owner's results, or refused as duplicates. Keyed by user as well as by id, another user naming
 * the id gets a session of its own. An anonymous caller's session is its id alone, as before users
 * existed (session ids have no '@', so the two never meet).
 */
export function scopedSession(session: string, user: User | undefined): string {
  return user === undefined ? session : `${session}@${encodeURIComponent(user.id)}`;
}

const SESSION_PREFIX = `${RESERVED_PREFIX}session/`;

/** At most this many outcome records are deleted by one op (a bound on the work a client causes). */
const MAX_FORGET_PER_OP = 4096;

export function sessionKey(session: string): string {
  return `${SESSION_PREFIX}${session}`;
}

export function outcomeKey(session: string, seq: number): string {
  return `${SESSION_PREFIX}${session}/${seq}`;
}

export function reservedKeyError(key: string): string {
  return `keys starting with '${RESERVED_PREFIX}' are reserved for Creek: '${key}'`;
}

export function duplicateError(seq: number): string {
  return `creek: op ${seq} of this session was already applied and answered; this resubmission was not applied again`;
}

/** The op name a record holds for an op that was abandoned before it ran. */
export const ABANDONED = 'creek.abandoned';

export function abandonedError(seq: number): string {
  return `creek: op ${seq} of this session was abandoned before it took effect; it never will`;
}

export function abandonOrderError(target: number, seq: number): string {
  return `creek.abandon can only abandon an earlier op of its session: op ${target} does not come before this one (${seq})`;
}

export function reusedSeqError(seq: number, was: string): string {
  return `creek: op ${seq} of this session was '${was}'; a different op cannot reuse its number`;
}

/** What a session's ops have acknowledged, from the session record (0 when there is none). */
function ackedOf(record: JsonValue | undefined): number {
  if (typeof record === 'object' && record !== null && !Array.isArray(record)) {
    const acked = (record as { acked?: unknown }).acked;
    if (typeof acked === 'number') return acked;
  }
  return 0;
}

function recordedOutcome(record: JsonValue | undefined): { op: string; outcome: Outcome } | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return null;
  const r = record as { op?: unknown; outcome?: unknown };
  if (typeof r.op !== 'string' || typeof r.outcome !== 'object' || r.outcome === null) return null;
  return { op: r.op, outcome: r.outcome as Outcome };
}

/**
 * Runs `run` (the op itself) at most once per session op: the outcome of an op recorded earlier in
 * the order is returned instead, and an acknowledged op is refused. Returns the writes to install:
 * the op's own (if it ran) plus the session's bookkeeping.
 */
export function runOnce(
  stamp: SessionStamp,
  op: string,
  snapshot: SnapshotReader,
  run: () => { writes: readonly Write[]; outcome: Outcome },
): { writes: Write[]; outcome: Outcome } {
  const recordKey = sessionKey(stamp.id);
  const acked = ackedOf(snapshot.get(recordKey));
  if (stamp.seq < acked)
    return { writes: [], outcome: { ok: false, error: duplicateError(stamp.seq) } };
  const writes: Write[] = [];
  const key = outcomeKey(stamp.id, stamp.seq);
  const earlier = recordedOutcome(snapshot.get(key));
  let outcome: Outcome;
  if (earlier !== null) {
    outcome =
      earlier.op === op || earlier.op === ABANDONED
        ? earlier.outcome
        : { ok: false, error: reusedSeqError(stamp.seq, earlier.op) };
  } else {
    const result = run();
    outcome = result.outcome;
    writes.push(...result.writes);
    writes.push([key, toFrozenJson({ op, outcome } as unknown as JsonValue, 'session record')]);
  }
  // The op being run is not answered yet, so a correct client's `acked` is at most its `seq`.
  const nextAcked = Math.min(stamp.acked, stamp.seq);
  if (nextAcked > acked) {
    writes.push([recordKey, toFrozenJson({ acked: nextAcked }, 'session record')]);
    for (let s = Math.max(acked, 1, nextAcked - MAX_FORGET_PER_OP); s < nextAcked; s++)
      writes.push([outcomeKey(stamp.id, s), undefined]);
  }
  return { writes, outcome };
}

/**
 * The decision of `creek.abandon { seq: target }`, invoked as op `stamp.seq` of its session (run
 * inside `runOnce` for that stamp, so a resubmitted abandon decides once): see the header.
 */
export function abandon(
  stamp: SessionStamp,
  target: number,
  snapshot: SnapshotReader,
): { writes: Write[]; outcome: Outcome } {
  const ok = (value: JsonValue): Outcome => ({ ok: true, value: toFrozenJson(value, 'result') });
  if (target >= stamp.seq)
    return { writes: [], outcome: { ok: false, error: abandonOrderError(target, stamp.seq) } };
  // Acknowledged: the client had its answer and knew it committed. Nothing left to decide.
  if (target < ackedOf(snapshot.get(sessionKey(stamp.id))))
    return { writes: [], outcome: ok({ abandoned: false, outcome: null }) };
  const key = outcomeKey(stamp.id, target);
  const earlier = recordedOutcome(snapshot.get(key));
  if (earlier !== null)
    return {
      writes: [],
      outcome: ok(
        earlier.op === ABANDONED
          ? { abandoned: true }
          : { abandoned: false, outcome: earlier.outcome as unknown as JsonValue },
      ),
    };
  const record = { op: ABANDONED, outcome: { ok: false, error: abandonedError(target) } };
  return {
    writes: [[key, toFrozenJson(record as unknown as JsonValue, 'session record')]],
    outcome: ok({ abandoned: true }),
  };
}

/**
 * Which of session `session`'s ops the state `snapshot` reads holds (a live query's result says
 * so, for monotonic views at the client): every op numbered below the session's `acked` (they
 * precede, in the order, the op that carried it), and every op whose record is there. Above
 * `acked`, the numbers without a record are listed as missing (reads, which leave none, and ops
 * not decided there: a session's ops usually reach the order in their numbering, but an op one
 * replica refused may follow the next one, and an abandoned one is decided where its abandon is).
 * At most `maxListed` are listed as missing or failed: past that, `upTo` stops early.
 */
export function sessionOpsAt(
  snapshot: SnapshotReader,
  session: string,
  maxListed: number,
): SessionOpsHeld {
  const acked = Math.max(1, ackedOf(snapshot.get(sessionKey(session))));
  const prefix = `${sessionKey(session)}/`;
  const recorded = new Map<number, { op: string; outcome: Outcome }>();
  for (const [key, value] of snapshot.scan(prefix)) {
    const seq = Number(key.slice(prefix.length));
    const r = recordedOutcome(value);
    if (Number.isSafeInteger(seq) && seq >= acked && r !== null) recorded.set(seq, r);
  }
  // Scanned in key order, which is not numeric order.
  const seqs = [...recorded.keys()].sort((a, b) => a - b);
  let upTo = acked - 1;
  const missing: number[] = [];
  const failed: FailedSessionOp[] = [];
  for (const seq of seqs) {
    if (missing.length + (seq - upTo - 1) > maxListed || failed.length >= maxListed) break;
    for (let s = upTo + 1; s < seq; s++) missing.push(s);
    upTo = seq;
    const r = recorded.get(seq)!;
    if (!r.outcome.ok) failed.push({ seq, op: r.op, error: r.outcome.error });
  }
  return { upTo, missing, failed };
}
