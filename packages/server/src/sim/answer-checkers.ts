import type { App } from '@creek/app';
import { opKey, sameOpId, type OpId } from '@creek/replica/core/op-id.js';
import { outcomesEqual, type Outcome } from '@creek/replica/core/types.js';
import { describe, serialOp, show, touchesPlanted, type Planted } from './checked-ops.js';
import { ReferenceInterpreter, type SerialOp } from './reference-interpreter.js';
import { committedListOn, longestCommitted, type RunRecord } from './run-record.js';

/** (c) Every stable response equals the reference interpreter's result in the final committed order. */
export function checkStableResponses(
  record: RunRecord,
  app: App,
  planted: Planted | null = null,
): string[] {
  const out: string[] = [];
  const longest = longestCommitted(record);
  const expected = new Map<string, Outcome>();
  const reference = new ReferenceInterpreter(app);
  for (const id of longest) expected.set(opKey(id), reference.apply(serialOp(record, id)));
  const reads: { inv: RunRecord['invocations'][number]; position: number; outcome: Outcome }[] = [];
  for (const inv of record.invocations) {
    if (touchesPlanted(inv, planted)) continue;
    const stable = inv.responses.filter((r) => r.level === 'stable');
    if (stable.length > 1) out.push(`(c) ${describe(inv)} got ${stable.length} stable responses`);
    for (const s of stable) {
      if (inv.id === null) {
        // A read answered stably without being ordered: the read at its committed position.
        if (s.position !== undefined) reads.push({ inv, position: s.position, outcome: s.outcome });
        continue;
      }
      const want = expected.get(opKey(inv.id));
      if (want === undefined)
        out.push(`(c) ${describe(inv)} got a stable response but is not in the committed order`);
      else if (!outcomesEqual(want, s.outcome))
        out.push(
          `(c) ${describe(inv)} stable ${show(s.outcome)}, serial execution gives ${show(want)}`,
        );
    }
    if (inv.responses.some((r) => r.level === 'failed'))
      out.push(`(c) ${describe(inv)} was rejected: ${show(inv.responses[0]!.outcome)}`);
  }
  // Reads by read index, in committed position order: each equals the read on the serial
  // execution of that many ops of the committed order (the lists are prefixes of one another).
  reads.sort((a, b) => a.position - b.position);
  const prefix = new ReferenceInterpreter(app);
  let applied = 0;
  for (const r of reads) {
    if (r.position > longest.length) {
      out.push(
        `(c) ${describe(r.inv)} read the committed state at position ${r.position}, beyond the committed order's ${longest.length}`,
      );
      continue;
    }
    for (; applied < r.position; applied++) prefix.apply(serialOp(record, longest[applied]!));
    const want = prefix.apply({ op: r.inv.op, args: r.inv.args, ts: 0, id: null }, true);
    if (!outcomesEqual(want, r.outcome))
      out.push(
        `(c) ${describe(r.inv)} stable ${show(r.outcome)} at committed position ${r.position}, serial execution there gives ${show(want)}`,
      );
  }
  return out;
}

/**
 * (e) Every tentative response equals the op's result in a serial execution of the order the replica
 * had when it executed the op (its committed prefix then its tentative ops before it).
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
    const opOf = (id: OpId): SerialOp => lostReqs.get(opKey(id)) ?? serialOp(record, id);
    const checks = record.invocations
      .filter((inv) => inv.replica === r && (inv.disk ?? 0) === d && !touchesPlanted(inv, planted))
      .flatMap((inv) =>
        inv.responses.filter((resp) => resp.level === 'tentative').map((resp) => ({ inv, resp })),
      )
      .sort((a, b) => a.resp.trace!.committedBefore - b.resp.trace!.committedBefore);
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
      if (applied < trace.committedBefore || checkpoints.length === 0) {
        while (applied < trace.committedBefore) prefix.apply(opOf(committed[applied++]!));
        checkpoints = [{ len: 0, state: prefix.clone() }];
        cursorIds = [];
      }
      const ids = trace.tentativeBefore;
      const shared = commonPrefix(cursorIds, ids);
      while (checkpoints[checkpoints.length - 1]!.len > shared) checkpoints.pop();
      const from = checkpoints[checkpoints.length - 1]!;
      const cursor = from.state.clone();
      for (let k = from.len; k < ids.length; k++) {
        cursor.apply(opOf(ids[k]!));
        if ((k + 1) % CHECKPOINT === 0) checkpoints.push({ len: k + 1, state: cursor.clone() });
      }
      cursorIds = ids;
      const self: SerialOp =
        inv.id === null ? { op: inv.op, args: inv.args, ts: 0, id: null } : opOf(inv.id);
      const want = cursor.apply(self, true);
      if (!outcomesEqual(want, resp.outcome)) {
        out.push(
          `(e) ${describe(inv)} tentative ${show(resp.outcome)}, serial execution of its order gives ${show(want)}`,
        );
      }
    }
  }
  return out;
}

const CHECKPOINT = 16;

function commonPrefix(a: readonly OpId[], b: readonly OpId[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && sameOpId(a[i]!, b[i]!)) i++;
  return i;
}
