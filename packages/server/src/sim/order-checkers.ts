import { formatOpId, opKey, sameOpId, type OpId } from '@creek/replica/core/op-id.js';
import { allCommitLists, longestCommitted, type RunRecord } from './run-record.js';

/**
 * (a) The committed lists of all replicas are prefixes of one another: the lists on their disks.
 * What a replica committed in memory and lost in a crash is not held to it: a replica decides on
 * its own vote as it casts it (MultiPaxos, in place), before that vote is durable, and a crash
 * then loses the vote with all it led to, none of which left the replica (messages and responses
 * wait for durability). Paxos may then choose another value there, since that vote never counted.
 */
export function checkCommittedPrefixes(record: RunRecord): string[] {
  const lists = allCommitLists(record).map((l) => ({ whose: l.whose, list: l.commits.flat() }));
  const longest = lists.reduce<OpId[]>((a, b) => (b.list.length > a.length ? b.list : a), []);
  const out: string[] = [];
  for (const { whose, list } of lists) {
    const diverged = list.findIndex((id, i) => !sameOpId(id, longest[i]!));
    if (diverged >= 0) {
      out.push(
        `(a) ${whose} committed ${formatOpId(list[diverged]!)} at position ${diverged}, another replica ${formatOpId(longest[diverged]!)}`,
      );
      continue;
    }
    const seen = new Set<string>();
    for (const id of list) {
      if (seen.has(opKey(id))) out.push(`(a) ${whose} committed ${formatOpId(id)} twice`);
      seen.add(opKey(id));
    }
  }
  return out;
}

/**
 * (d) Each replica's invocation order is kept in the committed order, and every weak op stabilized
 * by a strong op precedes it (is in its causal context, committed just before it).
 */
export function checkProgramOrder(record: RunRecord): string[] {
  const out: string[] = [];
  const list = longestCommitted(record);
  const lastOfOrigin = new Map<number, number>();
  for (const id of list) {
    const prev = lastOfOrigin.get(id.replica) ?? 0;
    if (id.eventNo <= prev) {
      out.push(
        `(d) ${formatOpId(id)} committed after r${id.replica}#${prev}, which its replica invoked later`,
      );
    }
    lastOfOrigin.set(id.replica, Math.max(prev, id.eventNo));
  }
  for (const { whose, commits: groups } of allCommitLists(record)) {
    for (const group of groups) {
      const strong = group[group.length - 1]!;
      const req = record.reqs.get(opKey(strong));
      if (req === undefined || !req.strong || req.causalCtx === null) {
        out.push(
          `(d) ${whose}: commit record ends with ${formatOpId(strong)}, which is not a strong op`,
        );
        continue;
      }
      for (const id of group.slice(0, -1)) {
        const w = record.reqs.get(opKey(id));
        if (w?.strong !== false)
          out.push(
            `(d) ${whose}: ${formatOpId(id)} stabilized with ${formatOpId(strong)} but is not a weak op`,
          );
        else if (!req.causalCtx.has(id))
          out.push(
            `(d) ${whose}: ${formatOpId(id)} stabilized by ${formatOpId(strong)} outside its causal context`,
          );
      }
    }
  }
  return out;
}
