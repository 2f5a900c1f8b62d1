import type { DivergenceStatus, HostStatus, Waiting } from '@creek/protocol';
import { incarnationOf } from '../core/op-id.js';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { HostParts } from './parts.js';
import type { TransferCounters } from './transfers.js';

/** What the host knows of itself beyond its parts (ReplicaHost's getters and counters). */
export interface HostFacts {
  readonly id: number;
  readonly settled: boolean;
  readonly learning: boolean;
  readonly halted: string | null;
  /** What it waits for while it cannot make progress by itself (host/progress.ts), or null. */
  readonly waiting: Waiting | null;
  readonly leaving: boolean;
  readonly rebuilding: boolean;
  readonly counters: TransferCounters & { readonly pruned: number };
  readonly divergence: DivergenceStatus;
}

/**
 * Its parts are idle (ReplicaHost.settled, which adds that it rebuilds nothing): nothing tentative
 * but `stranded` ops, nothing to deliver, no own strong op waiting for CAB.
 */
export function partsSettled(parts: HostParts, stranded: number): boolean {
  const s = parts.replica.stats();
  return (
    s.tentative === stranded &&
    s.unvalidated === 0 &&
    s.running === 0 &&
    parts.paxos.status().pendingCasts === 0 &&
    parts.delivery.backlog() === 0
  );
}

/**
 * The replica's account of itself (protocol's HostStatus), built from its parts as they are now:
 * the one status model behind `/status`, `/metrics`, the event stream and the simulator's frames.
 */
export function hostStatus(parts: HostParts, facts: HostFacts): HostStatus {
  const { replica, gossip, paxos, delivery } = parts;
  const s = replica.stats();
  const m = replica.metrics;
  const p = paxos.status();
  const n = paxos.counters;
  const membership = paxos.membership();
  const c = facts.counters;
  const origin = replica.id === ORIGIN_UNDECIDED ? null : replica.id;
  return {
    id: facts.id,
    role: p.role,
    leader: p.leader,
    quorate: p.quorate,
    ballot: p.ballot,
    committed: s.committed,
    tentative: s.tentative,
    hlc: s.hlc,
    digest: replica.stateDigest(),
    settled: facts.settled,
    learning: facts.learning,
    halted: facts.halted,
    waiting: facts.waiting,
    divergence: facts.divergence,
    leaving: facts.leaving,
    catchUp: { behind: gossip.behind(), holding: replica.speculationHeld },
    membership: {
      members: p.members,
      latest: membership.latest.members.map((x) => x.id),
      changing: membership.latest.from > p.decidedBelow,
    },
    identity: { origin, incarnation: origin === null ? null : incarnationOf(origin) },
    transfers: {
      rebuilding: facts.rebuilding,
      installed: c.transfersIn,
      attempts: c.transferAttempts,
      rejected: c.transfersRejected,
      chunksReceived: c.chunksReceived,
      chunksSent: c.chunksSent,
    },
    metrics: {
      ...m.speculationCounts(),
      executions: m.executions,
      executionRatio: m.executionRatio(),
      accuracy: m.accuracy(),
      reorderingCommits: m.reorderingCommits,
      versions: s.versions,
      byOp: m.speculationByOp(),
    },
    execution: { ahead: m.aheadExecutions, aheadConflicts: m.aheadConflicts },
    memory: {
      finalized: s.finalized,
      keys: s.keys,
      gossipHeld: gossip.stats().heldReqs,
      paxosAccepted: p.acceptedHeld,
      paxosDecided: p.decidedHeld,
      deliveryBacklog: delivery.backlog(),
      checkpoints: c.checkpoints,
      pruned: c.pruned,
    },
    invoked: { ...m.invoked },
    paxos: {
      decidedBelow: p.decidedBelow,
      truncatedBelow: p.truncatedBelow,
      rejoining: p.rejoining,
      elections: n.elections,
      instancesProposed: n.instancesProposed,
      decided: n.decided,
    },
  };
}
