import { describe } from './checked-ops.js';
import {
  configurationTimeline,
  isMajorityOf,
  minorityThroughout,
  type ConfigurationPeriod,
} from './configurations.js';
import type { RunRecord } from './run-record.js';

/**
 * Availability in a minority partition: weak ops still get their tentative response, strong ops a
 * tentative one but no stable one until the partition heals (no majority, no consensus). Without
 * speculation (SMR) the other way round: an op answers only once committed, which a minority
 * cannot do, so no op invoked there may get any response before the heal (a weak read-only op
 * reads the committed state there, and may).
 *
 * A group is a minority while its replicas are short of a majority of every configuration a
 * replica may have in force then (configurations.ts): a change of membership during the split
 * changes which groups are minorities, and while one is in progress both configurations count.
 * An op is held to its group's minority from its invocation to its answer. A split ends, for this
 * checker, when it heals or when a replica started during it (a new member, in none of its
 * groups) links the groups.
 *
 * A replica cut off in the middle of a catch-up holds speculation until it sees the catch-up has
 * stalled (ReplicaHost.holdSpeculationWhileBehind): an op it takes while it holds may go
 * unanswered until the heal, but the hold must end within `holdBoundMs` of the group's becoming
 * a minority.
 *
 * A tentative answer also waits for the executions of every entry before its op in the list: after
 * a reorder (a batch of commits that moves ops ahead of those it had executed), a replica may have
 * hundreds to redo, one after another, before it reaches an op it took meanwhile. On a WAN profile
 * commits come late and in large batches, and the work can outlast a short split. Such an op is
 * excused while its replica keeps executing: a replica with an op unanswered that sits idle in a
 * minority (no execution of its list under way, RunRecord.executing) is what this checker catches.
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
  // From `margin` after its invocation (it may wait that long to be taken and executed) to
  // `margin` before the heal (its answer may wait that long for the disk), or at that last instant
  // for an op invoked closer to the heal.
  const executingUntilHeal = (replica: number, invokedAt: number, end: number): boolean =>
    coveredBy(
      record.executing.filter((e) => e.replica === replica),
      Math.min(invokedAt + margin, end - margin),
      end - margin,
    );
  const timeline = configurationTimeline(record);
  for (const cut of record.splits) {
    // Until a replica started during the split links its groups (RunRecord.splits).
    const split = {
      start: cut.start,
      end: Math.min(cut.end, cut.bridgedAt ?? Number.POSITIVE_INFINITY),
    };
    for (const group of cut.groups) {
      const minority = (from: number, to: number): boolean =>
        minorityThroughout(timeline, group, from, to);
      if (speculative)
        for (const [a, b] of minorityStretches(timeline, group, split.start, split.end))
          for (const h of record.holds) {
            if (!group.includes(h.replica) || h.start >= b || h.end <= a) continue;
            const heldInto = Math.min(h.end, b) - a;
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
        // Its first answer before the heal, if its group was a minority all the while.
        const answeredInMinority = (level?: 'stable') =>
          inv.responses.find(
            (r) =>
              r.at < split.end &&
              (level === undefined || r.level === level) &&
              minority(inv.invokedAt, r.at),
          );
        if (!speculative) {
          // (A weak read-only op is answered from the local committed state, off the list: no id.)
          if (inv.id !== null && answeredInMinority() !== undefined)
            out.push(
              `(partition) ${describe(inv)} got a response from a replica that does not speculate while it was in a minority`,
            );
          continue;
        }
        if ((inv.strong || inv.id !== null) && answeredInMinority('stable') !== undefined)
          out.push(
            `(partition) ${describe(inv)} got a stable response while its replica was in a minority`,
          );
        if (
          !inv.abandoned &&
          inv.invokedAt < split.end - margin &&
          !inv.responses.some((r) => r.at < split.end) &&
          !heldDuring(inv.replica, inv.invokedAt, split.end) &&
          !executingUntilHeal(inv.replica, inv.invokedAt, split.end) &&
          minority(inv.invokedAt, split.end)
        )
          out.push(
            `(partition) ${describe(inv)} got no tentative response while its replica was in a minority`,
          );
      }
    }
  }
  return out;
}

/** The stretches of [start, end) in which `group` is a minority throughout, merged. */
function minorityStretches(
  timeline: readonly ConfigurationPeriod[],
  group: readonly number[],
  start: number,
  end: number,
): [number, number][] {
  const out: [number, number][] = [];
  for (const p of timeline) {
    const from = Math.max(p.from, start);
    const to = Math.min(p.to, end);
    if (from >= to || !p.configs.every((c) => !isMajorityOf(group, c))) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last[1] === from) last[1] = to;
    else out.push([from, to]);
  }
  return out;
}

/** Whether `spans`, merged where they touch, cover every instant of [from, to]. */
function coveredBy(
  spans: readonly { readonly start: number; readonly end: number }[],
  from: number,
  to: number,
): boolean {
  let reached = from;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (s.end < reached) continue; // over before the instant still to cover
    if (s.start > reached) break; // a gap: nothing ran at `reached`
    reached = s.end;
    if (reached >= to) return true;
  }
  return false;
}
