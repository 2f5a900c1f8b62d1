import { ABANDON_OP, type App, type JsonValue } from '@creek/app';
import { formatOpId, opKey, type OpId } from '@creek/replica/core/op-id.js';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { clip, serialOp, withoutPlanted, type Planted } from './checked-ops.js';
import { ReferenceInterpreter } from './reference-interpreter.js';
import {
  abandonAnswer,
  committedList,
  liveReplicas,
  longestCommitted,
  type Invocation,
  type RunRecord,
} from './run-record.js';
import { ONCE_PREFIX } from './workload.js';

/**
 * (b) After heal and quiescence, all replicas (but those lost for good) hold the same committed
 * list, an empty tentative list and the same state, and that state is the reference interpreter's
 * for the committed order. Only the ops of a lost replica that follow one of its ops a replica
 * never received may stay tentative there (FinalReplicaState.stranded), executed if the replicas
 * speculate and not otherwise.
 */
export function checkConvergence(
  record: RunRecord,
  app: App,
  speculative = true,
  planted: Planted | null = null,
): string[] {
  const out: string[] = [];
  const live = liveReplicas(record);
  const lists = live.map((r) => committedList(record, r));
  const first = live[0]!;
  for (let i = 1; i < live.length; i++) {
    if (lists[i]!.length !== lists[0]!.length) {
      out.push(
        `(b) replica ${live[i]!} committed ${lists[i]!.length} ops, replica ${first} ${lists[0]!.length}`,
      );
    }
  }
  const reference = new ReferenceInterpreter(app);
  for (const id of lists[0]!) reference.apply(serialOp(record, id));
  for (const r of live) {
    const f = record.finals[r]!;
    if (f.tentative !== f.stranded.length)
      out.push(
        `(b) replica ${r} still has ${f.tentative - f.stranded.length} tentative ops after quiescence`,
      );
    // Every op of an origin the cluster knows is dead ends committed or definitely not applied
    // (core/closing-origins.ts): none stays tentative.
    if (f.unclosed.length > 0)
      out.push(
        `(b) replica ${r} still holds ${f.unclosed.length} ops of dead origins tentative (${f.unclosed.slice(0, 4).map(formatOpId).join(', ')}${f.unclosed.length > 4 ? ', …' : ''}): never closed`,
      );
    if (f.unvalidated !== 0)
      out.push(`(b) replica ${r} still has ${f.unvalidated} unvalidated executions`);
    // Its state: the committed order, then what is stranded there (all that is still tentative),
    // which a replica that does not speculate never executes.
    let state = reference;
    if (speculative && f.stranded.length > 0) {
      state = reference.clone();
      for (const id of f.stranded) state.apply(serialOp(record, id));
    }
    const expected = withoutPlanted(state.digest(), planted);
    if (withoutPlanted(f.digest, planted) !== expected)
      out.push(
        `(b) replica ${r} state ${clip(f.digest)} differs from the serial execution of the committed order ${clip(expected)}`,
      );
    // The digest /status shows is kept up to date key by key; it must be its state's.
    const hash = StateDigest.of(Object.entries(JSON.parse(f.digest) as Record<string, JsonValue>));
    if (f.hash !== hash)
      out.push(`(b) replica ${r} reports state digest ${f.hash}, but its state's is ${hash}`);
  }
  // Every op that was ordered anywhere must be committed in the end. A lost replica's ops that
  // reached no other replica are gone with it; those that reached one are on its list, committed
  // or tentative, and the checks above cover them.
  const committed = new Set(lists[0]!.map(opKey));
  for (const [key, req] of record.reqs) {
    if (!committed.has(key) && !record.deadOrigins.includes(req.id.replica))
      out.push(`(b) op ${key} was gossiped but never committed`);
  }
  return out;
}

/**
 * (f) Exactly once across replicas: every exactly-once probe (an increment of a key of its own,
 * possibly submitted at several replicas) that was committed in any submission ends at exactly 1
 * in every replica's final state: applied once, neither lost nor applied again.
 */
export function checkExactlyOnce(record: RunRecord): string[] {
  const out: string[] = [];
  const order = longestCommitted(record);
  const committed = new Set(order.map(opKey));
  const probes = new Set<string>();
  for (const [key, req] of record.reqs) {
    const k = (req.args as { key?: unknown } | null)?.key;
    if (req.op === 'kv.increment' && typeof k === 'string' && k.startsWith(ONCE_PREFIX))
      if (committed.has(key)) probes.add(k);
  }
  const answered = abandonedProbes(record);
  const abandonedFirst = abandonedInOrder(record, order);
  for (const r of liveReplicas(record)) {
    const state = JSON.parse(record.finals[r]!.digest) as Record<string, unknown>;
    for (const [k, v] of Object.entries(state))
      if (k.startsWith(ONCE_PREFIX) && (answered.has(k) || abandonedFirst.has(k)))
        out.push(
          `(f) replica ${r}: exactly-once probe ${k} = ${JSON.stringify(v)}, though its op was abandoned (${answered.get(k) ?? `an abandon committed before it`})`,
        );
      else if (k.startsWith(ONCE_PREFIX) && v !== 1)
        out.push(`(f) replica ${r}: exactly-once probe ${k} = ${JSON.stringify(v)}, not 1`);
    for (const k of probes)
      if (state[k] === undefined && !answered.has(k) && !abandonedFirst.has(k))
        out.push(`(f) replica ${r}: exactly-once probe ${k} was committed but never applied`);
  }
  return out;
}

/**
 * Exactly-once probes (keys `once/<session>/<seq>`) whose op a committed `creek.abandon` precedes
 * in the committed order, ahead of every committed copy of the op: never applied, whether or not
 * the abandon's answer reached its client (its replica may have crashed first).
 */
function abandonedInOrder(record: RunRecord, order: readonly OpId[]): Set<string> {
  const first = new Map<string, 'abandon' | 'op'>();
  for (const id of order) {
    const req = record.reqs.get(opKey(id));
    if (req?.session === undefined) continue;
    const target =
      req.op === ABANDON_OP
        ? `${req.session.id}/${(req.args as { seq: number }).seq}`
        : `${req.session.id}/${req.session.seq}`;
    if (!first.has(target)) first.set(target, req.op === ABANDON_OP ? 'abandon' : 'op');
  }
  const out = new Set<string>();
  for (const [target, what] of first) if (what === 'abandon') out.add(`${ONCE_PREFIX}${target}`);
  return out;
}

/**
 * Exactly-once probes whose op a `creek.abandon` was answered abandoned for, by key, with the
 * abandon's op id: such a probe must never be applied, whatever copies of it were committed.
 */
function abandonedProbes(record: RunRecord): Map<string, string> {
  const bySeq = new Map<string, Invocation>();
  for (const inv of record.invocations)
    if (inv.session !== undefined && inv.op !== ABANDON_OP)
      bySeq.set(`${inv.session.id}/${inv.session.seq}`, inv);
  const out = new Map<string, string>();
  for (const inv of record.invocations) {
    if (inv.op !== ABANDON_OP || inv.session === undefined || abandonAnswer(inv) !== true) continue;
    const target = bySeq.get(`${inv.session.id}/${(inv.args as { seq: number }).seq}`);
    const k = (target?.args as { key?: unknown } | null)?.key;
    if (typeof k === 'string' && k.startsWith(ONCE_PREFIX))
      out.set(k, inv.id === null ? 'no id' : formatOpId(inv.id));
  }
  return out;
}
