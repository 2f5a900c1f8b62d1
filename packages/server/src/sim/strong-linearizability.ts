import type { JsonValue } from '@creek/app';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { SessionStamp } from '@creek/replica/core/types.js';
import { describe } from './checked-ops.js';
import {
  checkLinearizable,
  queueModel,
  registerModel,
  type HistoryOp,
  type Model,
} from './linearizability.js';
import {
  longestCommitted,
  type Invocation,
  type RecordedResponse,
  type RunRecord,
} from './run-record.js';
import { clientHistory } from './session-checkers.js';
import { LINEARIZABLE_KEYS, LINEARIZABLE_QUEUE } from './workload.js';

/**
 * Strong ops are linearizable (Creek §4.3, Theorem 1): the objects only strong ops touch must have
 * histories (invocation time, stable response time and value, from the clients' side) that some
 * legal sequential order explains. Ops whose stable response never came may or may not have
 * taken effect.
 */
export function checkLinearizability(record: RunRecord, quiescent = false): string[] {
  const out: string[] = [];
  type Op = { readonly op: string; readonly args: JsonValue };
  const objects: { name: string; model: Model<unknown>; ops: (inv: Op) => boolean }[] = [
    ...LINEARIZABLE_KEYS.map((key) => ({
      name: `key ${key}`,
      model: registerModel as Model<unknown>,
      ops: (inv: Op) => inv.op.startsWith('kv.') && (inv.args as { key?: string }).key === key,
    })),
    {
      name: `queue ${LINEARIZABLE_QUEUE}`,
      model: queueModel as Model<unknown>,
      ops: (inv: Op) =>
        inv.op.startsWith('queue.') &&
        (inv.args as { queue?: string }).queue === LINEARIZABLE_QUEUE,
    },
  ];
  const fates = record.clientOps === undefined ? new OpFates(record, quiescent) : null;
  for (const object of objects) {
    // Client sessions ('sdk') resubmit ops as copies of one op: their history is the callers'.
    const history: HistoryOp[] =
      record.clientOps !== undefined
        ? clientHistory(record, object.ops, quiescent)
        : modelHistory(record, object.ops, fates!);
    const result = checkLinearizable(history, object.model);
    if (!result.ok)
      out.push(`(linearizability) ${object.name}, ${history.length} ops: ${result.reason}`);
  }
  return out;
}

/** The history of one object as the model's clients saw it: each invocation an op of its own. */
function modelHistory(
  record: RunRecord,
  onObject: (inv: Invocation) => boolean,
  fates: OpFates,
): HistoryOp[] {
  return record.invocations
    .filter(
      (inv) => inv.strong && onObject(inv) && inv.responses.every((r) => r.level !== 'failed'),
    )
    .map((inv) => {
      const stable = inv.responses.find((r) => r.level === 'stable');
      const at = fates.position(inv, stable);
      const tookEffect = stable === undefined ? fates.tookEffect(inv, at) : undefined;
      return {
        id: describe(inv),
        op: inv.op,
        args: inv.args,
        invokedAt: inv.invokedAt,
        completed: stable === undefined ? null : { at: stable.at, outcome: stable.outcome },
        ...(tookEffect === undefined ? {} : { tookEffect }),
        ...(at === undefined ? {} : { order: at }),
      };
    });
}

/**
 * What the run's final committed order says of a strong op on a linearizable object, for the
 * linearizability checker (HistoryOp.tookEffect and .order). The checker stays a black-box check
 * of the clients' history: the committed order only settles ops whose response never came (one in
 * it took effect, one not in it did not: no stable response reflects an op that is not committed)
 * and says which order to try first. Ops on these objects are never resubmitted (a submission is an
 * op of its own), so an op's Req is found by its session stamp too when no response named its id.
 */
class OpFates {
  private readonly at = new Map<string, number>();
  private readonly bySession = new Map<string, OpId | null>();

  /** `settled`: the run ended quiescent, so an op not committed by now never will be. */
  constructor(
    private readonly record: RunRecord,
    private readonly settled: boolean,
  ) {
    longestCommitted(record).forEach((id, i) => this.at.set(opKey(id), i));
    for (const req of record.reqs.values()) {
      if (req.session === undefined) continue;
      const k = `${req.id.replica} ${req.session.id} ${req.session.seq}`;
      // Two Reqs with one stamp (an id used again after a lost disk): neither is trusted.
      this.bySession.set(k, this.bySession.has(k) ? null : req.id);
    }
  }

  /**
   * The op's place in the committed order: its index, or for a read answered by read index
   * (Response.position) just before the op at that position; undefined when not committed.
   */
  position(inv: Invocation, stable: RecordedResponse | undefined): number | undefined {
    if (inv.id === null && stable?.position !== undefined) return stable.position - 0.5;
    const id = inv.id ?? this.idBySession(inv);
    if (id === null) return undefined;
    // The Req committed under this id must be this op (ids of a lost disk may be used again).
    const req = this.record.reqs.get(opKey(id));
    if (req === undefined || req.op !== inv.op || !sameStamp(req.session, inv.session))
      return undefined;
    return this.at.get(opKey(id));
  }

  /**
   * Whether an op without a response took effect (`at`: its position()): yes when committed; no
   * when its Req is known and not committed at the end of a settled run; otherwise unknown.
   */
  tookEffect(inv: Invocation, at: number | undefined): boolean | undefined {
    if (at !== undefined) return true;
    if (!this.settled) return undefined;
    const id = inv.id ?? this.idBySession(inv);
    if (id === null) {
      // No Req with its stamp: never cast, unless a lost disk of its replica took the Req along.
      if (inv.session === undefined || this.record.retired.some((r) => r.replica === inv.replica))
        return undefined;
      return this.anyReq(inv) ? undefined : false;
    }
    const req = this.record.reqs.get(opKey(id));
    return req !== undefined && req.op === inv.op && sameStamp(req.session, inv.session)
      ? false
      : undefined;
  }

  /** Whether any Req has this op's replica and session stamp (once or more). */
  private anyReq(inv: Invocation): boolean {
    return this.bySession.has(`${inv.replica} ${inv.session!.id} ${inv.session!.seq}`);
  }

  private idBySession(inv: Invocation): OpId | null {
    if (inv.session === undefined) return null;
    return this.bySession.get(`${inv.replica} ${inv.session.id} ${inv.session.seq}`) ?? null;
  }
}

function sameStamp(a: SessionStamp | undefined, b: SessionStamp | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.id === b.id && a.seq === b.seq;
}
