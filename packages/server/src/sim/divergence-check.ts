import { canonicalJson, jsonEqual, type JsonValue } from '@creek/app';
import { formatOpId, opKey } from '@creek/replica/core/op-id.js';
import type { DivergenceReport } from '@creek/replica/host/divergence.js';
import { PLANTED_OP, PLANTED_PREFIX, PLANTED_READS_AFTER_MS } from './nondeterminism.js';
import { committedList, liveReplicas, type RunRecord } from './run-record.js';

/**
 * How long after a planted op first committed, or after the faults ended if they were still on,
 * some replica must have caught the divergence it caused (simulated ms).
 */
export const DETECTION_BOUND_MS = 5000;

export interface DivergenceCheckOptions {
  /** The run had the planted nondeterministic op (SimConfig.nondeterministic). */
  readonly planted: boolean;
  readonly quiescent: boolean;
  /** The members of the configuration in force at the end. */
  readonly members: readonly number[];
  /** When the last fault was healed (0: the run had none). */
  readonly faultsEndAt: number;
  /** How long a response may wait for the replica's disk (ms). */
  readonly diskWaitMs: number;
}

/**
 * Replicas catch a nondeterministic op and serve no stable answers that contradict each other
 * (issue: detect divergence), from the replicas' final states and what they reported as they went:
 *
 * - a run without the planted op reports no divergence at all;
 * - where the planted op's effects differ between live replicas' final states, every live member
 *   knows of the divergence at the end, some replica caught it within DETECTION_BOUND_MS of the
 *   op's first commit (or of the faults' end), and every report names the planted op, at or
 *   before the first planted op whose effects differ (or says it could not name one);
 * - at the end, a replica whose state a majority of the members hold serves, and one whose state
 *   no possible majority shares does not;
 * - a replica sends no stable answer while it does not serve; and once the replicas had time to
 *   compare their states (after the faults), every stable read of a planted key is a value a
 *   majority of the members can hold.
 */
export function checkDivergence(record: RunRecord, o: DivergenceCheckOptions): string[] {
  if (!o.planted)
    return record.divergences
      .filter((d) => d.report !== null)
      .slice(0, 3)
      .map(
        (d) =>
          `(divergence) replica ${d.replica} reported a divergence at ${d.at.toFixed(1)} ms in a run whose ops are all deterministic: ${d.report!.reason}`,
      );
  const out: string[] = [];
  const states = finalStates(record);
  const live = liveReplicas(record).filter((r) => states.has(r));
  const order = committedList(record, live[0]!);
  const planted = order
    .map((id, i) => ({ id, position: i + 1, req: record.reqs.get(opKey(id)) }))
    .filter((x) => x.req?.op === PLANTED_OP)
    .map((x) => ({ ...x, key: (x.req!.args as { key: string }).key }));
  const differing = planted.filter(
    (p) => new Set(live.map((r) => JSON.stringify(states.get(r)![p.key] ?? null))).size > 1,
  );
  const last = lastReports(record);
  for (const d of record.divergences)
    if (d.report !== null && !namesPlanted(d.report))
      out.push(
        `(divergence) replica ${d.replica} at ${d.at.toFixed(1)} ms named ${d.report.op} (${d.report.id}) at position ${d.report.position}, which is deterministic`,
      );
  const first = differing[0];
  if (o.quiescent && first !== undefined) {
    for (const r of live)
      if (o.members.includes(r) && (last.get(r) ?? null) === null)
        out.push(
          `(divergence) ${PLANTED_OP} ${formatOpId(first.id)} left replica ${r}'s state unlike another's, and replica ${r} knows of no divergence at the end`,
        );
    const committedAt = record.plantedCommittedAt.get(opKey(first.id));
    const caught = record.divergences.find((d) => d.report !== null)?.at;
    if (committedAt !== undefined) {
      const due = Math.max(committedAt, o.faultsEndAt) + DETECTION_BOUND_MS;
      if (caught === undefined || caught > due)
        out.push(
          `(divergence) ${PLANTED_OP} ${formatOpId(first.id)} first committed at ${committedAt.toFixed(1)} ms, and no replica caught the divergence by ${due.toFixed(1)} ms (${caught === undefined ? 'none ever did' : `caught at ${caught.toFixed(1)} ms`})`,
        );
    }
  }
  if (o.quiescent) out.push(...checkSides(o, states, live, last));
  out.push(...checkStableAnswers(record, o, states, live));
  return out.slice(0, 10);
}

/** Each live replica's final state (FinalReplicaState.digest), by replica. */
function finalStates(record: RunRecord): Map<number, Record<string, JsonValue>> {
  const out = new Map<number, Record<string, JsonValue>>();
  record.finals.forEach((f, r) => out.set(r, JSON.parse(f.digest) as Record<string, JsonValue>));
  return out;
}

/** Each replica's last report (null: none, or over). */
function lastReports(record: RunRecord): Map<number, DivergenceReport | null> {
  const out = new Map<number, DivergenceReport | null>();
  for (const d of record.divergences) out.set(d.replica, d.report);
  return out;
}

/** A report names the planted op, or says it could not name the op. */
function namesPlanted(r: DivergenceReport): boolean {
  return r.op === PLANTED_OP || (r.op === null && !r.exact);
}

/**
 * Whether each live member serves at the end, against the members' final states: one whose state
 * a majority of the members hold serves, one whose state no possible majority shares (members not
 * live may hold anything) does not.
 */
function checkSides(
  o: DivergenceCheckOptions,
  states: Map<number, Record<string, JsonValue>>,
  live: readonly number[],
  last: Map<number, DivergenceReport | null>,
): string[] {
  const out: string[] = [];
  const majority = Math.floor(o.members.length / 2) + 1;
  const known = live.filter((r) => o.members.includes(r));
  const unknown = o.members.length - known.length;
  const text = (r: number): string => canonicalJson(states.get(r)!);
  for (const r of known) {
    const agreeing = known.filter((x) => text(x) === text(r)).length;
    const report = last.get(r) ?? null;
    const serves = report === null || report.servesStable;
    if (agreeing >= majority && !serves)
      out.push(
        `(divergence) replica ${r} serves no stable answer at the end, though ${agreeing} of ${o.members.length} members hold its state`,
      );
    if (agreeing + unknown < majority && serves)
      out.push(
        `(divergence) replica ${r} still serves at the end, though at most ${agreeing + unknown} of ${o.members.length} members can hold its state`,
      );
  }
  return out;
}

/**
 * No stable answer from a replica while it does not serve (beyond the disk wait of answers made
 * before it stopped), and every stable read of a planted key after the replica reported a
 * divergence is the majority's value.
 */
function checkStableAnswers(
  record: RunRecord,
  o: DivergenceCheckOptions,
  states: Map<number, Record<string, JsonValue>>,
  live: readonly number[],
): string[] {
  const out: string[] = [];
  const majority = Math.floor(o.members.length / 2) + 1;
  const known = live.filter((x) => o.members.includes(x));
  // Members not live at the end (lost for good) may have held any value.
  const unknown = o.members.length - known.length;
  /** The members that can hold `value` at `key`: a majority, or not. */
  const couldBeMajority = (key: string, value: JsonValue): boolean =>
    known.filter((r) => jsonEqual(states.get(r)![key] ?? null, value)).length + unknown >= majority;
  for (const inv of record.invocations) {
    const timeline = record.divergences.filter((d) => d.replica === inv.replica);
    if (timeline.length === 0) continue;
    for (const resp of inv.responses) {
      if (resp.level !== 'stable') continue;
      const before = timeline.filter((d) => d.at < resp.at);
      const now = before[before.length - 1];
      if (
        now?.report !== null &&
        now?.report !== undefined &&
        !now.report.servesStable &&
        resp.at > now.at + o.diskWaitMs
      )
        out.push(
          `(divergence) replica ${inv.replica} answered ${inv.op}(${JSON.stringify(inv.args)}) stably at ${resp.at.toFixed(1)} ms, while it served no stable answer (since ${now.at.toFixed(1)} ms)`,
        );
      const key = (inv.args as { key?: unknown } | null)?.key;
      // Reads made once the replicas had time to compare their states (schedulePlanted).
      if (
        inv.op !== 'kv.get' ||
        typeof key !== 'string' ||
        !key.startsWith(PLANTED_PREFIX) ||
        inv.invokedAt < o.faultsEndAt + PLANTED_READS_AFTER_MS ||
        !resp.outcome.ok
      )
        continue;
      if (!couldBeMajority(key, resp.outcome.value))
        out.push(
          `(divergence) replica ${inv.replica} read ${key} = ${JSON.stringify(resp.outcome.value)} stably at ${resp.at.toFixed(1)} ms, after it reported the divergence; no majority of the members holds that value (${known.map((r) => `replica ${r}: ${JSON.stringify(states.get(r)![key] ?? null)}`).join(', ')})`,
        );
    }
  }
  return out;
}

/** What the planted op did in a run (SimStats.divergence). */
export interface DivergenceStats {
  /** Planted ops committed, and those whose effects differ between live replicas at the end. */
  readonly planted: number;
  readonly differed: number;
  /**
   * From the first commit of the first planted op whose effects differ to the first report of a
   * divergence, in simulated ms (null: none differed, or none was reported).
   */
  readonly caughtAfterMs: number | null;
}

export function divergenceStats(record: RunRecord): DivergenceStats {
  const states = finalStates(record);
  const live = liveReplicas(record).filter((r) => states.has(r));
  const planted = committedList(record, live[0]!)
    .map((id) => ({ id, req: record.reqs.get(opKey(id)) }))
    .filter((x) => x.req?.op === PLANTED_OP);
  const differing = planted.filter((p) => {
    const key = (p.req!.args as { key: string }).key;
    return new Set(live.map((r) => JSON.stringify(states.get(r)![key] ?? null))).size > 1;
  });
  const committedAt =
    differing[0] === undefined ? undefined : record.plantedCommittedAt.get(opKey(differing[0].id));
  const caught = record.divergences.find((d) => d.report !== null)?.at;
  return {
    planted: planted.length,
    differed: differing.length,
    caughtAfterMs: committedAt === undefined || caught === undefined ? null : caught - committedAt,
  };
}
