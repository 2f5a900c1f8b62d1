import type { Logger } from 'pino';

/**
 * What a connection did wrong, one counter each per endpoint (/status `clients.violations` and
 * `network.violations`; Prometheus `creek_edge_violations_total{endpoint,kind}`).
 */
export const VIOLATION_KINDS = [
  /** ws refused a frame: bad opcode, reserved bits, bad fragmentation, unmasked (close 1002). */
  'protocol',
  /** A text frame of invalid UTF-8 (close 1007). */
  'invalidPayload',
  /** A frame over maxPayload, or before authentication over the small limit (close 1009). */
  'tooBig',
  /** A frame that is not a valid protocol frame (an error frame; before peer auth, close 1008). */
  'badFrame',
  /** A valid frame the connection's state does not allow (invoke before hello, a second hello). */
  'outOfOrder',
  /** A wrong or missing token, a forged or replayed HMAC answer (close 1008). */
  'auth',
  /** No accepted hello or auth answer before the deadline (close 1008). */
  'helloDeadline',
  /** More frames before authentication than allowed (close 1008). */
  'flood',
  /** Refused before the handshake: too many unauthenticated connections (HTTP 503). */
  'overCap',
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];
export type Violations = Record<ViolationKind, number>;

export function newViolations(): Violations {
  return Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])) as Violations;
}

/** One endpoint of a replica as the connection guard sees it: its name and its counters. */
export interface EdgeEndpoint {
  readonly name: 'client' | 'peer' | 'events';
  readonly violations: Violations;
}

/**
 * Counts violations and logs each kind at most once per interval per endpoint, with how many it
 * did not log since: a flood of bad connections must not become a flood of log lines.
 */
export class ViolationLog {
  private readonly last = new Map<string, { at: number; unlogged: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  record(
    endpoint: EdgeEndpoint,
    kind: ViolationKind,
    fields: Record<string, unknown>,
    message: string,
  ): void {
    endpoint.violations[kind]++;
    const key = `${endpoint.name}:${kind}`;
    const now = Date.now();
    const entry = this.last.get(key);
    if (entry !== undefined && now - entry.at < this.intervalMs) {
      entry.unlogged++;
      return;
    }
    this.log.warn(
      { endpoint: endpoint.name, kind, ...fields, unloggedSinceLast: entry?.unlogged ?? 0 },
      message,
    );
    this.last.set(key, { at: now, unlogged: 0 });
  }
}
