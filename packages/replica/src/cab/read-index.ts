/**
 * Linearizable reads without a log write (the ReadIndex of Raft, §6.4 of Ongaro's thesis, on
 * Multi-Paxos): a replica that serves a strong read-only op asks the leader for a read index; the
 * leader notes the first instance it has not opened (every value chosen so far — by it, or by an
 * earlier ballot, which its phase 1 recovered — lies below it), confirms with a round of acks from
 * a majority that no higher ballot was promised since, and answers with the index. The replica
 * answers the read from its committed state once it has delivered every instance below the index.
 *
 * Why that is linearizable: the read's point is when the leader started the confirming round
 * (after the request reached it). A value chosen before that point was chosen by this leader in an
 * instance it had opened, or by an earlier ballot in an instance its phase 1 recovered: below the
 * index. A value chosen by a higher ballot needs promises from a majority, which meets the ack
 * majority in an acceptor that acked before it promised (after promising it would not ack): so
 * that higher ballot's phase 1 ended after the round began, and its values were chosen after the
 * read's point. A committed state that holds every instance below the index therefore reflects
 * every strong op that completed before the read began.
 *
 * A request carries its sender's ack (the highest ballot it had promised when it sent it): where
 * sender and leader are a majority (3 replicas), the leader answers the sender's reads at once, in
 * two message delays like a write's, since the ack was given after those reads began
 * (MultiPaxos.answerWithSendersAck). Otherwise, and for the leader's own reads, a round confirms.
 *
 * This class is the leader's side: requests queue for the next round, one round at a time.
 */
export interface ReadRequest {
  /** The replica that asked (the leader itself included). */
  readonly from: number;
  readonly nonce: string;
}

export interface ReadRound {
  readonly seq: number;
  /** The read index: the first instance the leader had not opened when the round began. */
  readonly index: number;
  readonly requests: readonly ReadRequest[];
  /** Replicas that acked this round's ballot and sequence number (the leader's own included). */
  readonly acks: Set<number>;
  sentAt: number;
}

export class ReadIndexRounds {
  private queue: ReadRequest[] = [];
  private round: ReadRound | null = null;
  private seq = 0;

  /** A request reached the leader: it waits for the next round. */
  enqueue(request: ReadRequest): void {
    if (this.queue.some((r) => r.from === request.from && r.nonce === request.nonce)) return;
    if (this.round?.requests.some((r) => r.from === request.from && r.nonce === request.nonce))
      return;
    this.queue.push(request);
  }

  /** Starts a round for the queued requests if none runs, at read index `index`. */
  start(index: number, self: number, now: number): ReadRound | null {
    if (this.round !== null || this.queue.length === 0) return null;
    this.round = {
      seq: ++this.seq,
      index,
      requests: this.queue,
      acks: new Set([self]),
      sentAt: now,
    };
    this.queue = [];
    return this.round;
  }

  /** The round in progress, if any. */
  get current(): ReadRound | null {
    return this.round;
  }

  /** An ack of round `seq` from `from`: the round, if it is the current one. */
  ack(from: number, seq: number): ReadRound | null {
    const r = this.round;
    if (r === null || r.seq !== seq) return null;
    r.acks.add(from);
    return r;
  }

  /** The current round got its majority: it ends, and its requests are answered. */
  finish(): ReadRound | null {
    const r = this.round;
    this.round = null;
    return r;
  }

  /** The leader stood down: every request is dropped (their replicas ask the next leader). */
  clear(): void {
    this.queue = [];
    this.round = null;
  }
}
