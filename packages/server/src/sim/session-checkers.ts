import { ABANDON_OP, canonicalJson, type App } from '@creek/app';
import { formatOpId, opKey, type OpId } from '@creek/replica/core/op-id.js';
import { outcomesEqual, type Outcome } from '@creek/replica/core/types.js';
import { ReferenceInterpreter } from './reference-interpreter.js';
import {
  committedListOn,
  liveReplicas,
  longestCommitted,
  type ClientOpRecord,
  type Invocation,
  type RunRecord,
} from './run-record.js';
import { finalStates, readOnFinal, SIM_WATCHES } from './watches.js';

/** A session's live queries as its caller saw them: by name, the last result at each level. */
export type SessionWatchViews = Map<string, { tentative?: Outcome; stable?: Outcome }>;

/** A session op's key (its session and number): every copy of the op carries it. */
export function stampKey(session: string, seq: number): string {
  return `${session}/${seq}`;
}

/**
 * Where the copies of each session op are in the run's final committed order: a session op may
 * have several (a resubmission at another replica is a Req of its own), and only the first one
 * in the order takes effect, unless a `creek.abandon` of it comes before (core/session-dedupe.ts).
 */
export class Copies {
  private readonly first = new Map<string, { readonly at: number; readonly id: OpId }>();
  private readonly abandonedAt = new Map<string, number>();
  readonly order: OpId[];

  constructor(record: RunRecord) {
    this.order = longestCommitted(record);
    this.order.forEach((id, at) => {
      const req = record.reqs.get(opKey(id));
      if (req?.session === undefined) return;
      const key = stampKey(req.session.id, req.session.seq);
      if (!this.first.has(key)) this.first.set(key, { at, id });
      if (req.op !== ABANDON_OP) return;
      const target = stampKey(req.session.id, (req.args as { seq: number }).seq);
      if (!this.abandonedAt.has(target)) this.abandonedAt.set(target, at);
    });
  }

  /** The first copy of the op in the committed order, whether or not it took effect. */
  committed(key: string): { readonly at: number; readonly id: OpId } | undefined {
    return this.first.get(key);
  }

  /**
   * Where the op is decided in the committed order: its first copy, or an abandon of it before
   * that (either writes the op's session record); undefined when neither is committed.
   */
  decidedAt(key: string): number | undefined {
    const c = this.first.get(key)?.at;
    const abandoned = this.abandonedAt.get(key);
    if (c === undefined || abandoned === undefined) return c ?? abandoned;
    return Math.min(c, abandoned);
  }

  /** An abandon of the op is committed before any copy of it: the op never takes effect. */
  abandonedFirst(key: string): boolean {
    const abandoned = this.abandonedAt.get(key);
    const c = this.first.get(key)?.at;
    return abandoned !== undefined && (c === undefined || abandoned < c);
  }

  /** The copy that took effect: the first one, unless an abandon of the op came before it. */
  effective(key: string): { readonly at: number; readonly id: OpId } | undefined {
    const c = this.first.get(key);
    if (c === undefined) return undefined;
    const abandoned = this.abandonedAt.get(key);
    return abandoned !== undefined && abandoned < c.at ? undefined : c;
  }
}

/** A session op as a violation names it. */
export function describeClientOp(r: ClientOpRecord): string {
  return `${r.strong ? 'strong' : 'weak'} ${r.op}(${JSON.stringify(r.args)}) of session ${r.session} (#${r.seq})`;
}

function show(o: Outcome): string {
  return o.ok ? JSON.stringify(o.value) : `error "${o.error}"`;
}

/** What the caller of a strong op got as its final, stable answer; null if it got none. */
export function stableAnswer(
  r: ClientOpRecord,
): { readonly at: number; readonly outcome: Outcome } | null {
  if (!r.strong) return null;
  const v = r.views.find((x) => x.final);
  if (v !== undefined)
    return v.level === 'strong' ? { at: v.at, outcome: { ok: true, value: v.value } } : null;
  if (r.error?.code === 'operation-failed')
    return { at: r.error.at, outcome: { ok: false, error: r.error.message } };
  return null;
}

/** Errors no caller should get from a healthy cluster (the others say it was unreachable, or the op threw). */
const NEVER = ['protocol', 'invalid-arguments', 'unauthorized', 'closed', 'unknown-op'];

/** The caller got an error no healthy cluster gives (checkSessions reports it). */
export function unhealthyError(r: ClientOpRecord): boolean {
  return r.error !== null && NEVER.includes(r.error.code);
}

/**
 * What the clients of an 'sdk' run were told, against what the cluster did (RunRecord.clientOps):
 * - an op the session reported committed has a copy in the committed order; one it reported
 *   abandoned, or never to take effect, has none that took effect; a fate it reported committed
 *   has one;
 * - a strong op's stable answer is the reference interpreter's for the copy that took effect (the
 *   others answer as it did);
 * - read-your-writes across failovers: an op a session sent after its caller had an answer to an
 *   earlier update of the session executes on an order that holds a copy of that update;
 * - no caller gets an error a healthy cluster never gives (a protocol error, refused arguments).
 */
export function checkSessions(record: RunRecord, app: App, quiescent: boolean): string[] {
  const ops = record.clientOps;
  if (ops === undefined) return [];
  const out: string[] = [];
  const copies = new Copies(record);
  const readOnly = (op: string): boolean => app.lookup(op)?.readOnly === true;
  const reference = new ReferenceInterpreter(app);
  const outcomes = new Map<string, Outcome>();
  for (const id of copies.order) {
    const req = record.reqs.get(opKey(id));
    if (req === undefined) break; // its Req went with a lost disk: nothing to replay from here
    outcomes.set(opKey(id), reference.apply(req));
  }
  for (const r of ops) {
    const key = stampKey(r.session, r.seq);
    const effective = copies.effective(key);
    if (r.error !== null && NEVER.includes(r.error.code))
      out.push(
        `(sessions) ${describeClientOp(r)}: its caller got ${r.error.code}: ${r.error.message}`,
      );
    if (!readOnly(r.op) && r.committedAt !== null && copies.committed(key) === undefined)
      out.push(
        `(sessions) ${describeClientOp(r)}: reported committed at ${r.committedAt.toFixed(1)} ms, but no copy of it is in the committed order`,
      );
    if ((r.neverCommitted || r.fate?.fate === 'abandoned') && effective !== undefined)
      out.push(
        `(sessions) ${describeClientOp(r)}: its session said it never takes effect${r.fate?.fate === 'abandoned' ? ' (abandoned)' : ''}, but ${formatOpId(effective.id)} took effect at committed position ${effective.at}`,
      );
    if (quiescent && !readOnly(r.op) && r.fate?.fate === 'committed' && effective === undefined)
      out.push(
        `(sessions) ${describeClientOp(r)}: its fate was committed, but no copy of it took effect`,
      );
    const stable = stableAnswer(r);
    const first = copies.committed(key);
    if (stable !== null && first !== undefined && !readOnly(r.op)) {
      const want = outcomes.get(opKey(first.id));
      if (want !== undefined && !outcomesEqual(want, stable.outcome))
        out.push(
          `(sessions) ${describeClientOp(r)}: stable ${show(stable.outcome)}, serial execution of the committed order gives ${show(want)} (${formatOpId(first.id)})`,
        );
    }
  }
  out.push(...checkReadYourWrites(record, app));
  return out;
}

/**
 * Read-your-writes across replicas: every op of a session that a replica executed tentatively
 * was executed on an order that held a copy of the last update of the session whose caller had
 * an answer when the op was sent. (A session moving to another replica is welcomed only once that
 * replica has what the session saw, and resubmits its own ops that are not known committed
 * before anything new.)
 */
function checkReadYourWrites(record: RunRecord, app: App): string[] {
  const out: string[] = [];
  const bySession = answeredUpdates(record, app);
  const holds = new OrderHolds(record);
  for (const inv of record.invocations) {
    if (inv.session === undefined || inv.sentAt === undefined) continue;
    const answered = bySession.get(inv.session.id);
    if (answered === undefined) continue;
    // The last update of the session before this op, answered when this copy of it was sent.
    const last = lastAnswered(answered, inv.sentAt, inv.session.seq);
    if (last === undefined) continue;
    if (holds.held(inv, last) === false)
      out.push(
        `(sessions) read-your-writes: ${inv.strong ? 'strong' : 'weak'} ${inv.op}(${JSON.stringify(inv.args)}) of session ${inv.session.id} (#${inv.session.seq}) ran at replica ${inv.replica} on an order without ${describeClientOp(last)}, answered to its caller at ${last.views[0]!.at.toFixed(1)} ms, before the op was sent at ${inv.sentAt.toFixed(1)} ms`,
      );
  }
  return out;
}

/**
 * Per session, its updates whose callers got an answer (read-only ops, and ops abandoned or never
 * to be ordered, left out), in the order they were invoked.
 */
export function answeredUpdates(record: RunRecord, app: App): Map<string, ClientOpRecord[]> {
  const bySession = new Map<string, ClientOpRecord[]>();
  for (const r of record.clientOps ?? []) {
    if (app.lookup(r.op)?.readOnly === true || r.abandonAsked || r.neverCommitted) continue;
    if (r.views.length === 0) continue;
    let list = bySession.get(r.session);
    if (list === undefined) bySession.set(r.session, (list = []));
    list.push(r);
  }
  return bySession;
}

/** The last of `answered` (numbered below `belowSeq`) whose first answer came before `at`. */
export function lastAnswered(
  answered: readonly ClientOpRecord[],
  at: number,
  belowSeq = Number.POSITIVE_INFINITY,
): ClientOpRecord | undefined {
  let last: ClientOpRecord | undefined;
  for (const r of answered)
    if (r.seq < belowSeq && r.views[0]!.at < at && (last?.seq ?? 0) < r.seq) last = r;
  return last;
}

/**
 * Whether the order an invocation executed on held a copy of a session op: one of the ops executed
 * tentatively before it, or committed below its position on that replica's disk (a resubmission
 * at another replica is a copy too, and so are copies lost with a disk: the answers given on that
 * disk saw them).
 */
export class OrderHolds {
  private readonly copiesOf = new Map<string, string[]>();
  private readonly positions = new Map<string, Map<string, number>>();

  constructor(private readonly record: RunRecord) {
    const reqs = [record.reqs, ...record.retired.map((r) => r.lostReqs)];
    for (const [key, req] of reqs.flatMap((m) => [...m])) {
      if (req.session === undefined) continue;
      const k = stampKey(req.session.id, req.session.seq);
      const list = this.copiesOf.get(k);
      if (list === undefined) this.copiesOf.set(k, [key]);
      else if (!list.includes(key)) list.push(key);
    }
  }

  /** Whether `inv` ran on an order holding a copy of `op`; null when it was not traced. */
  held(inv: Invocation, op: ClientOpRecord): boolean | null {
    const trace = inv.responses.find((x) => x.level === 'tentative')?.trace;
    if (trace === undefined) return null;
    const keys = this.copiesOf.get(stampKey(op.session, op.seq)) ?? [];
    const before = new Set(trace.tentativeBefore.map(opKey));
    return keys.some((k) => {
      if (before.has(k)) return true;
      const at = this.positionOn(inv, k);
      return at !== undefined && at < trace.committedBefore;
    });
  }

  private positionOn(inv: Invocation, key: string): number | undefined {
    const disk = `${inv.replica}/${inv.disk ?? 0}`;
    let at = this.positions.get(disk);
    if (at === undefined) {
      at = new Map();
      const { committed } = committedListOn(this.record, inv.replica, inv.disk ?? 0);
      committed.forEach((id, i) => at!.set(opKey(id), i));
      this.positions.set(disk, at);
    }
    return at.get(key);
  }
}

/**
 * Live queries at the end of a quiescent 'sdk' run: each session's last tentative result of every
 * live query equals the read on the final state of the replica it is connected to, and its last
 * stable result the read on that replica's final committed state (finalStates).
 */
export function checkSessionWatches(
  record: RunRecord,
  app: App,
  sessions: readonly {
    readonly session: string;
    readonly replica: number | null;
    readonly watched: SessionWatchViews;
  }[],
): string[] {
  const out: string[] = [];
  const live = liveReplicas(record);
  for (const s of sessions) {
    if (s.replica === null || !live.includes(s.replica)) continue;
    const states = finalStates(record, app, s.replica);
    for (const [name, op, args] of SIM_WATCHES) {
      const last = s.watched.get(name);
      for (const level of ['tentative', 'stable'] as const) {
        const expected = readOnFinal(states[level], op, args);
        const got = last?.[level];
        if (got === undefined || !got.ok || canonicalJson(got.value) !== canonicalJson(expected))
          out.push(
            `live query: session ${s.session}'s ${op} ${JSON.stringify(args)} last showed ${got === undefined ? 'nothing' : JSON.stringify(got)} at ${level}, but replica ${s.replica} reads ${JSON.stringify(expected)} on the final ${level === 'stable' ? 'committed ' : ''}state`,
          );
      }
    }
  }
  return out;
}
