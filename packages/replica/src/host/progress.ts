// Why a replica makes no progress by itself: what it waits for, and from which peers (protocol's
// WaitingSchema), so an operator reads it in /status, /ready and the log instead of guessing. The
// host observes it on every tick (ProgressWatch keeps when each wait began).
import type { Waiting } from '@creek/protocol';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { HostParts } from './parts.js';

/** A wait without its start (ProgressWatch adds it). */
export type Wait = Omit<Waiting, 'since'>;

/** What the host knows of itself that its parts do not say. */
export interface ProgressFacts {
  readonly halted: string | null;
  readonly leaving: boolean;
  /** The state transfer it pulls (Transfers.pulling), or null. */
  readonly pulling: {
    readonly peer: number;
    readonly received: number;
    readonly total: number | null;
  } | null;
}

/** "replica 1", "replicas 0 and 1", "replicas 0, 1 and 3". */
export function replicaList(ids: readonly number[]): string {
  if (ids.length === 1) return `replica ${ids[0]}`;
  return `replicas ${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`;
}

/**
 * When a majority of the members lost their votes: a leader needs their promises and accepts,
 * and they give none until they have learned what only such a leader can decide.
 */
const MAJORITY_LOST =
  'If a majority of the members lost their data directories, no leader can be elected again ' +
  'and the cluster cannot recover by itself: see the runbook (a majority lost).';

/**
 * What the replica waits for now, or null while it makes progress by itself (or halted, or was
 * removed: `halted` and `leaving` say so). The first that holds, in the order the replica gets
 * past them: a checkpoint it pulls, its peers' summaries, the Paxos rejoin, then a leader.
 */
export function waitingFor(parts: HostParts, facts: ProgressFacts): Wait | null {
  if (facts.halted !== null || facts.leaving) return null;
  const pull = facts.pulling;
  if (pull !== null)
    return {
      for: 'checkpoint',
      peers: [pull.peer],
      reason:
        `it rebuilds itself from a checkpoint of replica ${pull.peer} (state transfer: ` +
        `${pull.received} of ${pull.total ?? '?'} chunks so far) and takes part in nothing else ` +
        `meanwhile; it asks another peer if replica ${pull.peer} refuses (a peer that is itself ` +
        `learning has no state to give) or stays silent.`,
    };
  const { gossip, paxos, replica } = parts;
  if (replica.id === ORIGIN_UNDECIDED) {
    const awaited = gossip.summariesAwaited();
    if (awaited.length > 0)
      return {
        for: 'peer-summaries',
        peers: awaited,
        reason:
          `it has no op of its own on disk (a new or emptied data directory) and waits for a ` +
          `summary from ${replicaList(awaited)}: a peer that is down may hold ops of its past, ` +
          `and it numbers no op before it knows them all. Start the missing replicas, or remove ` +
          `them from the cluster (creek member remove).`,
      };
  }
  const p = paxos.progress();
  const status = paxos.status();
  // Members that say they cannot lead (rejoining after losing their votes, or hearing no
  // majority) vote for nothing either, in the first case; nor do members it does not hear.
  const idle = p.heard.filter((id) => p.notQuorate.includes(id));
  const absent = p.members.filter((id) => !p.heard.includes(id));
  const voters = p.heard.length - idle.length + (p.member && p.rejoin === null ? 1 : 0);
  const votesLost =
    voters < p.majority
      ? ` Only ${voters} of the ${p.members.length + (p.member ? 1 : 0)} members can vote now, ` +
        `fewer than the ${p.majority} a decision needs: ` +
        [
          ...(idle.length === 0
            ? []
            : [
                `${replicaList(idle)} cannot (a replica that lost its votes rejoins first, ` +
                  `and one that hears no majority takes no part)`,
              ]),
          ...(absent.length === 0
            ? []
            : [`${replicaList(absent)} ${absent.length === 1 ? 'is' : 'are'} not heard`]),
        ].join('; ') +
        `. ${MAJORITY_LOST}`
      : null;
  const rejoin = p.rejoin;
  if (rejoin !== null) {
    if (rejoin.unheard.length > 0)
      return {
        for: 'paxos-rejoin',
        peers: [...rejoin.unheard],
        reason:
          `it lost its votes (an emptied data directory) and rejoins consensus: it waits for a ` +
          `heartbeat from ${replicaList(rejoin.unheard)}, to learn what they promised and ` +
          `accepted, before it may promise or vote. Start the missing replicas.`,
      };
    if (rejoin.decidedBelow < rejoin.knownBelow) {
      const at = rejoin.knownAt.length > 0 ? rejoin.knownAt : p.heard;
      const then =
        votesLost ??
        (status.leader === null
          ? ' No leader decides them yet: an election is under way.'
          : ` Replica ${status.leader} leads and decides them.`);
      return {
        for: 'paxos-rejoin',
        peers: [...new Set([...at, ...(votesLost === null ? [] : idle)])].sort((a, b) => a - b),
        reason:
          `it lost its votes (an emptied data directory) and rejoins consensus: it must learn ` +
          `instances ${rejoin.decidedBelow} to ${rejoin.knownBelow - 1}, which ` +
          `${replicaList(at)} accepted, before it may promise or vote.${then}`,
      };
    }
  }
  if (!status.quorate)
    return {
      for: 'quorum',
      peers: absent,
      reason:
        `it hears no majority of the members: nothing from ${replicaList(absent)}, so nothing ` +
        `can be decided through it. Start the missing replicas or mend the network between them.`,
    };
  if (votesLost !== null)
    return {
      for: 'votes',
      peers: [...idle, ...absent].sort((a, b) => a - b),
      reason:
        (status.role === 'leader'
          ? 'it leads, but nothing commits: the ops it takes stay tentative.'
          : status.leader !== null
            ? `replica ${status.leader} leads, but nothing commits: ops stay tentative.`
            : 'nothing commits: no leader can be elected, nor decide anything.') + votesLost,
    };
  if (status.leader !== null) return null;
  if (p.promisedBy !== null) {
    const missing = p.members.filter((id) => !p.promisedBy!.includes(id));
    return {
      for: 'promises',
      peers: missing,
      reason: `it runs for leader and waits for promises from ${replicaList(missing)}.`,
    };
  }
  return {
    for: 'leader',
    peers: [],
    reason:
      'it hears a majority but knows no leader yet: an election is under way (the lowest-' +
      'numbered member that hears a majority runs).',
  };
}

/** The wait in force, with when it began: a wait for the same thing from the same peers goes on. */
export class ProgressWatch {
  private wait: Waiting | null = null;

  /** What the replica waits for now (ms: the host's clock). */
  observe(next: Wait | null, now: number): void {
    const was = this.wait;
    if (next === null) this.wait = null;
    else if (was !== null && was.for === next.for && samePeers(was.peers, next.peers))
      this.wait = { ...next, since: was.since };
    else this.wait = { ...next, since: now };
  }

  get current(): Waiting | null {
    return this.wait;
  }
}

function samePeers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
