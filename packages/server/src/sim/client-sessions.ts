import type { SessionStamp } from '@creek/replica/core/types.js';

/**
 * The simulated clients' sessions (exactly-once across replicas, see core/session-dedupe.ts). Each
 * op gets the next number of its session; an op counts as acknowledged once some submission of it
 * got its stable response (the final answer, and proof it is committed) or, for an op that is
 * never ordered (a weak read), any answer. `acked` is the lowest number not acknowledged: a client
 * that gave up on an op without an answer never acknowledges it, and never acknowledges past it.
 */
export class ClientSessions {
  private readonly sessions = new Map<string, { next: number; open: Set<number> }>();

  /** Numbers a new op of `session`. */
  stamp(session: string): SessionStamp {
    let s = this.sessions.get(session);
    if (s === undefined) {
      s = { next: 1, open: new Set() };
      this.sessions.set(session, s);
    }
    const seq = s.next++;
    s.open.add(seq);
    return { id: session, seq, acked: this.ackedOf(s) };
  }

  /** The stamp of a resubmission: same number, acknowledgements as they stand now. */
  restamp(stamp: SessionStamp): SessionStamp {
    return { id: stamp.id, seq: stamp.seq, acked: this.ackedOf(this.sessions.get(stamp.id)!) };
  }

  acknowledge(stamp: SessionStamp): void {
    this.sessions.get(stamp.id)?.open.delete(stamp.seq);
  }

  isAcknowledged(stamp: SessionStamp): boolean {
    return !(this.sessions.get(stamp.id)?.open.has(stamp.seq) ?? false);
  }

  private ackedOf(s: { next: number; open: Set<number> }): number {
    let min = s.next;
    for (const seq of s.open) if (seq < min) min = seq;
    return min;
  }
}
