import { toFrozenJson, type App, type JsonValue, type Tx } from '@creek/app';

/** What one op did: its value, or the message it failed with. */
export type Outcome = { ok: true; value: JsonValue } | { ok: false; error: string };

/**
 * The keys one execution touched: what a Creek replica's validation compares (the values of the
 * keys it read, the rows under the prefixes it scanned) and what it changes for later ops.
 */
export interface Access {
  readonly reads: Set<string>;
  readonly scans: Set<string>;
  readonly writes: Set<string>;
}

/**
 * A serial database for an app's ops: each op sees the state every earlier op left, reads its own
 * writes, and has all its writes applied or, when it throws, none (as a Creek replica executes
 * ops at their place in the order). Written values are deep-frozen, so an op that mutates a row it
 * read fails here as it would in a replica.
 */
export class SerialDb {
  readonly data = new Map<string, JsonValue>();
  private clock = Date.UTC(2024, 0, 1);
  /** The number of rows each successful op wrote (puts and deletes). */
  readonly writeCounts: number[] = [];
  /** The keys the last op read, the prefixes it scanned and the keys it wrote. */
  lastAccess: Access = { reads: new Set(), scans: new Set(), writes: new Set() };

  constructor(private readonly app: App) {}

  run(op: string, args: unknown): Outcome {
    const def = this.app.lookup(op);
    if (def === undefined) throw new Error(`no op '${op}'`);
    const parsed: unknown = def.args.parse(args);
    const writes = new Map<string, JsonValue | undefined>();
    const now = (this.clock += 1_000);
    const readOnly = def.readOnly === true;
    const access: Access = { reads: new Set(), scans: new Set(), writes: new Set() };
    this.lastAccess = access;
    const tx: Tx = {
      get: (k) => {
        access.reads.add(k);
        return writes.has(k) ? writes.get(k) : this.data.get(k);
      },
      put: (k, v) => {
        if (readOnly) throw new Error(`'${op}' is read-only`);
        access.writes.add(k);
        writes.set(k, toFrozenJson(v));
      },
      delete: (k) => {
        if (readOnly) throw new Error(`'${op}' is read-only`);
        access.writes.add(k);
        writes.set(k, undefined);
      },
      scan: (prefix) => {
        access.scans.add(prefix);
        const merged = new Map<string, JsonValue | undefined>();
        for (const [k, v] of this.data) if (k.startsWith(prefix)) merged.set(k, v);
        for (const [k, v] of writes) if (k.startsWith(prefix)) merged.set(k, v);
        return [...merged]
          .filter((e): e is [string, JsonValue] => e[1] !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      },
      now: () => now,
      random: () => {
        throw new Error('TPC-C ops draw nothing: their inputs are in their arguments');
      },
      user: null,
    };
    let value: unknown;
    try {
      value = def.run(tx, parsed);
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    for (const [k, v] of writes) {
      if (v === undefined) this.data.delete(k);
      else this.data.set(k, v);
    }
    this.writeCounts.push(writes.size);
    return { ok: true, value: toFrozenJson(value ?? null) };
  }

  /** Runs an op that must succeed; its value. */
  must(op: string, args: unknown): JsonValue {
    const r = this.run(op, args);
    if (!r.ok) throw new Error(`${op} failed: ${r.error}`);
    return r.value;
  }

  /** The rows under a prefix, in key order. */
  scan(prefix: string): Array<[string, JsonValue]> {
    return [...this.data]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A copy of the state, for planting corruptions without touching this one. */
  copy(): Map<string, JsonValue> {
    return new Map(this.data);
  }
}
