import { z } from 'zod';
import { ERROR_CODES } from './errors.js';
import { JsonValueSchema, OpIdSchema } from './json-value.js';

/**
 * Client ↔ replica. A client says hello (with its token when the cluster has tokens), then invokes
 * ops with ids it chooses; the replica streams views of each op: tentative ones, then the stable
 * one — or, when the stable result equals the last tentative one, a short confirmation instead
 * (Correctables §5.2).
 */
export const LevelSchema = z.enum(['weak', 'strong']);

export const ClientHelloSchema = z.object({
  t: z.literal('hello'),
  version: z.number().int(),
  token: z.string().max(4096).optional(),
});

export const InvokeSchema = z.object({
  t: z.literal('invoke'),
  /** Chosen by the client, unique per client; a retry with the same id is answered, not re-applied. */
  opId: z.string().min(1).max(128),
  op: z.string().min(1).max(256),
  args: JsonValueSchema,
  /** weak: one tentative view; strong: tentative views then the stable one. */
  level: LevelSchema,
});

export const ClientFrameSchema = z.discriminatedUnion('t', [ClientHelloSchema, InvokeSchema]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

export const OutcomeSchema = z.union([
  z.object({ ok: z.literal(true), value: JsonValueSchema }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

export const ServerFrameSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('welcome'),
    version: z.number().int(),
    replica: z.number().int().nonnegative(),
    levels: z.array(LevelSchema),
    ops: z.array(z.string()),
  }),
  z.object({
    t: z.literal('view'),
    opId: z.string(),
    /** Tentative views may repeat as the op is re-executed; `stable` is the last one. */
    level: z.enum(['tentative', 'stable']),
    outcome: OutcomeSchema,
    id: OpIdSchema.nullable(),
  }),
  /** The stable result equals the last tentative view the client got. */
  z.object({ t: z.literal('confirm'), opId: z.string() }),
  z.object({
    t: z.literal('error'),
    opId: z.string().optional(),
    code: z.enum(ERROR_CODES),
    message: z.string(),
  }),
]);
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
