import { ABANDON_OP, canonicalJson, type App, type JsonValue } from '@creek/app';
import { formatOpId, opKey, sameOpId, type OpId } from '@creek/replica/core/op-id.js';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { outcomesEqual, type Outcome, type SessionStamp } from '@creek/replica/core/types.js';
import {
  checkLinearizable,
  queueModel,
  registerModel,
  type HistoryOp,
  type Model,
} from './linearizability.js';
import { ReferenceInterpreter, type SerialOp } from './reference-interpreter.js';
import { clientHistory } from './session-checkers.js';
import {
  abandonAnswer,
  allCommitLists,
  committedList,
  committedListOn,
  liveReplicas,
  longestCommitted,
  type Invocation,
  type RecordedResponse,
  type RunRecord,
} from './run-record.js';
import { LINEARIZABLE_KEYS, LINEARIZABLE_QUEUE, ONCE_PREFIX } from './workload.js';

/**
 * The guarantees every simulated run must keep (DESIGN.md, "Guarantees, and how we know"). Each
 * checker returns the violations it found, as sentences that name the ops involved.
 */
export function checkRun(
  record: RunRecord,
  app: App,
  opts: {
    quiescent: boolean;
    speculative?: boolean;
    /** The longest a replica cut off into a minority may go on holding speculation (ms). */
    holdBoundMs?: number;
    /** How long a response may wait for the replica's disk (ms; default 10). */
    diskWaitMs?: number;
    /**
     * The planted nondeterministic op and its keys' prefix (sim/nondeterminism.ts): replicas'
     * states differ there by design, so the checkers that hold answers and states to a serial
     * execution leave them out (checkDivergence judges them).
     */
    planted?: Planted;
  },
): string[] {
  const planted = opts.planted ?? null;
  const checks: (() => string[])[] = [
    () => checkCommittedPrefixes(record),
    () => checkProgramOrder(record),
    () => checkStableResponses(record, app, planted),
    () => checkTentativeResponses(record, app, planted),
    () =>
      checkMinorityPartitions(
        record,
        opts.speculative ?? true,
        opts.holdBoundMs ?? Number.POSITIVE_INFINITY,
        opts.diskWaitMs,
      ),
    () => checkLinearizability(record, opts.quiescent),
  ];
  if (opts.quiescent) {
    checks.push(() => checkConvergence(record, app, opts.speculative ?? true, planted));
    checks.push(() => checkExactlyOnce(record));
  }
  return checks.flatMap((check) => {
    try {
      return check();
    } catch (err) {
      // E.g. a committed op whose Req exists nowhere: its origin lost it in a crash after sending it.
      return [`checker failed: ${(err as Error).message}`];
    }
  });
}

/**
 * The planted nondeterministic op (SimConfig.nondeterministic), and the prefixes of the keys its
 * effects reach: its own, and its sessions' records of its outcomes.
 */
export interface Planted {
  readonly op: string;
  readonly prefixes: readonly string[];
}

function isPlantedKey(key: unknown, planted: Planted): boolean {
  return typeof key === 'string' && planted.prefixes.some((p) => key.startsWith(p));
}

/** The invocation is the planted op, or reads or writes one of its keys. */
function touchesPlanted(inv: Invocation, planted: Planted | null): boolean {
  if (planted === null) return false;
  return (
    inv.op === planted.op || isPlantedKey((inv.args as { key?: unknown } | null)?.key, planted)
  );
}

/** A state as canonical JSON without the planted op's keys (none planted: as it is). */
function withoutPlanted(stateJson: string, planted: Planted | null): string {
  if (planted === null) return stateJson;
  const state = JSON.parse(stateJson) as Record<string, JsonValue>;
  return canonicalJson(
    Object.fromEntries(Object.entries(state).filter(([k]) => !isPlantedKey(k, planted))),
  );
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

/**
 * (a) The committed lists of all replicas are prefixes of one another: the lists on their disks.
 * What a replica committed in memory and lost in a crash is not held to it: a replica decides on
 * its own vote as it casts it (MultiPaxos, in place), before that vote is durable, and a crash
 * then loses the vote with all it led to, none of which left the replica (messages and responses
 * wait for durability). Paxos may then choose another value there, since that vote never counted.
 */
export function checkCommittedPrefixes(record: RunRecord): string[] {
  const lists = allCommitLists(record).map((l) => ({ whose: l.whose, list: l.commits.flat() }));
  const longest = lists.reduce<OpId[]>((a, b) => (b.list.length > a.length ? b.list : a), []);
  const out: string[] = [];
  for (const { whose, list } of lists) {
    const diverged = list.findIndex((id, i) => !sameOpId(id, longest[i]!));
    if (diverged >= 0) {
      out.push(
        `(a) ${whose} committed ${formatOpId(list[diverged]!)} at position ${diverged}, another replica ${formatOpId(longest[diverged]!)}`,
      );
      continue;
    }
    const seen = new Set<string>();
    for (const id of list) {
      if (seen.has(opKey(id))) out.push(`(a) ${whose} committed ${formatOpId(id)} twice`);
      seen.add(opKey(id));
    }
  }
  return out;
}

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
 * (d) Each replica's invocation order is kept in the committed order, and every weak op stabilized
 * by a strong op precedes it (is in its causal context, committed just before it).
 */
export function checkProgramOrder(record: RunRecord): string[] {
  const out: string[] = [];
  const list = longestCommitted(record);
  const lastOfOrigin = new Map<number, number>();
  for (const id of list) {
    const prev = lastOfOrigin.get(id.replica) ?? 0;
    if (id.eventNo <= prev) {
      out.push(
        `(d) ${formatOpId(id)} committed after r${id.replica}#${prev}, which its replica invoked later`,
      );
    }
    lastOfOrigin.set(id.replica, Math.max(prev, id.eventNo));
  }
  for (const { whose, commits: groups } of allCommitLists(record)) {
    for (const group of groups) {
      const strong = group[group.length - 1]!;
      const req = record.reqs.get(opKey(strong));
      if (req === undefined || !req.strong || req.causalCtx === null) {
        out.push(
          `(d) ${whose}: commit record ends with ${formatOpId(strong)}, which is not a strong op`,
        );
        continue;
      }
      for (const id of group.slice(0, -1)) {
        const w = record.reqs.get(opKey(id));
        if (w?.strong !== false)
          out.push(
            `(d) ${whose}: ${formatOpId(id)} stabilized with ${formatOpId(strong)} but is not a weak op`,
          );
        else if (!req.causalCtx.has(id))
          out.push(
            `(d) ${whose}: ${formatOpId(id)} stabilized by ${formatOpId(strong)} outside its causal context`,
          );
      }
    }
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
 * Availability in a minority partition: weak ops still get their tentative response, strong ops a
 * tentative one but no stable one until the partition heals (no majority, no consensus). Without
 * speculation (SMR) the other way round: an op answers only once committed, which a minority
 * cannot do, so no op invoked there may get any response before the heal (a weak read-only op
 * reads the committed state there, and may).
 *
 * A replica cut off in the middle of a catch-up holds speculation until it sees the catch-up has
 * stalled (ReplicaHost.holdSpeculationWhileBehind): an op it takes while it holds may go
 * unanswered until the heal, but the hold must end within `holdBoundMs` of the split.
 */
export function checkMinorityPartitions(
  record: RunRecord,
  speculative = true,
  holdBoundMs = Number.POSITIVE_INFINITY,
  diskWaitMs = 10,
): string[] {
  const out: string[] = [];
  // A response waits for the replica's disk; ops invoked just before a heal may answer after it.
  const margin = diskWaitMs;
  const heldDuring = (replica: number, from: number, to: number): boolean =>
    record.holds.some((h) => h.replica === replica && h.start < to && h.end > from);
  for (const split of record.splits) {
    // A minority of the configuration in force throughout the split; none is fixed while a
    // membership change is in progress, and such splits are left alone.
    const members = membersThroughout(record, split.start, split.end);
    if (members === null) continue;
    const majority = Math.floor(members.length / 2) + 1;
    for (const group of split.groups) {
      if (group.filter((r) => members.includes(r)).length >= majority) continue;
      if (speculative)
        for (const h of record.holds) {
          if (!group.includes(h.replica) || h.start >= split.end || h.end <= split.start) continue;
          const heldInto = Math.min(h.end, split.end) - split.start;
          if (heldInto > holdBoundMs)
            out.push(
              `(partition) replica ${h.replica} held speculation ${heldInto.toFixed(0)} ms into a minority partition (at most ${holdBoundMs.toFixed(0)}): its clients got no tentative answers`,
            );
        }
      for (const inv of record.invocations) {
        if (
          !group.includes(inv.replica) ||
          inv.invokedAt <= split.start ||
          inv.invokedAt >= split.end
        )
          continue;
        if (!speculative) {
          // (A weak read-only op is answered from the local committed state, off the list: no id.)
          if (inv.id !== null && inv.responses.some((r) => r.at < split.end))
            out.push(
              `(partition) ${describe(inv)} got a response from a replica that does not speculate while it was in a minority`,
            );
          continue;
        }
        if (inv.strong && inv.responses.some((r) => r.level === 'stable' && r.at < split.end)) {
          out.push(
            `(partition) ${describe(inv)} got a stable response while its replica was in a minority`,
          );
        }
        if (
          !inv.abandoned &&
          inv.invokedAt < split.end - margin &&
          !inv.responses.some((r) => r.at < split.end) &&
          !heldDuring(inv.replica, inv.invokedAt, split.end)
        ) {
          out.push(
            `(partition) ${describe(inv)} got no tentative response while its replica was in a minority`,
          );
        }
      }
    }
  }
  return out;
}

/** The members in force from `start` to `end` (RunRecord.memberships), or null if they changed. */
function membersThroughout(
  record: RunRecord,
  start: number,
  end: number,
): readonly number[] | null {
  let members: readonly number[] | null = null;
  for (const m of record.memberships) {
    if (m.at <= start) members = m.members;
    else if (m.at < end) return null;
  }
  return members;
}

const CHECKPOINT = 16;

function commonPrefix(a: readonly OpId[], b: readonly OpId[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && sameOpId(a[i]!, b[i]!)) i++;
  return i;
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

function serialOp(record: RunRecord, id: OpId): SerialOp {
  const req = record.reqs.get(opKey(id));
  if (req === undefined) throw new Error(`checker: no Req recorded for ${formatOpId(id)}`);
  return req;
}

function describe(inv: RunRecord['invocations'][number]): string {
  const id = inv.id === null ? 'read-only' : formatOpId(inv.id);
  return `${inv.strong ? 'strong' : 'weak'} ${inv.op}(${JSON.stringify(inv.args)}) ${id} at replica ${inv.replica}`;
}

function show(o: Outcome): string {
  return o.ok ? JSON.stringify(o.value) : `error "${o.error}"`;
}

function clip(s: string): string {
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}
