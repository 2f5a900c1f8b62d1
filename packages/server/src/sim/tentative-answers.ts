import type { App } from '@creek/app';
import { formatOpId, opKey, sameOpId, type OpId } from '@creek/replica/core/op-id.js';
import { outcomesEqual, type Req } from '@creek/replica/core/types.js';
import { describe, serialOp, show, touchesPlanted, type Planted } from './checked-ops.js';
import { ReferenceInterpreter, type SerialOp } from './reference-interpreter.js';
import {
  committedListOn,
  type Invocation,
  type RecordedResponse,
  type RunRecord,
} from './run-record.js';

/**
 * (e) Every tentative answer equals the reference interpreter's result for the op on the order the
 * checker reconstructs for it: the replica's committed list (as its disk has it) up to where the
 * replica was, then its tentative ops in the order Creek puts them, by (timestamp, origin, event
 * number) (core/entry.ts `precedes`), up to the op. Which tentative ops the replica had is what
 * the answer's trace says (nothing else records what a replica had received), but not their
 * order: the trace must list them in that order, each before the op, none of them committed
 * already, and with every op of the replica's own that it had answered before this op was
 * invoked (it holds its own ops until they commit).
 */
export function checkTentativeResponses(
  record: RunRecord,
  app: App,
  planted: Planted | null = null,
): string[] {
  const out: string[] = [];
  // Each replica's disks, lost ones included: responses are checked against the list they saw.
  const disks = Array.from({ length: record.replicas }, (_, r) =>
    Array.from({ length: 1 + record.retired.filter((x) => x.replica === r).length }, (_, d) => ({
      r,
      d,
    })),
  ).flat();
  for (const { r, d } of disks) {
    const { committed, lostReqs } = committedListOn(record, r, d);
    const reqOf = (id: OpId): Req | undefined =>
      lostReqs.get(opKey(id)) ?? record.reqs.get(opKey(id));
    const onDisk = record.invocations.filter((inv) => inv.replica === r && (inv.disk ?? 0) === d);
    const position = new Map<string, number>();
    committed.forEach((id, i) => position.set(opKey(id), i));
    const own = new OwnOps(onDisk, position);
    const checks = onDisk
      .filter((inv) => !touchesPlanted(inv, planted))
      .flatMap((inv) =>
        inv.responses.filter((resp) => resp.level === 'tentative').map((resp) => ({ inv, resp })),
      )
      .sort((a, b) => (a.resp.trace?.committedBefore ?? 0) - (b.resp.trace?.committedBefore ?? 0));
    // Walk the committed list once. Within one committed prefix, successive responses saw
    // tentative lists that mostly share a prefix with the previous one: states are kept every
    // CHECKPOINT positions along the last list, and a new list resumes from the last checkpoint
    // inside the shared prefix. Each op itself is evaluated as a dry run.
    const prefix = new ReferenceInterpreter(app);
    let applied = 0;
    let checkpoints: { len: number; state: ReferenceInterpreter }[] = [];
    let cursorIds: readonly OpId[] = [];
    for (const { inv, resp } of checks) {
      const trace = resp.trace;
      if (trace === undefined) {
        out.push(`(e) ${describe(inv)}: tentative response without an order trace`);
        continue;
      }
      if (trace.committedBefore > committed.length) {
        out.push(
          `(e) ${describe(inv)}: executed after ${trace.committedBefore} commits, replica has ${committed.length}`,
        );
        continue;
      }
      const order = reconstruct(inv, resp, position, reqOf, own);
      if (typeof order === 'string') {
        out.push(`(e) ${describe(inv)}${order}`);
        continue;
      }
      if (applied < trace.committedBefore || checkpoints.length === 0) {
        while (applied < trace.committedBefore)
          prefix.apply(opOf(record, lostReqs, committed[applied++]!));
        checkpoints = [{ len: 0, state: prefix.clone() }];
        cursorIds = [];
      }
      const ids = order.map((x) => x.id);
      const shared = commonPrefix(cursorIds, ids);
      while (checkpoints[checkpoints.length - 1]!.len > shared) checkpoints.pop();
      const from = checkpoints[checkpoints.length - 1]!;
      const cursor = from.state.clone();
      for (let k = from.len; k < order.length; k++) {
        cursor.apply(order[k]!);
        if ((k + 1) % CHECKPOINT === 0) checkpoints.push({ len: k + 1, state: cursor.clone() });
      }
      cursorIds = ids;
      const self: SerialOp =
        inv.id === null ? { op: inv.op, args: inv.args, ts: 0, id: null } : reqOf(inv.id)!;
      const want = cursor.apply(self, true);
      if (!outcomesEqual(want, resp.outcome))
        out.push(
          `(e) ${describe(inv)} tentative ${show(resp.outcome)}, serial execution of its order gives ${show(want)}`,
        );
    }
  }
  return out;
}

/**
 * The tentative ops before `inv` as the checker orders them (its Reqs, by `precedes`), or what is
 * wrong with the order the answer's trace reports.
 */
function reconstruct(
  inv: Invocation,
  resp: RecordedResponse,
  position: ReadonlyMap<string, number>,
  reqOf: (id: OpId) => Req | undefined,
  own: OwnOps,
): Req[] | string {
  const trace = resp.trace!;
  const self = inv.id === null ? null : reqOf(inv.id);
  if (self === undefined) return `: the run has no Req of ${formatOpId(inv.id!)}`;
  const reqs: Req[] = [];
  const listed = new Set<string>();
  for (const id of trace.tentativeBefore) {
    const key = opKey(id);
    const req = reqOf(id);
    if (req === undefined)
      return `: its order holds ${formatOpId(id)}, of which the run has no Req`;
    if (listed.has(key)) return `: its order holds ${formatOpId(id)} twice`;
    if ((position.get(key) ?? Number.POSITIVE_INFINITY) < trace.committedBefore)
      return `: its order holds ${formatOpId(id)} as tentative, which its replica had committed`;
    if (self !== null && !precedes(req, self))
      return `: executed after ${formatOpId(id)}, which its timestamp puts after it`;
    const last = reqs[reqs.length - 1];
    if (last !== undefined && !precedes(last, req))
      return `: its tentative order has ${formatOpId(last.id)} before ${formatOpId(id)}, which their timestamps put the other way`;
    listed.add(key);
    reqs.push(req);
  }
  const missing = own.missing(inv, self, trace.committedBefore, listed, reqOf);
  if (missing !== null)
    return `: executed on an order without ${describe(missing)}, which its replica had answered before this op was invoked`;
  return reqs;
}

/**
 * The ops a replica invoked on one disk, in invocation order (event numbers), with where each is
 * in that disk's committed list (`position`, by op key): own ops commit in that order (checker (d)), so those not yet
 * committed at a point are a run of them.
 */
class OwnOps {
  private readonly ops: { inv: Invocation; id: OpId; at: number; answeredAt: number }[];

  constructor(invocations: readonly Invocation[], position: ReadonlyMap<string, number>) {
    this.ops = invocations
      .filter((inv) => inv.id !== null && inv.responses.length > 0)
      .map((inv) => ({
        inv,
        id: inv.id!,
        at: position.get(opKey(inv.id!)) ?? Number.POSITIVE_INFINITY,
        answeredAt: inv.responses[0]!.at,
      }))
      .sort((a, b) => a.id.replica - b.id.replica || a.id.eventNo - b.id.eventNo);
  }

  /**
   * An op of the replica's own, answered before `inv` was invoked and not committed among the
   * first `committedBefore`, that comes before `self` (any, for a read) but is not `listed`.
   */
  missing(
    inv: Invocation,
    self: Req | null,
    committedBefore: number,
    listed: ReadonlySet<string>,
    reqOf: (id: OpId) => Req | undefined,
  ): Invocation | null {
    // The first op not committed there (positions grow with event numbers when (d) holds).
    let lo = 0;
    let hi = this.ops.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ops[mid]!.at < committedBefore) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < this.ops.length; k++) {
      const o = this.ops[k]!;
      if (o.inv.invokedAt >= inv.invokedAt) break;
      if (o.answeredAt >= inv.invokedAt || o.at < committedBefore || listed.has(opKey(o.id)))
        continue;
      if (self !== null && sameOpId(o.id, self.id)) continue;
      const req = reqOf(o.id);
      if (req !== undefined && (self === null || precedes(req, self))) return o.inv;
    }
    return null;
  }
}

/** Creek's tentative order (core/entry.ts `precedes`): by timestamp, then origin and event number. */
function precedes(a: Req, b: Req): boolean {
  if (a.ts !== b.ts) return a.ts < b.ts;
  if (a.id.replica !== b.id.replica) return a.id.replica < b.id.replica;
  return a.id.eventNo < b.id.eventNo;
}

function opOf(record: RunRecord, lostReqs: ReadonlyMap<string, Req>, id: OpId): SerialOp {
  return lostReqs.get(opKey(id)) ?? serialOp(record, id);
}

const CHECKPOINT = 16;

function commonPrefix(a: readonly OpId[], b: readonly OpId[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && sameOpId(a[i]!, b[i]!)) i++;
  return i;
}
