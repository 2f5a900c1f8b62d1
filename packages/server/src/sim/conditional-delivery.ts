import type { OpId } from '../core/op-id.js';

/**
 * The delivery side of conditional atomic broadcast (Creek §3.3) at one replica: decided ids are
 * delivered in decision order, each only once its predicate (`checkDep`) holds; a blocked id holds
 * back every later one, which keeps the total order uniform.
 */
export class ConditionalDeliveryQueue {
  private readonly decided = new Map<number, OpId>();
  private next = 0;

  add(seq: number, id: OpId): void {
    if (seq >= this.next) this.decided.set(seq, id);
  }

  /** The next id to deliver if its predicate holds now; call `advance()` after delivering it. */
  ready(predicate: (id: OpId) => boolean): OpId | null {
    const id = this.decided.get(this.next);
    return id !== undefined && predicate(id) ? id : null;
  }

  advance(): void {
    this.decided.delete(this.next);
    this.next++;
  }

  /** Decided ids not yet delivered here. */
  backlog(): number {
    return this.decided.size;
  }
}
