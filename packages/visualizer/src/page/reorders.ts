/**
 * Reorders as a viewer sees them: a replica's order is its committed ops followed by its tentative
 * ones, and between two looks an op was reordered when it now stands ahead of an op it used to
 * follow, or arrived (an op with an earlier timestamp gossiped late, a strong op committed ahead
 * of weak ones) ahead of an op already listed. Those are the ops drawn as moved.
 *
 * Only the ends of the lists are looked at (the last committed ops, the first tentative ones): an
 * op coming into view from further back comes in behind those already shown and is not a reorder.
 */
export function jumpedAhead(before: readonly string[], after: readonly string[]): Set<string> {
  const was = new Map(before.map((id, k) => [id, k]));
  const moved = new Set<string>();
  for (let i = 0; i < after.length; i++) {
    const y = after[i]!;
    const wy = was.get(y);
    for (let j = i + 1; j < after.length; j++) {
      const wx = was.get(after[j]!);
      if (wx !== undefined && (wy === undefined || wy > wx)) {
        moved.add(y);
        break;
      }
    }
  }
  return moved;
}

/** How long a live reorder stays marked (ms). */
export const MOVED_MS = 1_500;

/** Live mode's reorders: each replica's order at the last look, and when each op last moved. */
export class RecentReorders {
  private readonly last = new Map<number, readonly string[]>();
  private readonly movedAt = new Map<string, number>();

  /** Takes a replica's order now; returns its ops that moved in the last MOVED_MS. */
  see(replica: number, order: readonly string[], now = performance.now()): Set<string> {
    const before = this.last.get(replica);
    this.last.set(replica, order);
    if (before !== undefined)
      for (const id of jumpedAhead(before, order)) this.movedAt.set(`${replica}/${id}`, now);
    const out = new Set<string>();
    for (const id of order) {
      const at = this.movedAt.get(`${replica}/${id}`);
      if (at !== undefined && now - at < MOVED_MS) out.add(id);
    }
    for (const [k, at] of this.movedAt) if (now - at >= MOVED_MS) this.movedAt.delete(k);
    return out;
  }
}
