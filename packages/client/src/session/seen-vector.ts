/**
 * What a session has seen, per origin replica: how many of its ops (views, confirmations and the
 * welcome say what their replica had). The session presents the most it has seen when it
 * reconnects, and a replica welcomes it only once it has all of it (read-your-writes and monotonic
 * reads across replicas). A view's own id is not counted: the session's own ops that are not
 * committed are resubmitted when it moves, so no replica needs to have them first; once one is
 * committed, the replica's confirmation or stable view says what it had then.
 */
export class SeenVector {
  private readonly vector: number[] = [];

  /** Keeps the most of what it saw and `seen`. */
  see(seen: readonly number[] | undefined): void {
    if (seen === undefined) return;
    for (let i = 0; i < seen.length; i++) this.vector[i] = Math.max(this.vector[i] ?? 0, seen[i]!);
  }

  /** The counts, per origin replica (empty while it has seen nothing). */
  counts(): readonly number[] {
    return this.vector;
  }

  /** For a hello: the vector, or nothing while it has seen nothing. */
  hello(): { seen?: number[] } {
    return this.vector.some((n) => n > 0) ? { seen: [...this.vector] } : {};
  }
}
