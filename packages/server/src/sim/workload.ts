import { z } from 'zod';
import { op, defineApp, type JsonValue, type StateReader } from '@creek/app';
import type { Prng } from './prng.js';

const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);
const key = z.string().min(1);

/** The simulator's own ops (`simApp`, and the app with a planted op: sim/nondeterminism.ts). */
export const simOps = {
  transfer: op({
    args: z.object({ from: key, to: key, amount: z.number().int().positive() }),
    run(tx, { from, to, amount }) {
      const balance = num(tx.get(from));
      if (balance < amount)
        throw new Error(`insufficient funds in ${from}: ${balance} < ${amount}`);
      tx.put(from, balance - amount);
      tx.put(to, num(tx.get(to)) + amount);
      return balance - amount;
    },
  }),
  append: op({
    args: z.object({ key, item: z.number().int() }),
    run(tx, { key, item }) {
      const current = tx.get(key);
      const list = Array.isArray(current) ? current : [];
      tx.put(key, [...list.slice(-5), item]);
      return list.length;
    },
  }),
  sum: op({
    args: z.object({ prefix: z.string() }),
    readOnly: true,
    run: (tx, { prefix }) => tx.scan(prefix).reduce((s, [, v]) => s + num(v), 0),
  }),
  snapshotTotal: op({
    args: z.object({ prefix: z.string(), into: key }),
    run(tx, { prefix, into }) {
      const total = tx.scan(prefix).reduce((s, [, v]) => s + num(v), 0);
      tx.put(into, total);
      return total;
    },
  }),
  stamp: op({
    args: z.object({ key }),
    run(tx, { key }) {
      const v = { at: tx.now(), draw: Math.floor(tx.random() * 1_000_000) };
      tx.put(key, v);
      return v;
    },
  }),
};
/** Where the workload keeps balances: only `kv.increment` (by a positive amount) and `transfer` write there. */
export const ACCOUNTS = 'acct/';

/**
 * The simulator's app's invariants (SimConfig.invariants): true of every state the workload can
 * reach, since `kv.increment` only adds to a balance and `transfer` refuses to overdraw one.
 */
export const simInvariants = {
  'no-overdraft': (read: StateReader): boolean =>
    read.scan(ACCOUNTS).every(([, v]) => typeof v === 'number' && v >= 0),
};

/**
 * The simulator's application: the built-ins plus ops chosen to make reorders matter — multi-key
 * read-modify-write (transfer), order-sensitive writes (append), prefix scans whose result changes
 * when keys appear or vanish (sum, snapshotTotal), and ops that use `tx.now()` and `tx.random()`.
 */
export const simApp = defineApp(simOps, { invariants: simInvariants });

export interface WorkloadShape {
  /** Size of the hot key set. */
  readonly keys: number;
  /** Share of updating ops that are strong. */
  readonly strongRatio: number;
  /** Share of ops that are read-only. */
  readonly readRatio: number;
}

export interface GeneratedOp {
  readonly op: string;
  readonly args: JsonValue;
  readonly strong: boolean;
}

/**
 * Objects touched only by strong ops: their histories must be linearizable, which the
 * linearizability checker verifies black-box from invocation and response times alone.
 */
export const LINEARIZABLE_KEYS = ['lin/0', 'lin/1'] as const;
export const LINEARIZABLE_QUEUE = 'lq';

/** Keys of exactly-once probes: each incremented by one op, which may be resubmitted elsewhere. */
export const ONCE_PREFIX = 'once/';

/** A strong op on one of the strong-only objects. */
function linearizableOp(prng: Prng): GeneratedOp {
  const key = prng.pick(LINEARIZABLE_KEYS);
  switch (prng.int(0, 7)) {
    case 0:
      return { op: 'kv.get', args: { key }, strong: true };
    case 1:
      return { op: 'kv.put', args: { key, value: prng.int(0, 9) }, strong: true };
    case 2:
      return {
        op: 'kv.cas',
        args: { key, expected: prng.chance(0.3) ? null : prng.int(0, 9), value: prng.int(0, 9) },
        strong: true,
      };
    case 3:
      return { op: 'kv.increment', args: { key, by: prng.int(1, 3) }, strong: true };
    case 4:
      return {
        op: 'queue.enqueue',
        args: { queue: LINEARIZABLE_QUEUE, item: prng.int(0, 99) },
        strong: true,
      };
    case 5:
      return { op: 'queue.dequeue', args: { queue: LINEARIZABLE_QUEUE }, strong: true };
    case 6:
      return { op: 'queue.size', args: { queue: LINEARIZABLE_QUEUE }, strong: true };
    default:
      return { op: 'queue.peek', args: { queue: LINEARIZABLE_QUEUE }, strong: true };
  }
}

/** Draws one client operation over a small hot key set, so that ops conflict. */
export function generateOp(prng: Prng, shape: WorkloadShape): GeneratedOp {
  if (prng.chance(0.08)) return linearizableOp(prng);
  const k = (): string => `k/${prng.int(0, shape.keys - 1)}`;
  const acct = (): string =>
    `${ACCOUNTS}${prng.int(0, Math.max(1, Math.ceil(shape.keys / 2)) - 1)}`;
  const queue = (): string => `q${prng.int(0, 1)}`;
  const strong = prng.chance(shape.strongRatio);
  if (prng.chance(shape.readRatio)) {
    const reads: GeneratedOp[] = [
      { op: 'kv.get', args: { key: k() }, strong },
      { op: 'kv.get', args: { key: acct() }, strong },
      { op: 'queue.peek', args: { queue: queue() }, strong },
      { op: 'queue.size', args: { queue: queue() }, strong },
      { op: 'sum', args: { prefix: ACCOUNTS }, strong },
    ];
    return prng.pick(reads);
  }
  const roll = prng.int(0, 10);
  switch (roll) {
    case 0:
      return { op: 'kv.put', args: { key: k(), value: prng.int(0, 99) }, strong };
    case 1:
      return { op: 'kv.increment', args: { key: acct(), by: prng.int(1, 20) }, strong };
    case 2:
      return {
        op: 'kv.cas',
        args: {
          key: k(),
          expected: prng.chance(0.5) ? null : prng.int(0, 99),
          value: prng.int(0, 99),
        },
        strong,
      };
    case 3:
      return { op: 'kv.delete', args: { key: k() }, strong };
    case 4:
      return { op: 'queue.enqueue', args: { queue: queue(), item: prng.int(0, 999) }, strong };
    case 5:
      return { op: 'queue.dequeue', args: { queue: queue() }, strong };
    case 6:
    case 7:
      return {
        op: 'transfer',
        args: { from: acct(), to: acct(), amount: prng.int(1, 15) },
        strong,
      };
    case 8:
      return { op: 'append', args: { key: k(), item: prng.int(0, 999) }, strong };
    case 9:
      return { op: 'snapshotTotal', args: { prefix: ACCOUNTS, into: k() }, strong };
    default:
      return { op: 'stamp', args: { key: k() }, strong };
  }
}
