import * as z from 'zod';
import { SpeculationCountsSchema } from './status.js';

/**
 * Replica → viewer: what a replica does, for the cluster visualizer and other tools, on the
 * `/events` WebSocket endpoint (EVENTS_PATH), behind the admin token. The viewer sends `watch`
 * with the token first; the replica answers `hello`, then sends its events in batches, one frame
 * per event-loop turn that had any. It samples under load: a viewer gets at most
 * MAX_EVENTS_PER_SECOND events a second, and none while it has not read what was sent (its socket
 * holding more than EVENT_BUFFER_BYTES); what it missed is counted in `dropped` events. A slow
 * viewer never slows the replica.
 *
 * Op ids are written `r<replica>#<eventNo>` (as in the replica's logs), timestamps `at` are the
 * replica's clock in ms since the epoch, and `ts` an op's hybrid logical clock timestamp (µs).
 */
export const EVENTS_PATH = '/events';

/** Bumped on any incompatible change of an event below. */
export const EVENTS_VERSION = 1;

/**
 * Most events a viewer is sent per second by default; the rest are counted in `dropped` events (a
 * replica's operator may change it: `viewerEventsPerSecond` in CREEK_EDGE_LIMITS).
 */
export const MAX_EVENTS_PER_SECOND = 5_000;

/**
 * By default, while a viewer's socket holds more than this unsent, its events are dropped (and
 * counted): `viewerBufferBytes` in CREEK_EDGE_LIMITS.
 */
export const EVENT_BUFFER_BYTES = 1 << 20;

/** Most viewers one replica serves at once; more are refused. */
export const MAX_VIEWERS = 16;

export const WatchSchema = z.object({
  t: z.literal('watch'),
  version: z.number().int(),
  /** The replica's admin token. */
  token: z.string().max(4096),
});
export type Watch = z.infer<typeof WatchSchema>;

const OpIdTextSchema = z.string().regex(/^r\d+#\d+$/, 'an op id is written r<replica>#<eventNo>');
const AtSchema = z.number();
const CountSchema = z.number().int().nonnegative();

/** An op reached this replica: invoked by one of its clients ('local'), or gossiped by a peer. */
export const OpEventSchema = z.object({
  e: z.literal('op'),
  at: AtSchema,
  id: OpIdTextSchema,
  op: z.string(),
  level: z.enum(['weak', 'strong']),
  ts: z.number(),
  origin: z.enum(['local', 'peer']),
});

/**
 * This replica answered one of its clients' ops: a tentative view from its speculative order, or
 * the stable one. `id` is null for a weak read-only op, answered from the replica's state and
 * never ordered.
 */
export const ResponseEventSchema = z.object({
  e: z.literal('response'),
  at: AtSchema,
  id: OpIdTextSchema.nullable(),
  level: z.enum(['tentative', 'stable']),
  ok: z.boolean(),
});

/** Ops became committed, in this order, from committed position `position` on (0 the first). */
export const CommitEventSchema = z.object({
  e: z.literal('commit'),
  at: AtSchema,
  position: CountSchema,
  ids: z.array(OpIdTextSchema),
});

/**
 * What the replica executed in one turn: executions (first ones and re-executions), rollbacks of
 * executions a reorder invalidated, and commits that reordered the tentative list.
 */
export const ExecutionEventSchema = z.object({
  e: z.literal('execution'),
  at: AtSchema,
  executions: CountSchema,
  rollbacks: CountSchema,
  reorderingCommits: CountSchema,
});

/** Multi-Paxos as this replica sees it, sent when any of it changed. */
export const PaxosEventSchema = z.object({
  e: z.literal('paxos'),
  at: AtSchema,
  role: z.enum(['follower', 'candidate', 'leader']),
  ballot: z.number(),
  leader: z.number().int().nullable(),
  /** It hears a majority. */
  quorate: z.boolean(),
  /** Instances below this are decided here. */
  decidedBelow: CountSchema,
  /** Counters since the replica started: instances it proposed, instances decided, elections. */
  proposed: CountSchema,
  decided: CountSchema,
  elections: CountSchema,
});

/** Gossip this replica sent one peer in one turn, by message kind, and the Reqs the pushes carried. */
export const GossipEventSchema = z.object({
  e: z.literal('gossip'),
  at: AtSchema,
  peer: z.number().int(),
  pushes: CountSchema,
  pulls: CountSchema,
  summaries: CountSchema,
  reqs: CountSchema,
});

/**
 * Its links to its peers, sent when one changed: connecting, connected or down, whether an
 * operator blocked it (`/admin/block`: messages dropped in that direction), and the delay an
 * operator added to its messages on it (`/admin/delay`, e.g. a network profile's wide-area link).
 */
export const LinksEventSchema = z.object({
  e: z.literal('links'),
  at: AtSchema,
  peers: z.array(
    z.object({
      id: z.number().int(),
      state: z.enum(['connecting', 'connected', 'down']),
      blockedIn: z.boolean(),
      blockedOut: z.boolean(),
      /**
       * The one-way delay (ms) added to each message it sends this peer; the link's own latency
       * is not counted. Absent from replicas that predate it.
       */
      delayMs: z.number().nonnegative().optional(),
    }),
  ),
});

/** It wrote a checkpoint (`count`: how many since it started). */
export const CheckpointEventSchema = z.object({
  e: z.literal('checkpoint'),
  at: AtSchema,
  count: CountSchema,
});

/**
 * Every half second: its lists, the digest of its state (equal on replicas that converged), and
 * the conditions that make it take no ops or answer late.
 */
export const StatusEventSchema = z.object({
  e: z.literal('status'),
  at: AtSchema,
  committed: CountSchema,
  tentative: CountSchema,
  digest: z.string(),
  paused: z.boolean(),
  learning: z.boolean(),
  halted: z.string().nullable(),
  /** Ops a peer holds that it lacks, and whether it holds speculation until it caught up. */
  behind: CountSchema,
  holding: z.boolean(),
  /**
   * Counts since the replica started, of which a viewer takes differences: ops finalized and the
   * executions they took (the execution ratio), ops answered tentatively and those whose tentative
   * answer equalled the stable one (speculation accuracy), and rollbacks.
   */
  counts: SpeculationCountsSchema.optional(),
  /**
   * Per op name, the same two counts of tentative answers (HostStatus.metrics.byOp), for the
   * STATUS_EVENT_OPS ops with the most tentative answers.
   */
  byOp: z
    .record(z.string(), z.object({ speculated: CountSchema, speculatedCorrectly: CountSchema }))
    .optional(),
});

/** How many ops a status event's `byOp` names at most: the event goes out every turn. */
export const STATUS_EVENT_OPS = 8;

/** Events this viewer was not sent (sampled out, or its socket was full) since the last report. */
export const DroppedEventSchema = z.object({
  e: z.literal('dropped'),
  at: AtSchema,
  count: CountSchema,
});

export const ReplicaEventSchema = z.discriminatedUnion('e', [
  OpEventSchema,
  ResponseEventSchema,
  CommitEventSchema,
  ExecutionEventSchema,
  PaxosEventSchema,
  GossipEventSchema,
  LinksEventSchema,
  CheckpointEventSchema,
  StatusEventSchema,
  DroppedEventSchema,
]);
export type ReplicaEvent = z.infer<typeof ReplicaEventSchema>;

export const EventsHelloSchema = z.object({
  t: z.literal('hello'),
  version: z.number().int(),
  replica: z.number().int(),
  cluster: z.string().nullable(),
  /** Every replica's id, this one included. */
  replicas: z.array(z.number().int()),
});

export const EventsBatchSchema = z.object({
  t: z.literal('events'),
  events: z.array(ReplicaEventSchema),
});

/** Why the replica closes the stream (then it closes the socket). */
export const EventsErrorSchema = z.object({
  t: z.literal('error'),
  message: z.string(),
});

export const EventsFrameSchema = z.discriminatedUnion('t', [
  EventsHelloSchema,
  EventsBatchSchema,
  EventsErrorSchema,
]);
export type EventsFrame = z.infer<typeof EventsFrameSchema>;
