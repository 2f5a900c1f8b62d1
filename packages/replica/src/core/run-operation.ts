import {
  ABANDON_OP,
  toFrozenJson,
  type AnyOpDefinition,
  type Tx,
  type JsonValue,
  type User,
} from '@creek/app';
import { guarded } from './determinism-guard.js';
import { hlcToMillis } from './hlc.js';
import { opRandom } from './seeded-random.js';
import {
  abandon,
  RESERVED_PREFIX,
  reservedKeyError,
  runOnce,
  scopedSession,
} from './session-dedupe.js';
import type { ExecutionJob, ExecutionResult, Outcome, Write } from './types.js';

/**
 * Runs one op against its snapshot: buffers writes (the op reads its own writes), turns a thrown
 * error into a failed outcome and discards the writes of a failed op, so that an execution is
 * all-or-nothing and a function of the snapshot alone. Used by every executor.
 */
export function runOperation(def: AnyOpDefinition | undefined, job: ExecutionJob): ExecutionResult {
  if (def === undefined) {
    return {
      jobId: job.jobId,
      writes: [],
      outcome: { ok: false, error: `unknown operation '${job.op}'` },
    };
  }
  const readOnly = def.readOnly === true;
  // A read-only op changes nothing, so running a resubmission of it again is harmless.
  if (job.session === undefined || readOnly) return { jobId: job.jobId, ...runCode(def, job) };
  // The session's records are its user's (scopedSession): another user naming it gets its own.
  const session =
    job.user === undefined
      ? job.session
      : { ...job.session, id: scopedSession(job.session.id, job.user) };
  if (job.op === ABANDON_OP) {
    // Its decision is about the session's own records, which no app code may touch.
    const target = (job.args as { seq: number }).seq;
    return {
      jobId: job.jobId,
      ...runOnce(session, job.op, job.snapshot, () => abandon(session, target, job.snapshot)),
    };
  }
  return {
    jobId: job.jobId,
    ...runOnce(session, job.op, job.snapshot, () => runCode(def, job)),
  };
}

/**
 * One run of the op's code: its buffered writes and outcome (no writes if it threw). The code runs
 * under the execution guard (determinism-guard.ts): a clock, random source or timer it reaches for
 * throws, and the op fails with a message naming the safe alternative, the same on every replica.
 */
function runCode(def: AnyOpDefinition, job: ExecutionJob): { writes: Write[]; outcome: Outcome } {
  const tx = new OpTx(job, def.readOnly === true);
  try {
    const value: unknown = guarded(() => def.run(tx, job.args));
    if (isThenable(value)) throw new Error(thenableError(job.op));
    const outcome: Outcome = {
      ok: true,
      value: toFrozenJson(value === undefined ? null : value, 'result'),
    };
    return { writes: tx.writeList(), outcome };
  } catch (err) {
    return { writes: [], outcome: { ok: false, error: errorMessage(err) } };
  }
}

/** The `Tx` an op sees: snapshot reads overlaid with its own buffered writes. */
class OpTx implements Tx {
  private readonly writes = new Map<string, JsonValue | undefined>();
  private rand: (() => number) | null = null;
  private frozenUser: User | null | undefined = undefined;

  constructor(
    private readonly job: ExecutionJob,
    private readonly readOnly: boolean,
  ) {}

  get(key: string): JsonValue | undefined {
    checkKey(key);
    checkNotReserved(key);
    return this.writes.has(key) ? this.writes.get(key) : this.job.snapshot.get(key);
  }

  put(key: string, value: JsonValue): void {
    checkKey(key);
    checkNotReserved(key);
    if (this.readOnly)
      throw new Error(`operation '${this.job.op}' is read-only and cannot put '${key}'`);
    this.writes.set(key, toFrozenJson(value, `value of '${key}'`));
  }

  delete(key: string): void {
    checkKey(key);
    checkNotReserved(key);
    if (this.readOnly)
      throw new Error(`operation '${this.job.op}' is read-only and cannot delete '${key}'`);
    this.writes.set(key, undefined);
  }

  scan(prefix: string): Array<[string, JsonValue]> {
    if (typeof prefix !== 'string') throw new TypeError('scan prefix must be a string');
    const merged = new Map<string, JsonValue | undefined>(this.job.snapshot.scan(prefix));
    for (const [k, v] of this.writes) if (k.startsWith(prefix)) merged.set(k, v);
    const out: Array<[string, JsonValue]> = [];
    // Creek's own bookkeeping is not the app's data.
    for (const [k, v] of merged)
      if (v !== undefined && !k.startsWith(RESERVED_PREFIX)) out.push([k, v]);
    return out.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  }

  now(): number {
    return hlcToMillis(this.job.ts);
  }

  random(): number {
    this.rand ??= opRandom(this.job.id, this.job.ts);
    return this.rand();
  }

  /**
   * Frozen, as everything an op reads: a user an op could change would differ for the ops after it
   * that share the object. An executor's copy (a worker's) is frozen here; a frozen one is kept.
   */
  get user(): User | null {
    if (this.frozenUser === undefined)
      this.frozenUser =
        this.job.user === undefined
          ? null
          : (toFrozenJson(this.job.user, 'user') as unknown as User);
    return this.frozenUser;
  }

  writeList(): Write[] {
    return [...this.writes];
  }
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key.length === 0)
    throw new TypeError('keys must be non-empty strings');
}

function checkNotReserved(key: string): void {
  if (key.startsWith(RESERVED_PREFIX)) throw new Error(reservedKeyError(key));
}

/**
 * An op that returns a Promise (an async function, or one that returns a thenable) is refused:
 * whatever it did after its first `await` would happen outside its place in the order.
 */
function thenableError(op: string): string {
  return (
    `operation '${op}' returned a Promise (or another thenable): run must be synchronous, ` +
    'since each replica runs the op at one place in the order and an await would leave it. ' +
    'Remove async/await from run; tx.get, tx.put and tx.scan are synchronous.'
  );
}

function isThenable(v: unknown): boolean {
  return (
    typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'
  );
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
