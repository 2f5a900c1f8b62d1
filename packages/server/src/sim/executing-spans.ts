import type { RunState } from './run-state.js';

/**
 * When one incarnation of a replica has executions of its list under way (RunRecord.executing):
 * its executor counts the jobs it holds, and a stretch opens with the first and closes when the
 * last result comes back (a crashed incarnation's results come back too, and are dropped, within
 * the longest execution of the crash). Observing changes nothing in the run.
 */
export class ExecutingSpans {
  private running = 0;
  private open: { readonly replica: number; readonly start: number; end: number } | null = null;

  constructor(
    private readonly run: RunState,
    private readonly replica: number,
  ) {}

  /** The executor took a job of a list entry. */
  started(): void {
    if (this.running++ > 0) return;
    this.open = { replica: this.replica, start: this.run.now, end: Number.POSITIVE_INFINITY };
    this.run.record.executing.push(this.open);
  }

  /** A job of a list entry finished (its result handed over, or dropped with a crash). */
  finished(): void {
    if (--this.running > 0 || this.open === null) return;
    this.open.end = this.run.now;
    this.open = null;
  }
}
