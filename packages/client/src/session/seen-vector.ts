import { seenOnWire, type SeenOnWire } from '@creek/protocol';

/**
 * What a session has seen, per origin replica: how many of its ops (views, confirmations and the
 * welcome say what their replica had). The session presents the most it has seen when it
 * reconnects, and a replica welcomes it only once it has all of it (read-your-writes and monotonic
 * reads across replicas). A view's own id is not counted: the session's own ops that are not
 * committed are resubmitted when it moves, so no replica needs to have them first; once one is
 * committed, the replica's confirmation or stable view says what it had then.
 */
export class SeenVector {
  /** Indexed by origin, sparse above the first incarnations' (@creek/protocol seen.ts). */
  private readonly vector: number[] = [];

  /** Keeps the most of what it saw and `seen` (a seen vector as seenFromWire reads one). */
  see(seen: readonly number[] | undefined): void {
    seen?.forEach((n, origin) => (this.vector[origin] = Math.max(this.vector[origin] ?? 0, n)));
  }

  /** The counts, per origin (empty while it has seen nothing; sparse above 255). */
  counts(): readonly number[] {
    return this.vector;
  }

  /** For a hello: the vector's wire fields, or nothing while it has seen nothing. */
  hello(): SeenOnWire {
    return this.vector.some((n) => n > 0) ? seenOnWire(this.vector) : {};
  }
}
