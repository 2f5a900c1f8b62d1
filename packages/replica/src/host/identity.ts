// A replica's identity: the origin it numbers its ops under (core/op-id.ts), taken once it knows
// its peers' ops, and the reasons it stops when it finds it lost ops or state that no peer can
// give back.
import { formatOpId, incarnationOf, originOf, slotOf, type OpId } from '../core/op-id.js';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { HostParts } from './parts.js';

/** What an operator can do about a replica that halted for lost state. */
const REBUILD =
  'Restore its data directory, or start it on an empty one: it then rebuilds itself from its ' +
  'peers (state transfer) and numbers its ops under a new identity.';

/** Why replica `self` stops when peer `from` holds or knows of its op `id`, which it lacks. */
export function lostOwnOpReason(self: number, from: number, id: OpId): string {
  return (
    `replica ${self} has lost ops it once sent: replica ${from} holds or knows of its op ` +
    `${formatOpId(id)}, of which this replica has no record. Commits made without --fsync ` +
    `were lost in a power failure, its data directory was replaced by an older copy, or ` +
    `another process runs with id ${self}. It stops rather than reuse op ids the cluster ` +
    `already has. ${REBUILD}`
  );
}

/** What replica `self` lacks when peer `from` dropped op `id`, which it needs. */
export function droppedReqWhy(from: number, id: OpId): string {
  return (
    `it needs the op ${formatOpId(id)}, of which it has no record, and replica ${from} ` +
    `dropped it once every replica held it, this one included`
  );
}

/** Why replica `self`, with ops of its own, stops when it lacks what its peers compacted (`why`). */
export function lostStateReason(self: number, why: string): string {
  return (
    `replica ${self} has lost state: ${why}. Commits made without --fsync were lost in a ` +
    `power failure, or its data directory was replaced by an older copy. ${REBUILD}`
  );
}

/**
 * What a replica with no origin (no IdentityRecord: a new disk, or a wiped one) does now: nothing
 * yet (null) until it has heard every peer and rejoined Paxos; then it takes the first incarnation
 * of its slot above every incarnation of it that it or any peer knows ops of (`origin`). Ops of an
 * earlier incarnation that no peer holds were never anywhere else and are gone, so their ids are
 * never seen again; those a peer holds stay the ops of an origin that will never issue another,
 * and commit as any other's (a stranded strong one is cast on its behalf, Replica `cabAdopt`).
 *
 * First, though, it takes a peer's checkpoint (`pullFrom`) if a peer dropped ops it lacks (gossip
 * prunes what every replica reported, this replica's earlier incarnation included): it must not
 * number ops of its own before it has a state no peer compacted away, since it could not rebuild
 * itself after (ReplicaHost.rebuildOrHalt). A snapshot taken now holds every op a peer dropped
 * before this replica's summaries reached it, and no peer drops an op this replica's summary lacks.
 */
export function originDecision(
  parts: HostParts,
  slot: number,
): { readonly origin: number } | { readonly pullFrom: number } | null {
  const { replica, gossip, paxos } = parts;
  if (
    replica.id !== ORIGIN_UNDECIDED ||
    gossip.peersSummarized() < gossip.others.length ||
    // Every peer has had a summary of this process: none prunes by what a wiped predecessor
    // reported any more (the `pruned` it reports covers what it did before).
    !gossip.echoedByAll() ||
    paxos.rejoining
  )
    return null;
  const compacted = gossip.compactedAtPeer((origin) => replica.closedCut(origin));
  if (compacted !== null) return { pullFrom: compacted };
  let incarnation = 0;
  for (const o of gossip.knownOrigins())
    if (slotOf(o) === slot) incarnation = Math.max(incarnation, incarnationOf(o) + 1);
  return { origin: originOf(slot, incarnation) };
}

/**
 * Whether `origin` will issue no more ops, as this replica knows (core/closing-origins.ts closes
 * such an origin's stranded ops): a later incarnation of its replica has ops (it took that
 * incarnation after its disk was lost, so the earlier one is gone), or a decided membership change
 * removed its replica (a removed id is never added again).
 */
export function originIsDead(parts: HostParts, origin: number): boolean {
  const slot = slotOf(origin);
  const self = parts.replica.id;
  if (
    self !== ORIGIN_UNDECIDED &&
    slotOf(self) === slot &&
    incarnationOf(self) > incarnationOf(origin)
  )
    return true;
  if (parts.paxos.membership().entries.some((e) => e.retired.includes(slot))) return true;
  for (const o of parts.gossip.knownOrigins())
    if (slotOf(o) === slot && incarnationOf(o) > incarnationOf(origin)) return true;
  return false;
}
