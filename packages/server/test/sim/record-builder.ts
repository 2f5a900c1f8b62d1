import { canonicalJson, type JsonValue } from '@creek/app';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import type { Outcome, Req, SessionStamp } from '@creek/replica/core/types.js';
import { ReferenceInterpreter } from '../../src/sim/reference-interpreter.js';
import type {
  FinalReplicaState,
  Invocation,
  RecordedResponse,
  RunRecord,
} from '../../src/sim/run-record.js';
import { simApp } from '../../src/sim/workload.js';

/**
 * Hand-made run records for the checkers' own tests: a run of `replicas` replicas with nothing in
 * it, and helpers that add what a test needs. Op ids are written `r<replica>#<eventNo>` as
 * strings (`id('r1#2')`); timestamps default to the event number (ops of one origin in order).
 */
export function emptyRecord(replicas = 3): RunRecord {
  const ids = Array.from({ length: replicas }, (_, r) => r);
  return {
    replicas,
    reqs: new Map(),
    commits: ids.map(() => []),
    invocations: [],
    splits: [],
    holds: [],
    executing: [],
    finals: [],
    lost: [],
    deadOrigins: [],
    removed: [],
    retired: [],
    memberships: [{ at: 0, members: ids }],
    divergences: [],
    invariantReports: [],
    plantedCommittedAt: new Map(),
  };
}

export function id(text: string): OpId {
  const m = /^r(\d+)#(\d+)$/.exec(text);
  if (m === null) throw new Error(`not an op id: ${text}`);
  return { replica: Number(m[1]), eventNo: Number(m[2]) };
}

/** A Req in the record: weak unless `strong` (then its causal context holds `ctx`). */
export function addReq(
  record: RunRecord,
  text: string,
  op: string,
  args: JsonValue,
  opts: { strong?: boolean; ts?: number; ctx?: string[]; session?: SessionStamp } = {},
): Req {
  const opId = id(text);
  let causalCtx: DottedVersionVector | null = null;
  if (opts.strong === true) {
    causalCtx = new DottedVersionVector();
    for (const c of opts.ctx ?? []) causalCtx.add(id(c));
  }
  const req: Req = {
    ts: opts.ts ?? opId.eventNo,
    id: opId,
    op,
    args,
    strong: opts.strong === true,
    causalCtx,
    ...(opts.session === undefined ? {} : { session: opts.session }),
  };
  record.reqs.set(opKey(opId), req);
  return req;
}

/** A commit record of `replica`: the ids in it, the strong op that committed them last. */
export function commit(record: RunRecord, replica: number, ...texts: string[]): void {
  record.commits[replica]!.push(texts.map(id));
}

export const ok = (value: JsonValue): Outcome => ({ ok: true, value });

/** A client's invocation at `replica`, with its responses (`at`, level, outcome, trace). */
export function invoke(
  record: RunRecord,
  replica: number,
  op: string,
  args: JsonValue,
  opts: {
    strong?: boolean;
    at: number;
    id?: string;
    session?: SessionStamp;
    disk?: number;
    abandoned?: boolean;
    responses?: (Omit<RecordedResponse, 'trace'> & {
      trace?: { committedBefore: number; tentativeBefore: string[] };
    })[];
  },
): Invocation {
  const inv: Invocation = {
    replica,
    tag: record.invocations.length + 1,
    op,
    args,
    strong: opts.strong === true,
    invokedAt: opts.at,
    id: opts.id === undefined ? null : id(opts.id),
    responses: (opts.responses ?? []).map(({ trace, ...r }): RecordedResponse => ({
      ...r,
      ...(trace === undefined
        ? {}
        : {
            trace: {
              committedBefore: trace.committedBefore,
              tentativeBefore: trace.tentativeBefore.map(id),
            },
          }),
    })),
    abandoned: opts.abandoned === true,
    ...(opts.session === undefined ? {} : { session: opts.session }),
    ...(opts.disk === undefined ? {} : { disk: opts.disk }),
  };
  record.invocations.push(inv);
  return inv;
}

/**
 * Each replica's final state, as a replica that executed its committed list would hold it (the
 * reference interpreter's), nothing tentative; `edit` may change one before it is recorded.
 */
export function settle(
  record: RunRecord,
  edit: (replica: number, state: Record<string, JsonValue>) => void = () => undefined,
): void {
  for (let r = 0; r < record.replicas; r++) {
    const reference = new ReferenceInterpreter(simApp);
    for (const opId of record.commits[r]!.flat()) reference.apply(record.reqs.get(opKey(opId))!);
    const state = JSON.parse(reference.digest()) as Record<string, JsonValue>;
    edit(r, state);
    const final: FinalReplicaState = {
      digest: canonicalJson(state),
      hash: StateDigest.of(Object.entries(state)),
      tentative: 0,
      unvalidated: 0,
      stranded: [],
      unclosed: [],
    };
    record.finals.push(final);
  }
}
