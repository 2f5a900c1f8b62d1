import type { z } from 'zod';
import type { OutcomeSchema } from '@creek/protocol';
import type { ConsistencyLevel, CorrectionCause, ViewSink } from './binding.js';
import { OperationFailed, ProtocolError, type CreekError } from './errors.js';

/** An op's result as a replica reports it: its value, or the message it threw. */
export type Outcome = z.infer<typeof OutcomeSchema>;

/**
 * Turns one op's answers from a replica (tentative and stable outcomes, a confirmation, an error)
 * into the views the caller asked for (Correctables §3.2): with `weak` and `strong`, tentative
 * outcomes are preliminary views and the stable one is final; with `strong` alone only the stable
 * one is shown; a weak op's first answer is final. Every binding uses it, so they agree.
 */
export class OpViews<T> {
  private lastTentative: Outcome | null = null;
  private finished = false;
  private readonly strong: boolean;
  private readonly preliminary: boolean;

  constructor(
    levels: readonly ConsistencyLevel[],
    private readonly sink: ViewSink<T>,
  ) {
    this.strong = levels.includes('strong');
    this.preliminary = this.strong && levels.includes('weak');
  }

  get done(): boolean {
    return this.finished;
  }

  /**
   * An outcome at a level, with the replica's causes if it corrects an answer shown before;
   * returns true once the op is done.
   */
  outcome(
    level: 'tentative' | 'stable',
    outcome: Outcome,
    causes?: readonly CorrectionCause[],
  ): boolean {
    const why = causes === undefined || causes.length === 0 ? {} : { causes };
    if (this.finished) return true;
    if (level === 'tentative' && this.strong) {
      this.lastTentative = outcome;
      // A speculative failure has no value to show; the final view may still succeed.
      if (outcome.ok && this.preliminary)
        this.sink.view({ value: outcome.value as T, level: 'weak', final: false, ...why });
      return false;
    }
    this.finished = true;
    if (!outcome.ok) this.sink.error(new OperationFailed(outcome.error));
    else
      this.sink.view({
        value: outcome.value as T,
        level: level === 'stable' ? 'strong' : 'weak',
        final: true,
        ...why,
      });
    return true;
  }

  /** The stable outcome equals the last tentative one (Correctables §5.2). */
  confirm(): boolean {
    if (this.finished) return true;
    if (this.lastTentative === null)
      return this.error(new ProtocolError('a confirmation arrived before any tentative view'));
    return this.outcome('stable', this.lastTentative);
  }

  error(e: CreekError): boolean {
    if (!this.finished) {
      this.finished = true;
      this.sink.error(e);
    }
    return true;
  }
}
