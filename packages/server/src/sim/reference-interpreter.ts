import {
  ABANDON_OP,
  canonicalJson,
  toFrozenJson,
  type App,
  type Tx,
  type JsonValue,
  type User,
} from '@creek/app';
import { guarded } from '@creek/replica/core/determinism-guard.js';
import { hlcToMillis } from '@creek/replica/core/hlc.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import { opRandom } from '@creek/replica/core/seeded-random.js';
import {
  ABANDONED,
  abandonedError,
  abandonOrderError,
  duplicateError,
  outcomeKey,
  RESERVED_PREFIX,
  reservedKeyError,
  reusedSeqError,
  sessionKey,
} from '@creek/replica/core/session-dedupe.js';
import type { Outcome, SessionStamp } from '@creek/replica/core/types.js';

export interface SerialOp {
  readonly op: string;
  readonly args: JsonValue;
  readonly ts: number;
  readonly id: OpId | null;
  readonly session?: SessionStamp;
  /** Who invoked it (absent: anonymous). */
  readonly user?: User;
}

/**
 * The checkers' reference: a deliberately simple serial interpreter with no versions, no rollbacks
 * and no reordering — one map, ops applied one after another. Whatever the replica computes through
 * its multiversion machinery must equal what this computes for the same order.
 */
export class ReferenceInterpreter {
  private data: Map<string, JsonValue>;

  constructor(
    private readonly app: App,
    data?: Map<string, JsonValue>,
  ) {
    this.data = data ?? new Map();
  }

  clone(): ReferenceInterpreter {
    return new ReferenceInterpreter(this.app, new Map(this.data));
  }

  /**
   * Runs one op; with `dryRun`, returns its outcome and leaves the state as it was. An op of a
   * client session runs once per (session, seq): written out here on its own, from the rule in
   * session-dedupe.ts, so that the checkers compare two implementations of it.
   */
  apply(o: SerialOp, dryRun = false): Outcome {
    const def = this.app.lookup(o.op);
    if (def === undefined) return { ok: false, error: `unknown operation '${o.op}'` };
    // A session's records are its user's: another user naming the session has its own.
    const s =
      o.session === undefined || o.user === undefined
        ? o.session
        : { ...o.session, id: `${o.session.id}@${encodeURIComponent(o.user.id)}` };
    if (s === undefined || def.readOnly === true) return this.run(o, dryRun);
    const sessionRec = this.data.get(sessionKey(s.id)) as { acked: number } | undefined;
    const acked = sessionRec?.acked ?? 0;
    if (s.seq < acked) return { ok: false, error: duplicateError(s.seq) };
    const earlier = this.data.get(outcomeKey(s.id, s.seq)) as
      { op: string; outcome: Outcome } | undefined;
    let outcome: Outcome;
    if (earlier !== undefined)
      outcome =
        earlier.op === o.op || earlier.op === ABANDONED
          ? earlier.outcome
          : { ok: false, error: reusedSeqError(s.seq, earlier.op) };
    else if (o.op === ABANDON_OP)
      outcome = this.abandon(s, (o.args as { seq: number }).seq, acked, dryRun);
    else outcome = this.run(o, dryRun);
    if (dryRun) return outcome;
    if (earlier === undefined)
      this.data.set(
        outcomeKey(s.id, s.seq),
        toFrozenJson({ op: o.op, outcome } as unknown as JsonValue),
      );
    const next = Math.min(s.acked, s.seq);
    if (next > acked) {
      this.data.set(sessionKey(s.id), toFrozenJson({ acked: next }));
      for (let k = acked; k < next; k++) this.data.delete(outcomeKey(s.id, k));
    }
    return outcome;
  }

  /**
   * `creek.abandon { seq: target }` by op `s.seq` of its session: written out on its own from the
   * rule in session-dedupe.ts, like the rest of the session rule here.
   */
  private abandon(s: SessionStamp, target: number, acked: number, dryRun: boolean): Outcome {
    if (target >= s.seq) return { ok: false, error: abandonOrderError(target, s.seq) };
    if (target < acked) return { ok: true, value: { abandoned: false, outcome: null } };
    const earlier = this.data.get(outcomeKey(s.id, target)) as
      { op: string; outcome: Outcome } | undefined;
    if (earlier !== undefined)
      return {
        ok: true,
        value:
          earlier.op === ABANDONED
            ? { abandoned: true }
            : ({ abandoned: false, outcome: earlier.outcome } as unknown as JsonValue),
      };
    if (!dryRun)
      this.data.set(
        outcomeKey(s.id, target),
        toFrozenJson({ op: ABANDONED, outcome: { ok: false, error: abandonedError(target) } }),
      );
    return { ok: true, value: { abandoned: true } };
  }

  private run(o: SerialOp, dryRun: boolean): Outcome {
    const def = this.app.lookup(o.op)!;
    const tx = new SerialTx(this.data, o);
    try {
      // Under the replicas' execution guard: an op that reaches for a clock or a random source
      // fails here as it fails there.
      const value: unknown = guarded(() => def.run(tx, o.args));
      const result = toFrozenJson(value === undefined ? null : value);
      if (!dryRun) {
        for (const [k, v] of tx.pending) {
          if (v === undefined) this.data.delete(k);
          else this.data.set(k, v);
        }
      }
      return { ok: true, value: result };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message || err.name : String(err) };
    }
  }

  digest(): string {
    return canonicalJson(Object.fromEntries([...this.data].sort((a, b) => (a[0] < b[0] ? -1 : 1))));
  }
}

/** The transaction of the reference interpreter: the map, overlaid with the op's own writes. */
class SerialTx implements Tx {
  readonly pending = new Map<string, JsonValue | undefined>();
  private rand: (() => number) | null = null;

  constructor(
    private readonly data: Map<string, JsonValue>,
    private readonly o: SerialOp,
  ) {}

  get(key: string): JsonValue | undefined {
    if (key.startsWith(RESERVED_PREFIX)) throw new Error(reservedKeyError(key));
    return this.pending.has(key) ? this.pending.get(key) : this.data.get(key);
  }

  put(key: string, value: JsonValue): void {
    if (key.startsWith(RESERVED_PREFIX)) throw new Error(reservedKeyError(key));
    this.pending.set(key, toFrozenJson(value));
  }

  delete(key: string): void {
    if (key.startsWith(RESERVED_PREFIX)) throw new Error(reservedKeyError(key));
    this.pending.set(key, undefined);
  }

  scan(prefix: string): Array<[string, JsonValue]> {
    const merged = new Map<string, JsonValue | undefined>();
    for (const [k, v] of this.data) if (k.startsWith(prefix)) merged.set(k, v);
    for (const [k, v] of this.pending) if (k.startsWith(prefix)) merged.set(k, v);
    return [...merged]
      .filter(
        (e): e is [string, JsonValue] => e[1] !== undefined && !e[0].startsWith(RESERVED_PREFIX),
      )
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  now(): number {
    return hlcToMillis(this.o.ts);
  }

  random(): number {
    this.rand ??= opRandom(this.o.id, this.o.ts);
    return this.rand();
  }

  get user(): User | null {
    return this.o.user === undefined ? null : (toFrozenJson(this.o.user) as unknown as User);
  }
}
