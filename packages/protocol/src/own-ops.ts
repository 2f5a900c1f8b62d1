import * as z from 'zod';
import { MAX_OWN_OPS_LISTED } from './limits.js';

/**
 * Which of a client session's own ops the state a live query's result was read at holds: every op
 * numbered up to `upTo` but those in `missing` (reads, which are never ordered, and ops not
 * decided there yet: a session's ops usually reach the order in their numbering, but not always —
 * an op refused by one replica and sent to another, an op abandoned before it ran). An op is held
 * when its outcome is in the state: it was applied, or it failed. A client never lets a result
 * replace a view that holds an op the result does not (monotonic views).
 */
export const HeldOwnOpsSchema = z.object({
  upTo: z.number().int().nonnegative(),
  missing: z.array(z.number().int().positive()).max(MAX_OWN_OPS_LISTED).optional(),
});
export type HeldOwnOps = z.infer<typeof HeldOwnOpsSchema>;

/** An op of the session that failed at its place in the state a live query read. */
export const FailedOwnOpSchema = z.object({
  /** Its number in the session. */
  seq: z.number().int().positive(),
  op: z.string(),
  /** Why it failed (what its `run` threw, or why it never ran: abandoned, a duplicate). */
  error: z.string(),
});

/**
 * A live query result's `own`: the session's ops its state holds (HeldOwnOpsSchema), and those
 * among them that failed there (down to the session's acknowledgement: older failures the client
 * already knows). Sent only on a connection with a session.
 */
export const OwnOpsSchema = HeldOwnOpsSchema.extend({
  failed: z.array(FailedOwnOpSchema).max(MAX_OWN_OPS_LISTED).optional(),
});
export type OwnOps = z.infer<typeof OwnOpsSchema>;

/** HeldOwnOps as either side keeps it. */
type Held = { readonly upTo: number; readonly missing?: readonly number[] | undefined };

/** Whether a state that holds `a` of the session's ops holds every op `b` holds. */
export function holdsAll(a: Held, b: Held): boolean {
  if (a.upTo < b.upTo) return false;
  const notInB = new Set(b.missing ?? []);
  for (const seq of a.missing ?? []) if (seq <= b.upTo && !notInB.has(seq)) return false;
  return true;
}

/** Whether `own` holds the session's op `seq`. */
export function holds(own: Held, seq: number): boolean {
  return seq <= own.upTo && !(own.missing ?? []).includes(seq);
}
