import type { App, Tx } from '../core/app.js';
import { hlcToMillis } from '../core/hlc.js';
import { canonicalJson, toFrozenJson, type JsonValue } from '../core/json.js';
import type { OpId } from '../core/op-id.js';
import { opRandom } from '../core/seeded-random.js';
import type { Outcome } from '../core/types.js';

export interface SerialOp {
  readonly op: string;
  readonly args: JsonValue;
  readonly ts: number;
  readonly id: OpId | null;
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

  /** Runs one op; with `dryRun`, returns its outcome and leaves the state as it was. */
  apply(o: SerialOp, dryRun = false): Outcome {
    const def = this.app.lookup(o.op);
    if (def === undefined) return { ok: false, error: `unknown operation '${o.op}'` };
    const tx = new SerialTx(this.data, o);
    try {
      const value: unknown = def.run(tx, o.args);
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
    return this.pending.has(key) ? this.pending.get(key) : this.data.get(key);
  }

  put(key: string, value: JsonValue): void {
    this.pending.set(key, toFrozenJson(value));
  }

  delete(key: string): void {
    this.pending.set(key, undefined);
  }

  scan(prefix: string): Array<[string, JsonValue]> {
    const merged = new Map<string, JsonValue | undefined>();
    for (const [k, v] of this.data) if (k.startsWith(prefix)) merged.set(k, v);
    for (const [k, v] of this.pending) if (k.startsWith(prefix)) merged.set(k, v);
    return [...merged]
      .filter((e): e is [string, JsonValue] => e[1] !== undefined)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  now(): number {
    return hlcToMillis(this.o.ts);
  }

  random(): number {
    this.rand ??= opRandom(this.o.id, this.o.ts);
    return this.rand();
  }
}
