import { z } from 'zod';
import { op, type OpDefinitions } from './app.js';
import { jsonEqual, type JsonValue } from './json.js';

/** The longest shared context id (`client.joinContext(id)`). */
export const MAX_CONTEXT_ID_CHARS = 128;
/** The most origins a context's frontier names: a context token's bound, both kinds of origin. */
export const MAX_FRONTIER_ORIGINS = 128;

/**
 * Built-in data types, usable by every app with no code of its own.
 *
 * Key-value ops use the key as given, so an app's own ops see the same data through `tx.get(key)`.
 * `kv.put` and `kv.delete` are blind writes (they read nothing), so a reorder never forces them to
 * re-execute. Queues live under `~queue/<name>/`: `head` and `tail` counters and one key per item.
 */
const json: z.ZodType<JsonValue> = z.json();
/**
 * A shared context's frontier lives under `~context/` (frontierKey), kept to the creek.context.*
 * ops: through kv.* a user the app's contexts check keeps out of a context could read it, or make
 * its members wait on ops it names.
 */
const CONTEXT_PREFIX = '~context/';
const key = z
  .string()
  .min(1, 'must be a non-empty string')
  .refine((k) => !k.startsWith(CONTEXT_PREFIX), {
    message: `must not start with '${CONTEXT_PREFIX}': shared contexts' frontiers are kept to the creek.context.* ops`,
  });
const queueName = z.string().min(1, 'must be a non-empty string');

const qKey = (queue: string, part: string): string => `~queue/${queue}/${part}`;

/** A shared context's id (client.joinContext): its frontier lives at `~context/<id>`. */
const contextId = z
  .string()
  .min(1, 'must be a non-empty string')
  .max(MAX_CONTEXT_ID_CHARS, `must be at most ${MAX_CONTEXT_ID_CHARS} characters`);
/**
 * A seen vector as [origin, count] pairs: per origin replica, how many of its ops (a context
 * token's counts). Bounded as a token is: at most 64 origins by position and 64 later ones.
 */
const seenPairs = z
  .array(z.tuple([z.number().int().min(0), z.number().int().min(0)]))
  .max(MAX_FRONTIER_ORIGINS, `holds at most ${MAX_FRONTIER_ORIGINS} origins`);
const frontierKey = (id: string): string => `${CONTEXT_PREFIX}${id}`;

/** The frontier stored for a context: [origin, count] pairs in origin order (none: empty). */
function frontierOf(v: JsonValue | undefined): [number, number][] {
  if (!Array.isArray(v)) return [];
  return v.filter(
    (p): p is [number, number] =>
      Array.isArray(p) && typeof p[0] === 'number' && typeof p[1] === 'number',
  );
}
const counter = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);

export const builtins = {
  'kv.get': op({
    args: z.object({ key }),
    readOnly: true,
    run: (tx, { key }) => tx.get(key) ?? null,
  }),
  'kv.put': op({
    args: z.object({ key, value: json }),
    run: (tx, { key, value }) => {
      tx.put(key, value);
      return null;
    },
  }),
  'kv.delete': op({
    args: z.object({ key }),
    run: (tx, { key }) => {
      tx.delete(key);
      return null;
    },
  }),
  'kv.cas': op({
    args: z.object({ key, expected: json.nullable(), value: json }),
    run: (tx, { key, expected, value }) => {
      const current = tx.get(key) ?? null;
      if (!jsonEqual(current, expected)) return { ok: false, current };
      tx.put(key, value);
      return { ok: true, current: value };
    },
  }),
  'kv.increment': op({
    args: z.object({ key, by: z.number().finite().default(1) }),
    run: (tx, { key, by }) => {
      const current = tx.get(key);
      if (current !== undefined && typeof current !== 'number') {
        throw new Error(
          `kv.increment: '${key}' holds a ${Array.isArray(current) ? 'list' : typeof current}, not a number`,
        );
      }
      const next = (current ?? 0) + by;
      tx.put(key, next);
      return next;
    },
  }),
  'queue.enqueue': op({
    args: z.object({ queue: queueName, item: json }),
    run: (tx, { queue, item }) => {
      const tail = counter(tx.get(qKey(queue, 'tail')));
      tx.put(qKey(queue, `item/${tail}`), item);
      tx.put(qKey(queue, 'tail'), tail + 1);
      return { position: tail };
    },
  }),
  /** Returns the item, its position (0 for the first item ever enqueued) and how many remain. */
  'queue.dequeue': op({
    args: z.object({ queue: queueName }),
    run: (tx, { queue }) => {
      const head = counter(tx.get(qKey(queue, 'head')));
      const tail = counter(tx.get(qKey(queue, 'tail')));
      if (head >= tail) return null;
      const item = tx.get(qKey(queue, `item/${head}`)) ?? null;
      tx.delete(qKey(queue, `item/${head}`));
      tx.put(qKey(queue, 'head'), head + 1);
      return { item, position: head, remaining: tail - head - 1 };
    },
  }),
  'queue.peek': op({
    args: z.object({ queue: queueName }),
    readOnly: true,
    run: (tx, { queue }) => {
      const head = counter(tx.get(qKey(queue, 'head')));
      const tail = counter(tx.get(qKey(queue, 'tail')));
      if (head >= tail) return null;
      return { item: tx.get(qKey(queue, `item/${head}`)) ?? null, position: head };
    },
  }),
  'queue.size': op({
    args: z.object({ queue: queueName }),
    readOnly: true,
    run: (tx, { queue }) =>
      counter(tx.get(qKey(queue, 'tail'))) - counter(tx.get(qKey(queue, 'head'))),
  }),
  /**
   * Abandons op `seq` of the invoking client's session for good, unless it took effect first: the
   * answer to a client whose op's fate is unknown (an indeterminate op, as Jepsen calls it). Where
   * it lands in the committed order decides: if the op was ordered before it, the answer is
   * `{ abandoned: false, outcome }` (the op's own outcome there, when the cluster still holds it);
   * otherwise `{ abandoned: true }`, and any copy of the op ordered later is not run. Run only
   * within a session (the server's core/session-dedupe.ts); invoke it strong, since only its place
   * in the committed order is final. Creek clients invoke it for you: `error.indeterminate.abandon()`.
   */
  'creek.abandon': op({
    args: z.object({ seq: z.number().int().min(1) }),
    run: () => {
      throw new Error(
        'creek.abandon abandons an op of a client session: invoke it through a Creek client, which numbers its ops',
      );
    },
  }),
  /**
   * Closes a dead origin (a replica's incarnation that will issue no more ops): its ops above
   * `cut` are definitely not applied, its ops up to it commit as any other's. A replica issues it
   * (strong) when an origin it knows is dead left ops stranded behind one nobody received; where
   * it lands in the committed order decides, the first close of an origin there being the one that
   * counts (the server's core/closing-origins.ts). Never invoked by clients. Changes no state.
   */
  'creek.close': op({
    args: z.object({ origin: z.number().int().min(0), cut: z.number().int().min(0) }),
    run: () => null,
  }),
  /**
   * Shared contexts (`client.joinContext(id)`, CC-Paxos's distributed contexts): adds `seen`, the
   * counts of a context token covering an op of a member, to context `id`'s frontier (the most of
   * each origin). Invoked strong by the SDK once the op has its answer; the op is acknowledged to
   * its caller only once this commits, so a member whose op begins later reads a frontier that
   * covers it (`creek.context.frontier`, strong too) and waits for those ops before it runs.
   */
  'creek.context.merge': op({
    args: z.object({ id: contextId, seen: seenPairs }),
    level: 'strong',
    run: (tx, { id, seen }) => {
      const merged = new Map(frontierOf(tx.get(frontierKey(id))));
      for (const [origin, n] of seen) merged.set(origin, Math.max(n, merged.get(origin) ?? 0));
      if (merged.size > MAX_FRONTIER_ORIGINS)
        throw new Error(
          `creek.context.merge: context '${id}' would name more than ${MAX_FRONTIER_ORIGINS} origins`,
        );
      const frontier = [...merged].sort((a, b) => a[0] - b[0]);
      tx.put(frontierKey(id), frontier);
      return null;
    },
  }),
  /** Context `id`'s frontier: [origin, count] pairs of the ops acknowledged in it (none: []). */
  'creek.context.frontier': op({
    args: z.object({ id: contextId }),
    readOnly: true,
    level: 'strong',
    run: (tx, { id }) => frontierOf(tx.get(frontierKey(id))),
  }),
  /** The strong no-op a replica issues to stabilize pending weak ops (Creek §4.4). */
  'creek.noop': op({
    args: z.null(),
    run: () => null,
  }),
} satisfies OpDefinitions;

export type Builtins = typeof builtins;

export const NOOP_OP = 'creek.noop';
export const ABANDON_OP = 'creek.abandon';
export const CLOSE_OP = 'creek.close';
export const CONTEXT_MERGE_OP = 'creek.context.merge';
export const CONTEXT_FRONTIER_OP = 'creek.context.frontier';
