import { opKey, type OpId } from '../core/op-id.js';

/**
 * TEST-ONLY stand-in for conditional atomic broadcast's ordering: a single process that numbers the
 * strong op ids it receives. Lives under sim/ and is never imported by runtime code; the Multi-Paxos
 * CAB of the next issue replaces it.
 *
 * Like the CAB it stands for, it keeps each origin's strong ops in their invocation order: an id is
 * numbered only after the origin's previous strong op (`prevStrong`) was.
 */
export class TestSequencer {
  private readonly lastOfOrigin = new Map<number, number>();
  private readonly waiting = new Map<string, OpId>();
  private readonly seen = new Set<string>();
  private nextSeq = 0;

  /** Receives a CAB-cast id; returns the ids this made decidable, with their sequence numbers. */
  receive(id: OpId, prevStrong: number): { seq: number; id: OpId }[] {
    const key = opKey(id);
    if (this.seen.has(key)) return [];
    this.seen.add(key);
    this.waiting.set(`${id.replica}.${prevStrong}`, id);
    const decided: { seq: number; id: OpId }[] = [];
    for (;;) {
      const last = this.lastOfOrigin.get(id.replica) ?? 0;
      const next = this.waiting.get(`${id.replica}.${last}`);
      if (next === undefined) break;
      this.waiting.delete(`${id.replica}.${last}`);
      this.lastOfOrigin.set(id.replica, next.eventNo);
      decided.push({ seq: this.nextSeq++, id: next });
    }
    return decided;
  }

  decidedCount(): number {
    return this.nextSeq;
  }
}
