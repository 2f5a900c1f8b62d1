import type { Response } from '@creek/replica/core/types.js';
import type { SimProcess } from './process.js';

/** What the clients of an 'sdk' run did besides their ops (SimStats.sessions). */
export interface SessionStats {
  /** Connections the sessions opened, and how many of those were to a replica other than the last. */
  connections: number;
  failovers: number;
  /** Links reset under an open connection (a network fault between a client and its replica). */
  resets: number;
  /** Ops whose caller stopped waiting (a timeout), and live queries' results the clients got. */
  timeouts: number;
  watchViews: number;
  /** Context tokens sessions handed to new clients (SimConfig.contexts), absent without them. */
  handoffs?: number;
  /** Of those, the ones a running client took (`client.after`). */
  afterCalls?: number;
  /** Ops invoked in the shared context (SimConfig.sharedContexts), and those it acknowledged. */
  contextOps?: number;
  contextAcks?: number;
}

/**
 * The clients of a run as the rest of the simulator sees them (SimConfig.clients): the model's
 * (sim/clients.ts) or real client sessions ('sdk', sim/sdk-clients.ts). The cluster tells them
 * what happens to the replicas and hands them the responses their hosts release; the run loop
 * asks whether they are done; the end of the run asks what they saw.
 */
export interface SimClientSide {
  /** The mean time between two arrivals of ops from a replica's clients. */
  readonly meanGap: number;
  /** The clients of `h` start to invoke, the first op at `firstAt`. */
  start(h: SimProcess, firstAt: number): void;
  /** `p` runs a new host (spawned, or restarted). */
  started(p: SimProcess): void;
  /** A response `p`'s host released (its records are durable), for the client that waits for it. */
  respond(p: SimProcess, o: Response): void;
  /** `p` crashed: the clients waiting on it are gone from it. */
  crashed(p: SimProcess): void;
  /** `p`'s removal is in force: it takes no client op, and its clients take theirs elsewhere. */
  departed(p: SimProcess): void;
  /** After each event of the run, as a runtime after each turn. */
  afterEvent(): void;
  /** Nothing of the clients' is left to happen (quiescence, besides their ops' answers). */
  settled(): boolean;
  /** What the clients still wait for, in words, for a run that did not settle ('' for none). */
  unsettled(): string;
  /** What the clients saw that breaks a guarantee (at the end of the run, with the finals in). */
  check(quiescent: boolean): string[];
  /** What the clients did besides their ops, or null for the model's. */
  stats(): SessionStats | null;
}
