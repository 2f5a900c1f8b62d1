import { describe } from './checked-ops.js';
import type { RunRecord } from './run-record.js';

/**
 * Availability in a minority partition: weak ops still get their tentative response, strong ops a
 * tentative one but no stable one until the partition heals (no majority, no consensus). Without
 * speculation (SMR) the other way round: an op answers only once committed, which a minority
 * cannot do, so no op invoked there may get any response before the heal (a weak read-only op
 * reads the committed state there, and may).
 *
 * A replica cut off in the middle of a catch-up holds speculation until it sees the catch-up has
 * stalled (ReplicaHost.holdSpeculationWhileBehind): an op it takes while it holds may go
 * unanswered until the heal, but the hold must end within `holdBoundMs` of the split.
 */
export function checkMinorityPartitions(
  record: RunRecord,
  speculative = true,
  holdBoundMs = Number.POSITIVE_INFINITY,
  diskWaitMs = 10,
): string[] {
  const out: string[] = [];
  // A response waits for the replica's disk; ops invoked just before a heal may answer after it.
  const margin = diskWaitMs;
  const heldDuring = (replica: number, from: number, to: number): boolean =>
    record.holds.some((h) => h.replica === replica && h.start < to && h.end > from);
  for (const split of record.splits) {
    // A minority of the configuration in force throughout the split; none is fixed while a
    // membership change is in progress, and such splits are left alone.
    const members = membersThroughout(record, split.start, split.end);
    if (members === null) continue;
    const majority = Math.floor(members.length / 2) + 1;
    for (const group of split.groups) {
      if (group.filter((r) => members.includes(r)).length >= majority) continue;
      if (speculative)
        for (const h of record.holds) {
          if (!group.includes(h.replica) || h.start >= split.end || h.end <= split.start) continue;
          const heldInto = Math.min(h.end, split.end) - split.start;
          if (heldInto > holdBoundMs)
            out.push(
              `(partition) replica ${h.replica} held speculation ${heldInto.toFixed(0)} ms into a minority partition (at most ${holdBoundMs.toFixed(0)}): its clients got no tentative answers`,
            );
        }
      for (const inv of record.invocations) {
        if (
          !group.includes(inv.replica) ||
          inv.invokedAt <= split.start ||
          inv.invokedAt >= split.end
        )
          continue;
        if (!speculative) {
          // (A weak read-only op is answered from the local committed state, off the list: no id.)
          if (inv.id !== null && inv.responses.some((r) => r.at < split.end))
            out.push(
              `(partition) ${describe(inv)} got a response from a replica that does not speculate while it was in a minority`,
            );
          continue;
        }
        if (inv.strong && inv.responses.some((r) => r.level === 'stable' && r.at < split.end)) {
          out.push(
            `(partition) ${describe(inv)} got a stable response while its replica was in a minority`,
          );
        }
        if (
          !inv.abandoned &&
          inv.invokedAt < split.end - margin &&
          !inv.responses.some((r) => r.at < split.end) &&
          !heldDuring(inv.replica, inv.invokedAt, split.end)
        ) {
          out.push(
            `(partition) ${describe(inv)} got no tentative response while its replica was in a minority`,
          );
        }
      }
    }
  }
  return out;
}

/** The members in force from `start` to `end` (RunRecord.memberships), or null if they changed. */
function membersThroughout(
  record: RunRecord,
  start: number,
  end: number,
): readonly number[] | null {
  let members: readonly number[] | null = null;
  for (const m of record.memberships) {
    if (m.at <= start) members = m.members;
    else if (m.at < end) return null;
  }
  return members;
}
