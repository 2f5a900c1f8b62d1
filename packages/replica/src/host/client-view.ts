import { INCARNATION_STRIDE, type OpId } from '../core/op-id.js';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { HostParts } from './parts.js';

/**
 * What a replica knows about the ops client sessions saw (ReplicaHost.clients): whether it holds
 * them, the seen vectors it tells sessions, whether its reads see them. The client endpoints of
 * both drivers (the runtime's, the simulator's) ask it to decide when a session may be welcomed
 * here and what each view says the replica had. It reads the host's parts as they are now (a
 * state transfer replaces them), never keeping one.
 */
export class ClientView {
  constructor(
    private readonly parts: HostParts,
    /** The host's time, in ms (for the wait before closing a dead origin a client needs). */
    private readonly now: () => number,
    /** ReadyBuilder.firstNotDurable: the first op of an origin whose record is not durable yet. */
    private readonly firstNotDurable: (origin: number) => number | null,
  ) {}

  /** It holds op `id` (its Req arrived, or was issued here). */
  hasReceived(id: OpId): boolean {
    return this.parts.replica.hasReceived(id);
  }

  /** Op `id` is of a closed origin, above its cut: never applied anywhere (Replica.closedOff). */
  closedOff(id: OpId): boolean {
    return this.parts.replica.closedOff(id);
  }

  /**
   * Whether a client that saw op `id` elsewhere may be served here as far as that op goes: this
   * replica holds it, or it is closed off (never applied anywhere). When neither, and no peer
   * says it holds more of that origin, the replica notes that a client waits for it, so that an
   * op that died with its origin's disk gets closed (ClosingOrigins.want) instead of holding the
   * client forever.
   */
  heldForClient(id: OpId): boolean {
    const { replica, gossip } = this.parts;
    if (replica.hasReceived(id) || replica.closedOff(id)) return true;
    // What a client names is unsigned (a session's `seen`): it may only close off ops no replica
    // says it holds, never ones a peer has and this replica merely lags behind on.
    if (gossip.peersHoldUpTo(id.replica) <= replica.receivedUpTo(id.replica))
      replica.want(id, this.now());
    return false;
  }

  /** Its reads see every op of `seen` it holds (Replica.readsSee). */
  readsSee(seen: readonly number[]): boolean {
    return this.parts.replica.readsSee(seen);
  }

  /** How many of origin `origin`'s ops it holds without a gap. */
  receivedUpTo(origin: number): number {
    return this.parts.replica.receivedUpTo(origin);
  }

  /**
   * A client session's seen vector here (@creek/protocol seen.ts: indexed by origin, sparse above
   * the first incarnations): per origin, how many of its ops this replica holds without a gap,
   * for the first incarnation of each of `ids` and every later incarnation it holds ops of. For a
   * session, its own origin's count stops below the session's own uncommitted ops at the top
   * (Replica.lastOpNotPendingOf): the session resubmits those when it moves, so no replica needs
   * them first. Its own origin's count stops below its first op not yet durable, too.
   */
  seenVector(ids: readonly number[], session: string | null): number[] {
    const { replica, gossip } = this.parts;
    const out: number[] = [];
    for (const id of ids) out[id] = replica.receivedUpTo(id);
    for (const origin of gossip.heldOrigins())
      if (origin >= INCARNATION_STRIDE) out[origin] = replica.receivedUpTo(origin);
    const own = replica.id;
    if (own === ORIGIN_UNDECIDED) return out;
    if (session !== null) out[own] = replica.lastOpNotPendingOf(session);
    // Its own ops whose records are not durable yet are nowhere else: a crash now loses them, and
    // a session told of one would wait for it at every replica (the restarted one numbers its
    // next op the same). Answers wait for their records; the vector must not run ahead of them.
    const pending = this.firstNotDurable(own);
    if (pending !== null) out[own] = Math.min(out[own] ?? 0, pending - 1);
    return out;
  }

  /** Replica.receivedPrefix: per origin, how many of its ops it holds without a gap. */
  receivedPrefix(origins: Iterable<number>): Map<number, number> {
    return this.parts.replica.receivedPrefix(origins);
  }
}
