import { opKey, type OpId } from '../core/op-id.js';
import { isCast, type Batch, type CastId } from './messages.js';

/**
 * The delivery side of conditional atomic broadcast (Creek §3.3) at one replica.
 *
 * Decided instances are read in instance order into one delivery stream. The stream keeps each
 * origin's strong ops in the origin's order: an id whose predecessor (`prevStrong`) is not in the
 * stream yet waits and joins right after it. (A leader change can decide an origin's later id in an
 * earlier instance than its predecessor.) Duplicates, decided twice across a leader change, are
 * dropped. The stream is a deterministic function of the decided sequence, so every replica gets
 * the same one.
 *
 * The head of the stream is delivered only once its predicate (`checkDep`) holds; a blocked head
 * holds back everything after it, which keeps the order uniform.
 *
 * Memory is bounded: per origin only the last id admitted to the stream is remembered.
 */
export class ConditionalDelivery {
  private readonly decided = new Map<number, Batch>();
  private nextInstance: number;
  private readonly stream: { cast: CastId; instance: number }[] = [];
  private streamHead = 0;
  /** Per origin: eventNo of the last strong op admitted to the stream. */
  private readonly admitted = new Map<number, number>();
  /** Ids waiting for their predecessor, by `origin.prevStrong`. */
  private readonly waiting = new Map<string, { cast: CastId; instance: number }>();
  private readonly waitingIds = new Set<string>();

  /** `delivered`: strong ids this replica already delivered (from its commit records), in order. */
  constructor(firstInstance = 0, delivered: readonly OpId[] = []) {
    this.nextInstance = firstInstance;
    for (const id of delivered) {
      if ((this.admitted.get(id.replica) ?? 0) < id.eventNo)
        this.admitted.set(id.replica, id.eventNo);
    }
  }

  decide(instance: number, value: Batch): void {
    if (instance < this.nextInstance || this.decided.has(instance)) return;
    this.decided.set(instance, value);
    this.drain();
  }

  private drain(): void {
    for (;;) {
      const batch = this.decided.get(this.nextInstance);
      if (batch === undefined) break;
      this.decided.delete(this.nextInstance);
      for (const c of batch) if (isCast(c)) this.admit(c, this.nextInstance);
      this.nextInstance++;
    }
  }

  /** Every instance below `below` was delivered by every replica (this one included): skip them. */
  skipTo(below: number): void {
    if (below <= this.nextInstance) return;
    for (const i of [...this.decided.keys()]) if (i < below) this.decided.delete(i);
    this.nextInstance = below;
    this.drain();
  }

  private admit(cast: CastId, instance: number): void {
    const origin = cast.id.replica;
    const last = this.admitted.get(origin) ?? 0;
    if (cast.id.eventNo <= last) return; // decided again: already in the stream or delivered
    if (cast.prevStrong !== last) {
      if (!this.waitingIds.has(opKey(cast.id))) {
        this.waiting.set(`${origin}.${cast.prevStrong}`, { cast, instance });
        this.waitingIds.add(opKey(cast.id));
      }
      return;
    }
    this.stream.push({ cast, instance });
    this.admitted.set(origin, cast.id.eventNo);
    const next = this.waiting.get(`${origin}.${cast.id.eventNo}`);
    if (next !== undefined) {
      this.waiting.delete(`${origin}.${cast.id.eventNo}`);
      this.waitingIds.delete(opKey(next.cast.id));
      this.admit(next.cast, next.instance);
    }
  }

  /** The next id to deliver if its predicate holds now; call `markDelivered()` after delivering it. */
  next(predicate: (id: OpId) => boolean): OpId | null {
    const head = this.stream[this.streamHead];
    if (head === undefined) return null;
    return predicate(head.cast.id) ? head.cast.id : null;
  }

  markDelivered(id: OpId): void {
    const head = this.stream[this.streamHead];
    if (head === undefined || opKey(head.cast.id) !== opKey(id))
      throw new Error('markDelivered: not the head of the stream');
    this.streamHead++;
    if (this.streamHead > 1024 && this.streamHead * 2 > this.stream.length) {
      this.stream.splice(0, this.streamHead);
      this.streamHead = 0;
    }
  }

  /** True if `id` was decided and admitted (delivered, or waiting in the stream). */
  hasOrdered(id: OpId): boolean {
    return id.eventNo <= (this.admitted.get(id.replica) ?? 0) || this.waitingIds.has(opKey(id));
  }

  /**
   * The first instance with an id not yet delivered here (everything below it is delivered). An id
   * that waited for its predecessor sits in the stream behind ids of later instances, so every
   * undelivered entry counts, not just the head.
   */
  deliveredBelow(): number {
    let below = this.nextInstance;
    for (let i = this.streamHead; i < this.stream.length; i++)
      below = Math.min(below, this.stream[i]!.instance);
    for (const w of this.waiting.values()) below = Math.min(below, w.instance);
    return below;
  }

  /** Decided ids not yet delivered here. */
  backlog(): number {
    return this.stream.length - this.streamHead + this.waiting.size;
  }
}
