import type { PeerMessage } from '@creek/replica/host/peer-message.js';

/** Where the outbox hands messages: one call per peer and batch, in order (PeerMesh.sendMany). */
export type SendMany = (to: number, msgs: readonly PeerMessage[]) => void;

/** Timers, injectable so tests need no real clock. */
export interface LingerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers: what a replica uses (tests pass their own). */
export const realTimers: LingerTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * A replica's messages to its peers, one batch per peer per turn of the event loop (a peer whose
 * batch went first, `flushFirst`, may get a second with what the turn added after), where a batch
 * of messages nothing waits for may linger up to `lingerMs` to travel with later ones (as TCP's
 * Nagle does). Which those are, the layers say (`lazy`): gossip's pushes of fresh Reqs and its
 * repairs (GossipOutput), and Paxos copies to a replica outside the instance's fast quorum
 * (MultiPaxos.fastQuorum). Every other message — a forward, a vote that counts, an election, an
 * anti-entropy summary, a pull or its answer — goes at once and takes the lingering ones with it,
 * ahead of it: per peer, messages leave in the order the host made them, only some of them later.
 *
 * Why: each frame costs every peer a wake-up, a parse, a check and a disk write. A weak op's
 * caller already has its answer from the origin; a strong op's caller waits for the decision,
 * which needs ids, not Reqs (the push to the leader goes with the forward anyway), and a replica
 * delivers a decided op once its Req arrives. So under load, pushes of a few ops per frame become
 * pushes of many, and the cluster does several times fewer frames and transactions per op
 * (`npm run bench:latency`); and a replica no answer waits for stays off the critical path. Delaying
 * messages is within what the protocols already survive (the simulator delays and reorders every
 * message), so this is a transport choice, not a protocol change.
 */
export class PeerOutbox {
  private readonly turn = new Map<number, PeerMessage[]>();
  /** Peers with a message this turn that may not wait. */
  private readonly urgent = new Set<number>();
  private readonly held = new Map<number, PeerMessage[]>();
  private timer: unknown = null;

  constructor(
    private readonly sendMany: SendMany,
    private readonly lingerMs: number,
    private readonly timers: LingerTimers = realTimers,
  ) {}

  /** Queues a message of this turn; `lazy`: the layer says nothing waits for it. */
  add(to: number, msg: PeerMessage, lazy = false): void {
    if (!lazy) this.urgent.add(to);
    const queue = this.turn.get(to);
    if (queue === undefined) this.turn.set(to, [msg]);
    else queue.push(msg);
  }

  /** True when this turn has messages not yet handed to `flushTurn`. */
  get pending(): boolean {
    return this.turn.size > 0;
  }

  /**
   * Sends now, with what lingers for them, the turn's messages to the peers that have one for which
   * `first` holds and that may not wait (a lazy copy still waits); the rest wait for `flushTurn`.
   * Per peer, order is kept: a peer's whole batch goes. Returns whether anything was sent.
   */
  flushFirst(first: (msg: PeerMessage) => boolean): boolean {
    let sent = false;
    for (const [to, msgs] of this.turn) {
      if (!this.urgent.has(to) || !msgs.some(first)) continue;
      this.sendWithHeld(to, msgs);
      this.turn.delete(to);
      this.urgent.delete(to);
      sent = true;
    }
    if (sent) this.stopTimerIfNothingHeld();
    return sent;
  }

  /** Whether `flushFirst(first)` would send anything. */
  hasFirst(first: (msg: PeerMessage) => boolean): boolean {
    for (const [to, msgs] of this.turn) if (this.urgent.has(to) && msgs.some(first)) return true;
    return false;
  }

  /** Sends (or holds) the turn's messages: call once at the end of each turn. */
  flushTurn(): void {
    for (const [to, msgs] of this.turn) {
      const held = this.held.get(to);
      if (this.lingerMs > 0 && !this.urgent.has(to)) {
        if (held === undefined) this.held.set(to, msgs);
        else held.push(...msgs);
        this.timer ??= this.timers.set(() => this.release(), this.lingerMs);
        continue;
      }
      this.sendWithHeld(to, msgs);
    }
    this.turn.clear();
    this.urgent.clear();
    this.stopTimerIfNothingHeld();
  }

  /** Sends `msgs` to `to` now, after whatever was held for that peer. */
  private sendWithHeld(to: number, msgs: PeerMessage[]): void {
    const held = this.held.get(to);
    if (held === undefined) return this.sendMany(to, msgs);
    this.held.delete(to);
    held.push(...msgs);
    this.sendMany(to, held);
  }

  private stopTimerIfNothingHeld(): void {
    if (this.held.size === 0 && this.timer !== null) {
      this.timers.clear(this.timer);
      this.timer = null;
    }
  }

  /** Sends everything held now (the linger ran out, or the replica is stopping). */
  release(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
    for (const [to, msgs] of this.held) this.sendMany(to, msgs);
    this.held.clear();
  }
}
