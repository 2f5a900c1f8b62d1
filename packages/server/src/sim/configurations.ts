import type { RunRecord } from './run-record.js';

/** A stretch of the run and the configurations any replica may have had in force during it. */
export interface ConfigurationPeriod {
  readonly from: number;
  /** Exclusive; Infinity for the last one. */
  readonly to: number;
  /** One while the membership is settled; during a change, the one before it and those it made. */
  readonly configs: readonly (readonly number[])[];
}

/**
 * The configurations in force over the run (RunRecord.memberships): settled stretches with one,
 * and changes in progress with every configuration a replica may have had in force then. A change
 * is in force at each replica from the moment that replica applies it, which may come long before
 * the operator hears it was decided, and long after: so throughout a change (from when it was
 * asked until every live member had it in force) the configuration before it and each one decided
 * during it count, and the one it settled at.
 */
export function configurationTimeline(record: RunRecord): ConfigurationPeriod[] {
  const out: ConfigurationPeriod[] = [];
  const entries = record.memberships;
  let settled: readonly number[] = [];
  for (let i = 0; i < entries.length;) {
    const e = entries[i]!;
    if (e.members !== null) {
      const to = entries[i + 1]?.at ?? Number.POSITIVE_INFINITY;
      if (to > e.at) out.push({ from: e.at, to, configs: [e.members] });
      settled = e.members;
      i++;
      continue;
    }
    // A change in progress: the null entries up to the next settled one.
    const configs: (readonly number[])[] = [settled];
    let j = i;
    for (; j < entries.length && entries[j]!.members === null; j++) {
      const decided = entries[j]!.decided;
      if (decided !== undefined) configs.push(decided);
    }
    const next = entries[j];
    if (next?.members) configs.push(next.members);
    out.push({ from: e.at, to: next?.at ?? Number.POSITIVE_INFINITY, configs: distinct(configs) });
    i = j;
  }
  return out;
}

/**
 * Whether `group` (replicas cut off from the others) is short of a majority of every
 * configuration a replica may have in force at any instant of [from, to]: then it can commit
 * nothing there, under any of them.
 */
export function minorityThroughout(
  timeline: readonly ConfigurationPeriod[],
  group: readonly number[],
  from: number,
  to: number,
): boolean {
  return timeline.every(
    (p) => p.to <= from || p.from > to || p.configs.every((c) => !isMajorityOf(group, c)),
  );
}

export function isMajorityOf(group: readonly number[], config: readonly number[]): boolean {
  return group.filter((r) => config.includes(r)).length >= Math.floor(config.length / 2) + 1;
}

function distinct(configs: readonly (readonly number[])[]): (readonly number[])[] {
  const seen = new Map<string, readonly number[]>();
  for (const c of configs) seen.set([...c].sort((a, b) => a - b).join(), c);
  return [...seen.values()];
}
