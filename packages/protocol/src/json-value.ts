import * as z from 'zod';

/** Any JSON value: operation arguments and results. */
export const JsonValueSchema = z.json();
export type WireJson = z.infer<typeof JsonValueSchema>;

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
