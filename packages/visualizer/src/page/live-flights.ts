import type { ReplicaEvent } from '@creek/protocol';
import type { GraphMessage } from './graph.js';

/** How long a message takes to cross the graph (ms): loopback is instant, the eye is not. */
export const FLIGHT_MS = 500;
/** The most dots on their way at once: beyond it the oldest go first. */
export const MAX_FLIGHTS = 120;

interface Flight {
  readonly from: number;
  readonly to: number;
  readonly kind: string;
  readonly start: number;
}

/**
 * The messages a live cluster's streams report sending, as dots on their way. A replica reports
 * its gossip to each peer once a turn (GossipEvent: pushes, pulls, summaries), so each kind sent
 * in a turn is one dot; a Paxos event whose count of proposed instances grew is the leader sending
 * its proposals, one dot to each peer. The streams are sampled under load, and so are the dots.
 */
export class Flights {
  private flights: Flight[] = [];
  private readonly proposed = new Map<number, number>();

  /** Takes one event of replica `from`'s stream, seen at `now` (ms); `peers`: its peers' ids. */
  add(from: number, e: ReplicaEvent, peers: readonly number[], now: number): void {
    if (e.e === 'gossip') {
      if (e.pushes > 0) this.push(from, e.peer, 'gossip push', now);
      if (e.pulls > 0) this.push(from, e.peer, 'gossip pull', now);
      if (e.summaries > 0) this.push(from, e.peer, 'gossip summary', now);
    } else if (e.e === 'paxos') {
      const before = this.proposed.get(from);
      this.proposed.set(from, e.proposed);
      if (before !== undefined && e.proposed > before && e.role === 'leader')
        for (const to of peers) this.push(from, to, 'paxos accept', now);
    }
  }

  /** The dots on their way at `now`, each where it has got to. */
  current(now: number): GraphMessage[] {
    this.flights = this.flights.filter((f) => now - f.start < FLIGHT_MS);
    return this.flights.map((f) => ({
      from: f.from,
      to: f.to,
      kind: f.kind,
      progress: Math.max(0, (now - f.start) / FLIGHT_MS),
    }));
  }

  private push(from: number, to: number, kind: string, now: number): void {
    if (from === to) return;
    this.flights.push({ from, to, kind, start: now });
    if (this.flights.length > MAX_FLIGHTS)
      this.flights.splice(0, this.flights.length - MAX_FLIGHTS);
  }
}
