import { canonicalJson, jsonEqual, type JsonValue } from '@creek/app';
import type { Outcome } from '@creek/replica/core/types.js';
import type { Model } from './linearizability.js';

/**
 * Models of one object under the built-in ops, for the linearizability checker: one key under the
 * kv ops, one queue under the queue ops. (Histories of a whole run take the app's own semantics
 * instead: app-model.ts.)
 */

function field(args: JsonValue, name: string): JsonValue | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  return Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined;
}

const ok = (value: JsonValue): Outcome => ({ ok: true, value });
const fail = (error: string): Outcome => ({ ok: false, error });

/**
 * One key under the built-in kv ops; `undefined` is "absent". The `key` argument only appears in
 * error messages: a history for this model is a history of one key.
 */
export const registerModel: Model<JsonValue | undefined> = {
  init: undefined,
  step(state, op, args) {
    switch (op) {
      case 'kv.get':
        return { outcome: ok(state ?? null), next: state };
      case 'kv.put':
        return { outcome: ok(null), next: field(args, 'value') ?? null };
      case 'kv.delete':
        return { outcome: ok(null), next: undefined };
      case 'kv.cas': {
        const current = state ?? null;
        if (!jsonEqual(current, field(args, 'expected') ?? null)) {
          return { outcome: ok({ ok: false, current }), next: state };
        }
        const value = field(args, 'value') ?? null;
        return { outcome: ok({ ok: true, current: value }), next: value };
      }
      case 'kv.increment': {
        const key = String(field(args, 'key'));
        if (state !== undefined && typeof state !== 'number') {
          const kind = Array.isArray(state) ? 'list' : typeof state;
          return {
            outcome: fail(`kv.increment: '${key}' holds a ${kind}, not a number`),
            next: state,
          };
        }
        const by = field(args, 'by');
        const next = (state ?? 0) + (typeof by === 'number' ? by : 1);
        // The store refuses a non-finite number (toFrozenJson in tx.put), which fails the op.
        if (!Number.isFinite(next)) {
          return { outcome: fail(`value of '${key}' is not a finite number`), next: state };
        }
        return { outcome: ok(next), next };
      }
      default:
        throw new Error(`registerModel: unsupported op '${op}'`);
    }
  },
  key: (state) => canonicalJson(state),
};

/** One queue: the position of its first item (`head`) and the items still in it, oldest first. */
export interface QueueState {
  readonly head: number;
  readonly items: readonly JsonValue[];
}

/** One queue under the built-in queue ops. Positions count from 0 over the queue's life. */
export const queueModel: Model<QueueState> = {
  init: { head: 0, items: [] },
  step(state, op, args) {
    const { head, items } = state;
    switch (op) {
      case 'queue.enqueue':
        return {
          outcome: ok({ position: head + items.length }),
          next: { head, items: [...items, field(args, 'item') ?? null] },
        };
      case 'queue.dequeue':
        if (items.length === 0) return { outcome: ok(null), next: state };
        return {
          outcome: ok({ item: items[0]!, position: head, remaining: items.length - 1 }),
          next: { head: head + 1, items: items.slice(1) },
        };
      case 'queue.peek':
        if (items.length === 0) return { outcome: ok(null), next: state };
        return { outcome: ok({ item: items[0]!, position: head }), next: state };
      case 'queue.size':
        return { outcome: ok(items.length), next: state };
      default:
        throw new Error(`queueModel: unsupported op '${op}'`);
    }
  },
  key: (state) => `${state.head}:${canonicalJson(state.items as JsonValue[])}`,
};
