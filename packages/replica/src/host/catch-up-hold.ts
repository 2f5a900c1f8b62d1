/**
 * When a replica holds speculation for a catch-up (Replica.holdSpeculation): while a peer holds
 * `hold` (CATCH_UP_HOLD) or more ops this replica lacks and pushes keep arriving, so the tentative
 * tail is not re-executed for every batch of a long catch-up. It resumes below a quarter of that,
 * or when no push came for `stallMs` (CATCH_UP_STALL_MS) since the catch-up began: cut off
 * mid-catch-up, it answers tentatively again.
 */
export class CatchUpHold {
  /**
   * When a gossip push last arrived, or a catch-up began (a peer's summary showed `hold` ops this
   * replica lacks), by the host's clock: a catch-up in progress.
   */
  private progressAt = Number.NEGATIVE_INFINITY;
  /** What `Gossip.behind` said at the last check. */
  private wasBehind = 0;

  constructor(
    private readonly hold: number,
    private readonly stallMs: number,
  ) {
    if (!(hold >= 1))
      throw new Error(`catchUpHold must be a number of ops, 1 or more, not ${hold}`);
  }

  /** A gossip push arrived. */
  pushed(now: number): void {
    this.progressAt = now;
  }

  /**
   * The replica lacks `behind` ops a peer holds (Gossip.behind): true to hold speculation, false
   * to release it, null to leave it as it is.
   */
  decide(behind: number, now: number): boolean | null {
    if (behind >= this.hold && this.wasBehind < this.hold) this.progressAt = now; // the pushes are on their way: hold the first ones too
    this.wasBehind = behind;
    const arriving = now - this.progressAt < this.stallMs;
    if (behind >= this.hold && arriving) return true;
    if (behind < this.hold / 4 || !arriving) return false;
    return null;
  }

  /** The replica was rebuilt (a state transfer): no catch-up is under way. */
  reset(): void {
    this.progressAt = Number.NEGATIVE_INFINITY;
    this.wasBehind = 0;
  }
}
