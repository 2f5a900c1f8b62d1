/**
 * Gossip wire messages and state-machine outputs: plain data only (apart from the Reqs they carry,
 * which the simulator passes by reference and the runtime serializes). Part of Creek's reliable
 * broadcast (Creek §3.2) and of the "no loss" fetch of Reqs that CAB needs (Creek §5).
 */
import type { OpId } from '../core/op-id.js';
import type { Req } from '../core/types.js';

/** A set of Req ids as `DottedVersionVector.toJSON()` writes it: `{ [origin]: [base, ...dots] }`. */
export type SeenJson = Readonly<Record<string, readonly number[]>>;

export type GossipMessage =
  /**
   * Reqs the receiver may lack: the eager push of a freshly cast Req (one Req), an anti-entropy repair
   * (at most `maxReqsPerReply` Reqs), or the answer to a pull.
   */
  | { readonly kind: 'push'; readonly reqs: readonly Req[] }
  /**
   * Anti-entropy: every Req id the sender has seen. The receiver answers with Reqs the sender lacks.
   * `reply` marks a push-pull answer to another summary; a reply summary is never answered with a
   * summary, so two replicas cannot ping-pong summaries.
   */
  | {
      readonly kind: 'summary';
      readonly seen: SeenJson;
      readonly reply: boolean;
      /**
       * Ops of the receiver's own that the sender knows by id but lacks (`Gossip.want`: a strong
       * op's forwarded id that reached the leader while its Req did not). Absent when none. A
       * receiver with no record of one lost it, as for an op in `seen` (`unknownOwnOp`).
       */
      readonly wanted?: readonly OpId[];
      /**
       * Per origin, the highest event number up to which the sender has seen every op but holds
       * none any more (`Gossip.prune`, or final in a checkpoint): it cannot send them. Absent
       * when there are none. A replica with no origin yet that lacks such an op rebuilds itself
       * from a checkpoint before it numbers ops of its own (ReplicaHost `decideOrigin`).
       */
      readonly pruned?: Readonly<Record<string, number>>;
      /**
       * When the sender's process started gossiping (its first tick), and the `boot` of the
       * receiver's latest summary it had: a replica restarted on an empty disk takes an identity
       * only once every peer echoes its boot, so no peer prunes by what its previous process
       * reported. Absent from an older sender.
       */
      readonly boot?: number;
      readonly echo?: number;
      /**
       * The sender's origin, when it is a later incarnation of its replica (it lost its disk and
       * took a new one, ReplicaHost `decideOrigin`): its peers then know the earlier origin will
       * issue nothing more (host/identity.ts `originIsDead`) even before the new one issues an op,
       * so a client waiting on an op that died with it is not kept waiting. Absent for a first
       * incarnation, and from an older sender.
       */
      readonly origin?: number;
      /**
       * The digest of the sender's finalized state at its newest finalized position: its peers
       * compare it with theirs to catch a nondeterministic op (host/divergence.ts). The host adds
       * it to every summary that leaves, and takes it off those that arrive; gossip never looks.
       */
      readonly digest?: { readonly at: number; readonly digest: string };
    }
  /** The sender needs these Reqs (`Gossip.want`); a receiver that holds any of them pushes them. */
  | { readonly kind: 'pull'; readonly ids: readonly OpId[] }
  /**
   * The answer to a pull for Reqs the sender had and dropped (`prune`), which it does only once
   * every replica has them: a puller that lacks one lost it (`droppedByPeer`).
   */
  | { readonly kind: 'gone'; readonly ids: readonly OpId[] };

export type GossipOutput =
  /**
   * `lazy`: no answer waits for this message (the push of a freshly cast Req, an anti-entropy
   * repair); a driver may hold it for a moment to send it with later ones. A pull's answer, which a
   * replica waits for to deliver a decided op, and summaries and pulls are not lazy.
   */
  | {
      readonly type: 'send';
      readonly to: number;
      readonly msg: GossipMessage;
      readonly lazy?: true;
    }
  /** RB-deliver: hand the Req to the replica (`Replica.deliverReq`). Once per Req id per Gossip. */
  | { readonly type: 'deliver'; readonly req: Req }
  /**
   * Peer `from` has, or knows the id of, an op of this replica's own (`id`) that this replica has
   * no record of. A replica
   * makes each of its Reqs durable before it sends it, so this only happens when its durable state
   * was lost (data directory wiped or replaced, or commits not synced before a power failure) or
   * when another process runs with its id. Going on would reuse op ids the cluster already holds:
   * the driver must stop the replica. Reported once per Gossip.
   */
  | { readonly type: 'unknownOwnOp'; readonly from: number; readonly id: OpId }
  /**
   * Peer `from` dropped the Req of `id`, which this replica needs and has no record of. A peer
   * drops a Req only once every replica, this one included, is known to hold it durably: this
   * replica lost its durable state, and no peer can give that Req back. The driver must stop the
   * replica, as for `unknownOwnOp`. Reported once per Gossip.
   */
  | { readonly type: 'droppedByPeer'; readonly from: number; readonly id: OpId };

/** Number of dots (ids above the contiguous prefixes) in a summary; 0 when delivery was in order. */
export function seenDots(seen: SeenJson): number {
  let n = 0;
  for (const entry of Object.values(seen)) n += Math.max(0, entry.length - 1);
  return n;
}
