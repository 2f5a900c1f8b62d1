import { z } from 'zod';
import { defineApp, op } from '@creek/app';

/**
 * The ops the robustness runner drives, besides the built-in queue ops: appends of unique values
 * to a list and reads of it. A list's final value says which appends took effect, each how many
 * times, and in what order: what "nothing acknowledged is lost, nothing applied twice" needs, and
 * what kv.put (which overwrites) or kv.increment (whose sum hides which op added what) cannot say.
 */
export default defineApp({
  /** Appends `value` to the list at `key`; returns the list's new length. */
  'list.append': op({
    args: z.object({ key: z.string().min(1), value: z.string().min(1) }),
    run(tx, { key, value }) {
      const list = listAt(tx.get(key));
      tx.put(key, [...list, value]);
      return list.length + 1;
    },
  }),
  /** The list at `key` (empty if none). */
  'list.read': op({
    args: z.object({ key: z.string().min(1) }),
    readOnly: true,
    run: (tx, { key }) => listAt(tx.get(key)),
  }),
});

function listAt(v: unknown): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new Error(`not a list of strings: ${JSON.stringify(v)}`);
  return v as string[];
}
