import { EVENT_BUFFER_BYTES, MAX_EVENTS_PER_SECOND } from '@creek/protocol';
import { z } from 'zod';

/**
 * What a replica grants a connection before it has proved anything (a client's hello with a valid
 * token, a peer's answer to the HMAC challenge), and how long HTTP may take to ask for an upgrade.
 * Authenticated connections get the protocol's limits instead (MAX_FRAME_BYTES,
 * MAX_IN_FLIGHT_PER_CONNECTION in @creek/protocol).
 */
export interface EdgeLimits {
  /** From the WebSocket handshake to a client's accepted hello, or a peer's accepted auth answer. */
  readonly helloDeadlineMs: number;
  /** The largest frame (message) a connection may send before it is authenticated. */
  readonly preAuthFrameBytes: number;
  /** All bytes a connection may send before it is authenticated, frame headers included. */
  readonly preAuthBytes: number;
  /** Frames (data and pings) a connection may send before it is authenticated. */
  readonly preAuthFrames: number;
  /** Unauthenticated connections from one remote address at a time. */
  readonly unauthenticatedPerAddress: number;
  /** Unauthenticated connections at a time, all addresses together. */
  readonly unauthenticatedTotal: number;
  /** Node's `server.headersTimeout`: the whole request head (an upgrade is only a head). */
  readonly headersTimeoutMs: number;
  /** Node's `server.requestTimeout`: a whole HTTP request. */
  readonly requestTimeoutMs: number;
  /** How often Node checks the two above (`server.connectionsCheckingInterval`). */
  readonly httpCheckIntervalMs: number;
  /** How long a connection the replica closed may take to answer the close before it is cut. */
  readonly closeGraceMs: number;
  /** A peer URL's WebSocket handshake (dialing side) before the dial is given up and retried. */
  readonly dialHandshakeMs: number;
  /** One log line per kind of violation and endpoint per this interval; the rest are counted. */
  readonly violationLogIntervalMs: number;
  /** Events one viewer of /events is sent per second at most; the rest are counted as dropped. */
  readonly viewerEventsPerSecond: number;
  /** While a viewer's socket holds more than this unsent, it is sent nothing (counted as dropped). */
  readonly viewerBufferBytes: number;
}

export const DEFAULT_EDGE_LIMITS: EdgeLimits = {
  // A hello (or an auth answer) is the client's first frame, one round trip after the handshake:
  // 5 s covers a slow mobile link and a busy replica, and an idle socket holds a slot no longer.
  helloDeadlineMs: 5_000,
  // A hello is a token, a session id and a `seen` count per replica (at most 256): ~3 KiB at the
  // very most; an auth answer is ~100 bytes. 16 KiB leaves room and buffers little per socket.
  preAuthFrameBytes: 16 << 10,
  // Four such frames: ws buffers a frame whose header claims up to maxPayload (4 MiB on /client),
  // so without this an unauthenticated socket could make the replica hold megabytes.
  preAuthBytes: 64 << 10,
  // A client sends one hello (and may retry after a version error); a peer one auth. 32 frames
  // leave room for pings, and stop a flood of small frames that each cost an error frame.
  preAuthFrames: 32,
  // Clients behind one NAT or proxy connect at once after a replica restarts; each is
  // unauthenticated for one round trip only, so 64 at a time per address is ample for them.
  unauthenticatedPerAddress: 64,
  // A replica's file descriptors and memory for sockets that proved nothing: ~1024 sockets of a
  // few KiB each stay far below a default ulimit (1024 is the soft limit on many systems, but
  // authenticated ones are not counted here).
  unauthenticatedTotal: 1_024,
  // Node's default is 60 s: a client trickling its upgrade request one header at a time
  // (slowloris) held a socket that long. A real upgrade request arrives in one packet.
  headersTimeoutMs: 10_000,
  // Node's default is 300 s; replicas serve only small GETs and POSTs (probes, /status, /admin).
  requestTimeoutMs: 30_000,
  // Node's default is 30 s, which let a request live up to 30 s past the timeouts above.
  httpCheckIntervalMs: 1_000,
  // ws waits 30 s for the other side's close frame; a hostile client never sends it.
  closeGraceMs: 1_000,
  // Something that accepts TCP on a peer URL but never answers the upgrade would hold the dial
  // forever (ws has no default); a replica answers within milliseconds.
  dialHandshakeMs: 5_000,
  // A flood of bad connections is one log line a minute per kind, with the count of the rest.
  violationLogIntervalMs: 60_000,
  // A view redraws a few times a second; 5,000 events a second is more than it can show, and a
  // viewer of a loaded replica costs it at most that many small JSON objects a second.
  viewerEventsPerSecond: MAX_EVENTS_PER_SECOND,
  // A second of events at that rate, about: a viewer that stops reading holds no more than this.
  viewerBufferBytes: EVENT_BUFFER_BYTES,
};

/** Environment variable holding a JSON object of EdgeLimits fields that override the defaults. */
export const EDGE_LIMITS_ENV = 'CREEK_EDGE_LIMITS';

const positiveInt = z.number().int().positive();
const EdgeLimitsSchema = z
  .object({
    helloDeadlineMs: positiveInt,
    preAuthFrameBytes: positiveInt,
    preAuthBytes: positiveInt,
    preAuthFrames: positiveInt,
    unauthenticatedPerAddress: positiveInt,
    unauthenticatedTotal: positiveInt,
    headersTimeoutMs: positiveInt,
    requestTimeoutMs: positiveInt,
    httpCheckIntervalMs: positiveInt,
    closeGraceMs: positiveInt,
    dialHandshakeMs: positiveInt,
    violationLogIntervalMs: positiveInt,
    viewerEventsPerSecond: positiveInt,
    viewerBufferBytes: positiveInt,
  })
  .partial()
  .strict();

/** The defaults with `overrides` applied. */
export function edgeLimits(overrides: Partial<EdgeLimits> = {}): EdgeLimits {
  return { ...DEFAULT_EDGE_LIMITS, ...overrides };
}

/**
 * Overrides from CREEK_EDGE_LIMITS (tests shorten the hello deadline; an operator may raise a cap),
 * e.g. `{"helloDeadlineMs":1000}`. Throws naming the variable and the bad field.
 */
export function edgeLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<EdgeLimits> {
  const text = env[EDGE_LIMITS_ENV];
  if (text === undefined || text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${EDGE_LIMITS_ENV} must be a JSON object, e.g. {"helloDeadlineMs":5000}`);
  }
  const parsed = EdgeLimitsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : ` ${issue.path.map(String).join('.')}`;
    throw new Error(
      `${EDGE_LIMITS_ENV}${where}: ${issue?.message ?? 'invalid'} (fields: ${Object.keys(DEFAULT_EDGE_LIMITS).join(', ')}; each a positive whole number)`,
    );
  }
  return parsed.data as Partial<EdgeLimits>;
}
