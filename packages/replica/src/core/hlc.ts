/**
 * Hybrid logical clock, as Wren uses it (Wren §III-C, Algorithm 2 line 14 and Algorithm 3):
 * a single scalar that is the maximum of the local physical clock and one more than the highest
 * timestamp seen. It moves forward to match incoming timestamps, like a Lamport clock, and keeps
 * pace with real time in the absence of events, like a physical clock.
 *
 * Units are microseconds since the epoch, so that a replica can issue up to a million timestamps a
 * second before its clock runs ahead of physical time; Number stays exact until the year 2255.
 *
 * Creek orders tentative operations by `(timestamp, id)` (Algorithm 1 line 3). Because the clock is
 * advanced by every received timestamp, an operation invoked at a replica always sorts after every
 * operation that replica had already received, so causally later operations sort later, and
 * moderately skewed physical clocks cause few reorders.
 */
export class HybridLogicalClock {
  private last: number;

  constructor(initial = 0) {
    this.last = initial;
  }

  /** A fresh timestamp for a local event; `nowMs` is the replica's physical clock in ms. */
  next(nowMs: number): number {
    const physical = Math.floor(nowMs * 1000);
    this.last = Math.max(physical, this.last + 1);
    return this.last;
  }

  /** Advance past a timestamp received from another replica. */
  observe(remote: number): void {
    if (remote > this.last) this.last = remote;
  }

  /** The highest timestamp issued or seen so far. */
  current(): number {
    return this.last;
  }
}

/** The physical (millisecond) part of an HLC timestamp, which `tx.now()` returns. */
export function hlcToMillis(ts: number): number {
  return Math.floor(ts / 1000);
}
