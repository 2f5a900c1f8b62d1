import type { ConfigEntry } from '../cab/configuration.js';
import { opKey, type OpId } from '../core/op-id.js';
import { ORIGIN_UNDECIDED } from '../core/replica.js';
import type { ReadyBuilder } from './ready.js';
import type { HostCheckpoint, TransferChunkRecord } from './records.js';
import type { HostParts } from './parts.js';
import {
  fromChunks,
  IncomingTransfer,
  OutgoingTransfers,
  paceFor,
  type TransferMessage,
  type TransferPacing,
  type TransferredState,
} from './state-transfer.js';

/** The host's counters that state transfers keep (ReplicaHost.counters). */
export interface TransferCounters {
  checkpoints: number;
  /** Checkpoints installed from a peer (state transfers completed here). */
  transfersIn: number;
  /** Transfers started or restarted with another peer. */
  transferAttempts: number;
  /** Transfers taken up again after a restart, from the chunks on disk. */
  transfersResumed: number;
  /** Transfers whose chunks did not make up the checkpoint their header described. */
  transfersRejected: number;
  /** Chunks this replica sent to peers that rebuilt themselves. */
  chunksSent: number;
  /** Chunks received. */
  chunksReceived: number;
}

/** Every counter at zero (a host that has not started yet). */
export function noTransfers(): TransferCounters {
  return {
    checkpoints: 0,
    transfersIn: 0,
    transferAttempts: 0,
    transfersResumed: 0,
    transfersRejected: 0,
    chunksSent: 0,
    chunksReceived: 0,
  };
}

/** What state transfers ask of the host around them. */
export interface TransfersHost {
  readonly parts: HostParts;
  readonly out: ReadyBuilder;
  readonly counters: TransferCounters;
  /** The host's clock. */
  now(): number;
  /** It has no state worth giving: it still learns from its peers, or it was removed. */
  givesNoState(): boolean;
  /** Per origin, the last strong op delivered here. */
  lastDelivered(): OpId[];
  /**
   * `checkpoint`, written already, is the replica's own now: rebuild every part from it, as a
   * restart would (`t`: what it was made from).
   */
  installed(checkpoint: HostCheckpoint, t: TransferredState): void;
}

/**
 * A replica's side of state transfers (host/state-transfer.ts): the checkpoint it pulls from a
 * peer to rebuild itself (a new member, or one that lost what its peers compacted), chunk by chunk
 * and durably, resumed after a crash; and the snapshots it serves to peers that rebuild
 * themselves.
 */
export class Transfers {
  /** The state transfer this replica pulls from a peer, while it rebuilds itself. */
  private incoming: IncomingTransfer | null = null;
  /** A transfer restored from disk waits for its first ask (`resume`). */
  private resumeAsk = false;
  /** Transfer sessions this host started (each gets a new number). */
  private sessions = 0;
  /** Snapshots this replica serves to peers that rebuild themselves. */
  private readonly outgoing = new OutgoingTransfers();
  /** How this replica paces its pulls, its window within what a sender serves per ask. */
  private readonly pacing: TransferPacing | undefined;

  constructor(
    private readonly host: TransfersHost,
    /** About how many characters a chunk carries (TRANSFER_CHUNK_CHARS). */
    private readonly chunkChars: number | undefined,
    /** HostOptions.unsafeInstallIncomplete: a planted bug. */
    private readonly unsafeInstallIncomplete: boolean,
    /** HostOptions.transferPacing: how this replica paces the pulls it makes. */
    pacing?: TransferPacing,
  ) {
    this.pacing = pacing === undefined ? undefined : paceFor(pacing, chunkChars);
  }

  /** It pulls a checkpoint from a peer, and takes part in nothing else meanwhile. */
  get rebuilding(): boolean {
    return this.incoming !== null;
  }

  /** The pull in progress (its peer, and its chunks so far), or null. */
  get pulling(): {
    readonly peer: number;
    readonly received: number;
    readonly total: number | null;
  } | null {
    const t = this.incoming;
    return t === null ? null : { peer: t.peer, ...t.progress() };
  }

  /**
   * After a crash mid-transfer: the chunks it made durable, of its last session, are kept, and it
   * asks the same peer for the rest (`resumeAsk`, at the next tick). A sender that no longer has
   * that session's snapshot refuses, and the transfer starts over elsewhere. No chunks: it pulls
   * nothing.
   */
  resume(chunks: readonly TransferChunkRecord[], nowMs: number): void {
    this.incoming = null;
    const last = chunks[chunks.length - 1];
    if (last === undefined) return;
    const mine = chunks.filter((c) => c.session === last.session && c.peer === last.peer);
    this.incoming = IncomingTransfer.resume(
      last.peer,
      last.session,
      last.total,
      mine,
      nowMs,
      this.pacing,
    );
    this.sessions = Math.max(this.sessions, last.session);
    this.resumeAsk = true;
    this.host.counters.transfersResumed++;
  }

  /** Starts (or restarts, with another peer) pulling a checkpoint from `peer`. */
  pullFrom(peer: number): void {
    const now = this.host.now();
    this.sessions = Math.max(this.sessions + 1, Math.floor(now));
    if (this.incoming === null)
      this.incoming = new IncomingTransfer(peer, this.sessions, now, this.pacing);
    else this.incoming.restart(peer, this.sessions, now);
    this.host.counters.transferAttempts++;
    this.ask(this.incoming, now);
  }

  /**
   * The clock moved: snapshots served too long ago are dropped; a pull asks again, or another
   * peer, when its peer is silent. True while it rebuilds itself (the tick is all it does).
   */
  tick(now: number): boolean {
    this.outgoing.expire(now);
    const t = this.incoming;
    if (t === null) return false;
    if (this.resumeAsk) {
      this.resumeAsk = false;
      this.ask(t, now);
      return true;
    }
    const due = t.due(now);
    if (due === 'retry') this.ask(t, now);
    else if (due === 'switch') this.pullFrom(this.nextPeer(t.peer));
    return true;
  }

  /** A peer's transfer message: an ask to serve, or a chunk or refusal of the pull in progress. */
  receive(from: number, msg: TransferMessage): void {
    const { counters } = this.host;
    const now = this.host.now();
    if (msg.type === 'ask') {
      // A replica that is still learning or rebuilding has no state worth giving, nor one that
      // was removed: it learns no more (the simulator: seed 1371 with 3 replicas, where a new
      // member pulled the removed replica's stale checkpoint, rejected it and asked it again).
      if (this.host.givesNoState()) {
        this.send(from, { type: 'refuse', session: msg.session });
        return;
      }
      for (const chunk of this.outgoing.answer(
        from,
        msg,
        now,
        () => this.snapshot(from),
        this.chunkChars,
      )) {
        counters.chunksSent++;
        this.send(from, chunk);
      }
      return;
    }
    const t = this.incoming;
    if (t === null || from !== t.peer || msg.session !== t.session) return;
    if (msg.type === 'refuse') {
      this.pullFrom(this.nextPeer(from));
      return;
    }
    counters.chunksReceived++;
    const progress = t.onChunk(from, msg, now);
    if (progress !== 'duplicate')
      this.host.out.persist({
        layer: 'transfer',
        record: {
          kind: 'chunk',
          peer: from,
          session: msg.session,
          index: msg.index,
          total: msg.total,
          part: msg.part,
        },
      });
    if (progress === 'next') for (const ask of t.more(now)) this.send(from, ask);
    else if (progress === 'duplicate') return;
    else if (progress === 'complete' || (this.unsafeInstallIncomplete && t.lastChunkIn))
      this.finish(t);
  }

  private nextPeer(after: number): number {
    const others = this.host.parts.gossip.others;
    return others.find((p) => p > after) ?? others[0]!;
  }

  private ask(t: IncomingTransfer, now: number): void {
    for (const ask of t.asks(now)) this.send(t.peer, ask);
  }

  private send(to: number, msg: TransferMessage): void {
    this.host.out.send(to, { kind: 'transfer', msg }, false);
  }

  private finish(t: IncomingTransfer): void {
    const result = fromChunks(t.chunks(), this.unsafeInstallIncomplete);
    if (!result.ok) {
      // Mangled or inconsistent: nothing of it is installed; pull a fresh one elsewhere.
      this.host.counters.transfersRejected++;
      this.pullFrom(this.nextPeer(t.peer));
      return;
    }
    this.install(result.state);
  }

  /**
   * What this replica gives peer `to`, which rebuilds itself: its checkpoint, made now. Of the
   * final ops' Reqs it holds for peers, only those another replica than `to` may still lack: the
   * rest it holds because `to` never reported them (a new member holds up every prune until it
   * has joined), and `to` gets them as state. Sending them all made a new member's checkpoint grow
   * with every op the cluster ran while it pulled it, and the pull never ended (the simulator,
   * with a small chunk size and a lossy network).
   */
  private snapshot(to: number): TransferredState {
    const { replica, gossip, paxos } = this.host.parts;
    const core = replica.checkpoint();
    const live = new Set(core.reqs.map((q) => opKey(q.id)));
    const held = gossip
      .heldReqs()
      .filter((q) => !live.has(opKey(q.id)) && gossip.lackedBeyond(q.id, to));
    return {
      finalized: core.finalized,
      committedLive: core.committedLive,
      known: core.known,
      hlc: core.hlc,
      truncatedBelow: paxos.status().truncatedBelow,
      // A copy: the history's own array grows with the next change, and what was sent (and what
      // a receiver keeps on disk) must stay what it was (the simulator's disk checksums found a
      // persisted header that had grown).
      config: [...paxos.membership().entries],
      closed: core.closed ?? [],
      delivered: this.host.lastDelivered(),
      state: core.state,
      reqs: core.reqs,
      held,
    };
  }

  /**
   * Installs a peer's checkpoint as this replica's own, in one durable `checkpoint` record that
   * supersedes everything it wrote before, and rebuilds every part from it, as a restart would.
   * The replica keeps its identity (its origin, if it had one: it has no op under it) and its own
   * promises and votes, if any survived; it takes none of the peer's. With no vote on disk it
   * rejoins Paxos from the peer's truncation point (PaxosOptions.noDurableVotes).
   */
  private install(t: TransferredState): void {
    const { replica, gossip, paxos } = this.host.parts;
    // Nothing this replica has may be lost by it: peers drop a Req once every replica reported
    // it, this one included, so what it reported it must keep. Its finalized prefix must be part
    // of the checkpoint's (committed lists are prefixes of one another): a peer behind it gave an
    // older state, and it asks another. The Reqs it holds that the checkpoint does not have stay,
    // as ops not committed yet.
    if (t.finalized < replica.finalizedCount()) {
      this.host.counters.transfersRejected++;
      this.pullFrom(gossip.furthestAhead()?.peer ?? this.nextPeer(this.incoming!.peer));
      return;
    }
    const inCheckpoint = new Set([...t.reqs, ...t.held].map((q) => opKey(q.id)));
    const kept = gossip
      .heldReqs()
      .filter((q) => !t.known.has(q.id) && !inCheckpoint.has(opKey(q.id)));
    const own = paxos
      .durableState()
      .filter(
        (r) => r.kind === 'promise' || (r.kind === 'accept' && r.instance >= t.truncatedBelow),
      );
    const origin = replica.id === ORIGIN_UNDECIDED ? null : replica.id;
    const checkpoint: HostCheckpoint = {
      kind: 'checkpoint',
      core: {
        finalized: t.finalized,
        state: t.state,
        reqs: [...t.reqs, ...kept],
        committedLive: t.committedLive,
        known: t.known,
        hlc: t.hlc,
        eventNo: 0,
        lastStrongEventNo: 0,
        finalizedOwnStrong: 0,
        ...((t.closed?.length ?? 0) === 0 ? {} : { closed: t.closed }),
      },
      cab: [
        ...own,
        ...(t.truncatedBelow > 0 ? [{ kind: 'truncate' as const, below: t.truncatedBelow }] : []),
        // The cluster's configurations from the truncation point on, as the peer knew them (a new
        // member learns the cluster's membership here; the placeholder it started with goes).
        ...t.config.map((entry: ConfigEntry) => ({ kind: 'config' as const, entry })),
      ],
      held: t.held,
      delivered: t.delivered,
      origin,
    };
    this.host.out.persist({ layer: 'checkpoint', record: checkpoint });
    this.incoming = null;
    this.host.installed(checkpoint, t);
  }
}
