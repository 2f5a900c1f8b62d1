import type { PaxosMessage } from './messages.js';
import { ReadIndexRounds, type ReadRequest, type ReadRound } from './read-index.js';
import type { PaxosContext } from './context.js';
import type { ReadsRole, Roles } from './roles.js';

/**
 * Strong reads without a log write (read-index.ts): both sides of it. A replica asks the leader for
 * a read index until it answers; the leader answers at once with the sender's ack where that makes
 * a majority, or else after a round of acks (ReadIndexRounds); every acceptor acks the rounds.
 */
export class Reads implements ReadsRole {
  private readonly unsafeReadWithoutQuorum: boolean;
  /** Reads this replica asked a read index for and has no answer yet: nonce → the caller's key. */
  private readonly readsAsked = new Map<string, number>();
  private readCounter = 0;
  /** Leader: the read rounds (read-index.ts). */
  private readonly readRounds = new ReadIndexRounds();
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext, unsafeReadWithoutQuorum: boolean) {
    this.ctx = ctx;
    this.roles = ctx.roles;
    this.unsafeReadWithoutQuorum = unsafeReadWithoutQuorum;
  }

  /** A strong read-only op asks for a read index (MultiPaxos.requestRead). */
  request(key: number): void {
    const nonce = `${Math.floor(this.ctx.now)}.${++this.readCounter}`;
    this.readsAsked.set(nonce, key);
    const leader = this.roles.election.currentLeader();
    if (leader === this.ctx.self) this.leaderRead({ from: this.ctx.self, nonce });
    else if (leader !== null) this.ctx.send(leader, this.readIndexRequest([nonce]));
  }

  /** Reads asked here still wait for their index. */
  get waiting(): boolean {
    return this.readsAsked.size > 0;
  }

  /** They are asked of `leader` again (the origin's forwarding). */
  forwardTo(leader: number): void {
    if (this.readsAsked.size > 0) {
      if (leader === this.ctx.self)
        for (const nonce of this.readsAsked.keys()) this.leaderRead({ from: this.ctx.self, nonce });
      else this.ctx.send(leader, this.readIndexRequest([...this.readsAsked.keys()]));
    }
  }

  /**
   * The read index now: the first instance this leader has not opened. Values chosen by earlier
   * ballots lie at or below `recoveredTop` (phase 1), those chosen by it below `nextInstance`.
   */
  private readPoint(): number {
    const proposer = this.roles.proposer;
    return Math.max(proposer.nextInstance, proposer.recoveredTop + 1, this.ctx.decidedBelow);
  }

  /** A request for read indexes, with this replica's ack of any ballot it did not promise past. */
  private readIndexRequest(nonces: string[]): PaxosMessage {
    // A rejoining replica may have lost promises it made: it vouches for nothing.
    return this.roles.rejoin.rejoining
      ? { type: 'readIndex', nonces }
      : { type: 'readIndex', nonces, promised: this.roles.acceptor.promised };
  }

  onReadIndex(from: number, msg: Extract<PaxosMessage, { type: 'readIndex' }>): void {
    if (!this.answerWithSendersAck(from, msg.nonces, msg.promised))
      for (const nonce of msg.nonces) this.leaderRead({ from, nonce });
  }

  onReadProbe(from: number, msg: Extract<PaxosMessage, { type: 'readProbe' }>): void {
    // No promise, no vote: only "I promised no higher ballot". A rejoining replica cannot say.
    if (!this.roles.rejoin.rejoining && msg.ballot >= this.roles.acceptor.promised)
      this.ctx.send(from, { type: 'readAck', ballot: msg.ballot, seq: msg.seq });
  }

  onReadAck(from: number, msg: Extract<PaxosMessage, { type: 'readAck' }>): void {
    const election = this.roles.election;
    if (election.role === 'leader' && msg.ballot === election.ballot) {
      const round = this.readRounds.ack(from, msg.seq);
      if (round !== null) this.maybeFinishRead(round);
    }
  }

  onReadIndexed(msg: Extract<PaxosMessage, { type: 'readIndexed' }>): void {
    for (const nonce of msg.nonces) this.readAnswered(nonce, msg.index);
  }

  /**
   * The fast path: a request that carries its sender's ack of this leader's ballot (`promised`
   * no higher) answers its own reads at once when the sender and this leader are a majority (3
   * replicas): two message delays, no round. Safe by the argument of read-index.ts with the ack
   * sent when the request was, after the reads began: a higher ballot that chose a value before
   * they began had, by then, a promise from this leader (which would not lead) or from the sender
   * (which would not vouch). True when answered.
   */
  private answerWithSendersAck(
    from: number,
    nonces: readonly string[],
    promised: number | undefined,
  ): boolean {
    const election = this.roles.election;
    if (election.role !== 'leader' || this.unsafeReadWithoutQuorum) return false;
    if (promised === undefined || promised > election.ballot) return false;
    const index = this.readPoint();
    if (!this.confirmedBy(new Set([this.ctx.self, from]), index)) return false;
    this.answerReads(
      nonces.map((nonce) => ({ from, nonce })),
      index,
    );
    return true;
  }

  /** A read request reached this replica as leader: it joins the next round. */
  private leaderRead(request: ReadRequest): void {
    if (this.roles.election.role !== 'leader') return; // its replica asks again (forwardPending)
    if (this.unsafeReadWithoutQuorum) {
      this.answerReads([request], this.readPoint());
      return;
    }
    this.readRounds.enqueue(request);
    this.startReadRound();
  }

  private startReadRound(): void {
    const round = this.readRounds.start(this.readPoint(), this.ctx.self, this.ctx.now);
    if (round === null) return;
    this.sendReadProbes(round);
    this.maybeFinishRead(round);
  }

  /** Leader: the round in progress asks again after a retransmit period, and ends once it can. */
  retransmit(): void {
    const round = this.readRounds.current;
    if (round !== null) {
      if (this.ctx.now - round.sentAt >= this.ctx.retransmitMs) this.sendReadProbes(round);
      this.maybeFinishRead(round);
    }
  }

  private sendReadProbes(round: ReadRound): void {
    const ctx = this.ctx;
    round.sentAt = ctx.now;
    for (const r of ctx.peers())
      if (r !== ctx.self && !round.acks.has(r))
        ctx.send(r, { type: 'readProbe', ballot: this.roles.election.ballot, seq: round.seq });
  }

  /**
   * The round's acks are a majority of every configuration from the decided prefix to its index
   * (one that is not known yet makes it wait): the index is answered.
   */
  private maybeFinishRead(round: ReadRound): void {
    if (!this.confirmedBy(round.acks, round.index)) return;
    const done = this.readRounds.finish();
    if (done === null) return;
    this.answerReads(done.requests, done.index);
    this.startReadRound();
  }

  /** `acks` are a majority of every configuration from the decided prefix to read index `index`. */
  private confirmedBy(acks: ReadonlySet<number>, index: number): boolean {
    const ctx = this.ctx;
    const last = Math.max(index - 1, ctx.decidedBelow);
    for (const e of ctx.history.all()) {
      const at = Math.max(e.from, ctx.decidedBelow);
      if (at > last || ctx.history.at(at) !== e) continue;
      if (!ctx.configKnown(at) || !ctx.isQuorum(at, acks)) return false;
    }
    return true;
  }

  private answerReads(requests: readonly ReadRequest[], index: number): void {
    const byReplica = new Map<number, string[]>();
    for (const r of requests) {
      if (r.from === this.ctx.self) this.readAnswered(r.nonce, index);
      else byReplica.set(r.from, [...(byReplica.get(r.from) ?? []), r.nonce]);
    }
    for (const [to, nonces] of byReplica) this.ctx.send(to, { type: 'readIndexed', nonces, index });
  }

  private readAnswered(nonce: string, index: number): void {
    const key = this.readsAsked.get(nonce);
    if (key === undefined) return;
    this.readsAsked.delete(nonce);
    this.ctx.emit({ type: 'readIndex', key, index });
  }

  /** The leader stood down, or was elected: every request is dropped (their replicas ask again). */
  dropRounds(): void {
    this.readRounds.clear();
  }
}
