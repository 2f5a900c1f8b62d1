import type { JsonValue } from '@creek/app';

/**
 * Which keys each op of the simulator's app (the built-ins and sim/workload.ts) may read or
 * write, so that the linearizability checker can split a run's history into objects no op spans
 * (Porcupine's partitioning, by key): ops whose footprints overlap are checked together.
 *
 * A footprint holds exact keys and key prefixes (a scan, or a queue: the built-ins keep queue
 * `name` under `~queue/<name>/`, packages/app/src/builtins.ts). An op this table does not know
 * gets no footprint: it may touch anything, and is checked with every other op.
 */
export interface Footprint {
  readonly keys: readonly string[];
  readonly prefixes: readonly string[];
  /** Its effect depends on its timestamp, id or caller (tx.now(), tx.random(), tx.user). */
  readonly readsContext: boolean;
}

/** One of the pieces an op splits into once its result is known (splitByResult). */
export interface OpPart {
  readonly op: string;
  readonly args: JsonValue;
  /** The piece returns the op's result; the other pieces return what their own op does. */
  readonly returnsResult: boolean;
}

const queuePrefix = (queue: string): string => `~queue/${queue}/`;
/** Where the built-ins keep a shared context's frontier (packages/app/src/builtins.ts). */
const frontierKey = (id: string): string => `~context/${id}`;

function field(args: JsonValue, name: string): string | null {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return null;
  const v = args[name];
  return typeof v === 'string' ? v : null;
}

/** The keys `op` with `args` may read or write; null when unknown (it may touch any key). */
export function footprintOf(op: string, args: JsonValue): Footprint | null {
  const keys = (...names: string[]): Footprint | null => {
    const ks = names.map((n) => field(args, n));
    return ks.every((k) => k !== null)
      ? { keys: ks as string[], prefixes: [], readsContext: false }
      : null;
  };
  switch (op) {
    case 'kv.get':
    case 'kv.put':
    case 'kv.delete':
    case 'kv.cas':
    case 'kv.increment':
    case 'append':
      return keys('key');
    case 'stamp': {
      const f = keys('key');
      return f === null ? null : { ...f, readsContext: true };
    }
    case 'transfer':
      return keys('from', 'to');
    case 'queue.enqueue':
    case 'queue.dequeue':
    case 'queue.peek':
    case 'queue.size': {
      const queue = field(args, 'queue');
      return queue === null
        ? null
        : { keys: [], prefixes: [queuePrefix(queue)], readsContext: false };
    }
    case 'creek.context.merge':
    case 'creek.context.frontier': {
      // A shared context's ops touch its frontier alone: without this, every op of a run with
      // shared contexts was one object, checked in one search that gives up on a few thousand.
      const id = field(args, 'id');
      return id === null ? null : { keys: [frontierKey(id)], prefixes: [], readsContext: false };
    }
    case 'sum': {
      const prefix = field(args, 'prefix');
      return prefix === null ? null : { keys: [], prefixes: [prefix], readsContext: false };
    }
    case 'snapshotTotal': {
      const prefix = field(args, 'prefix');
      const into = field(args, 'into');
      return prefix === null || into === null
        ? null
        : { keys: [into], prefixes: [prefix], readsContext: false };
    }
    default:
      return null;
  }
}

/**
 * An op whose effect, once its result is known, splits into pieces on keys apart, each an op of
 * its own with the same interval: snapshotTotal reads the sum of a prefix (its result) and writes
 * that result into one key, so it is a `sum` of the prefix and a `kv.put` of the result. Checked
 * apart, the pieces keep the prefix's ops and the key's ops in histories of their own (else every
 * key a snapshot ever wrote would join the prefix's). Null: the op does not split.
 */
export function splitByResult(op: string, args: JsonValue, result: JsonValue): OpPart[] | null {
  if (op !== 'snapshotTotal') return null;
  const prefix = field(args, 'prefix');
  const into = field(args, 'into');
  if (prefix === null || into === null) return null;
  return [
    { op: 'sum', args: { prefix }, returnsResult: true },
    { op: 'kv.put', args: { key: into, value: result }, returnsResult: false },
  ];
}
