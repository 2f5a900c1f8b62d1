import * as z from 'zod';

/** Any JSON value: operation arguments and results. */
export type WireJson = string | number | boolean | null | WireJson[] | { [key: string]: WireJson };

/**
 * Any JSON value: operation arguments and results. A hand-written check rather than `z.json()`:
 * the same rule (strings, finite numbers, booleans, null, arrays and plain objects of them), but
 * without a union tried per value, which made validating the Reqs of a gossip push the largest
 * part of a replica's time receiving it. Iterative, so deep values cannot exhaust the stack.
 */
export const JsonValueSchema = z.custom<WireJson>(isJsonValue, { message: 'must be a JSON value' });

/** True when `root` is a JSON value (see JsonValueSchema). */
export function isJsonValue(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v)) return false;
        continue;
      case 'object': {
        if (v === null) continue;
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) stack.push(v[i]);
          continue;
        }
        const proto = Object.getPrototypeOf(v) as unknown;
        if (proto !== Object.prototype && proto !== null) return false;
        for (const key in v) stack.push((v as Record<string, unknown>)[key]);
        continue;
      }
      default:
        return false;
    }
  }
  return true;
}

/** The longest user id (a token's `sub`) a replica takes. */
export const MAX_USER_ID_CHARS = 1024;

/**
 * A signed-in caller as it travels with its op (`tx.user`): the id (the token's `sub`) and every
 * claim of the token the replica the client is connected to verified.
 */
export const UserSchema = z.object({
  id: z.string().min(1).max(MAX_USER_ID_CHARS),
  /** A JSON object, checked as JsonValueSchema checks values (and, like it, passed on as it is). */
  claims: z.custom<{ [key: string]: WireJson }>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && isJsonValue(v),
    { message: 'must be a JSON object' },
  ),
});
export type WireUser = z.infer<typeof UserSchema>;

/** `(replica, eventNo)`, Creek Algorithm 1 line 1. */
export const OpIdSchema = z.object({
  replica: z.number().int().nonnegative(),
  eventNo: z.number().int().positive(),
});
export type WireOpId = z.infer<typeof OpIdSchema>;

/** A dotted version vector as plain data: `{ [replica]: [base, ...dots] }`. */
export const DvvSchema = z.record(
  z.string().regex(/^\d+$/),
  z.array(z.number().int().nonnegative()).min(1),
);
