import { jsonEqual, type JsonValue } from '@creek/app';
import { holds, holdsAll, type HeldOwnOps, type ServerFrame } from '@creek/protocol';

/** A live query's result, as a replica sent it. */
export type WatchedFrame = Extract<ServerFrame, { t: 'watched' }>;

/** An op of the session that a live query's latest view showed applied, and that failed. */
export interface CorrectedOp {
  /** The op's name (`creek.abandoned` for one abandoned before it ran). */
  readonly op: string;
  /** Why it failed. */
  readonly error: string;
}

/**
 * What one result does to what a live query shows:
 * - `show` with `latest`: it is the query's newest view in the session's order and replaces the
 *   latest one (a stable one is also the latest stable); `corrected` lists the session's ops the
 *   view it replaces showed applied and that this one shows failed (empty when none, or when the
 *   value is the same).
 * - `show` without `latest`: a stable result that does not hold every op of the session the latest
 *   view holds: it is the latest stable (the synced mark) and leaves the newer latest view in place.
 * - `skip`: nothing to show: the same views again, or a result older than what the query shows (a
 *   tentative one that does not hold the session's ops the latest view holds, from a replica the session just moved to
 *   before its resubmitted ops reached it; a stable one at a committed position below one the
 *   query already showed, from a replica behind the last).
 */
export type ResultEffect =
  | { readonly t: 'show'; readonly latest: boolean; readonly corrected: readonly CorrectedOp[] }
  | { readonly t: 'skip' };

const SKIP: ResultEffect = { t: 'skip' };

interface Shown {
  readonly level: 'tentative' | 'stable';
  readonly outcome: WatchedFrame['outcome'];
  /** The session's ops the state it was read at holds (unknown: null). */
  readonly own: HeldOwnOps | null;
  /** Those among them that failed there. */
  readonly failed: ReadonlySet<number>;
}

/**
 * Monotonic views for one live query, in the session's own order. Each result a replica sends
 * says which of the session's ops the state it was read at holds (`own`: every op numbered up to
 * `upTo` but those `missing`). A result replaces the latest view only if it holds every op the
 * latest one held: so a stable result read before the session's newest write committed never
 * hides that write, which the tentative view already showed; it becomes the latest stable only,
 * and the stable result that holds the write replaces the tentative one when it comes. A result
 * with the same value as the latest view replaces it whatever it holds (nothing the user sees goes
 * back, and a stable one says the value is committed). A result that holds the user's op failed
 * (rejected at its place in the order, or abandoned) replaces a view that showed it applied, and
 * is marked as a correction. Stable results never go back in committed position, across replicas.
 * Results from replicas that do not say what they hold replace the latest view, as they come.
 */
export class ViewOrder {
  private latest: Shown | null = null;
  /** The highest committed position a stable result shown was read at. */
  private stablePosition: number | undefined;
  /** The last stable result shown (the latest stable). */
  private stableOutcome: WatchedFrame['outcome'] | null = null;

  /**
   * What the query shows, for the replica it is sent to next (the `watch` frame's `shown`): that
   * replica sends no result older than it, so a later result with the same value still comes.
   */
  shown(): { position?: number; own?: HeldOwnOps } | undefined {
    const own = this.latest?.own ?? undefined;
    if (this.stablePosition === undefined && own === undefined) return undefined;
    return {
      ...(this.stablePosition === undefined ? {} : { position: this.stablePosition }),
      ...(own === undefined ? {} : { own }),
    };
  }

  /** The query's latest result (as it stands for it), and the session's ops it holds. */
  current(): {
    readonly outcome: WatchedFrame['outcome'];
    readonly level: 'tentative' | 'stable';
    readonly own: HeldOwnOps | null;
  } | null {
    return this.latest;
  }

  /** What `f`, the query's next result, does (and the query's state after it). */
  result(f: WatchedFrame): ResultEffect {
    const level = f.level;
    if (level === 'stable' && f.position !== undefined) {
      if (this.stablePosition !== undefined && f.position < this.stablePosition) return SKIP;
      this.stablePosition = f.position;
    }
    // A stable result with another value than the last stable one shown is a new synced mark.
    const newStable =
      level === 'stable' &&
      (this.stableOutcome === null || !outcomesEqual(this.stableOutcome, f.outcome));
    if (level === 'stable') this.stableOutcome = f.outcome;
    const before = this.latest;
    const own: HeldOwnOps | null =
      f.own === undefined
        ? null
        : { upTo: f.own.upTo, ...(f.own.missing === undefined ? {} : { missing: f.own.missing }) };
    const same = before !== null && outcomesEqual(before.outcome, f.outcome);
    const behind =
      before !== null && before.own !== null && own !== null && !holdsAll(own, before.own);
    if (behind && !same) return newStable ? { t: 'show', latest: false, corrected: [] } : SKIP;
    if (behind) {
      // The same value, from a state that holds fewer of the session's ops: they do not show in
      // it, so it stands for the latest view (at its level) with what the latest view held.
      this.latest = { ...before!, level };
      return before!.level !== level || newStable
        ? { t: 'show', latest: true, corrected: [] }
        : SKIP;
    }
    const shownOwn = before?.own ?? null;
    const corrected =
      before === null || same || shownOwn === null
        ? []
        : (f.own?.failed ?? [])
            .filter((o) => holds(shownOwn, o.seq) && !before.failed.has(o.seq))
            .map((o) => ({ op: o.op, error: o.error }));
    const failed = new Set((f.own?.failed ?? []).map((o) => o.seq));
    this.latest = { level, outcome: f.outcome, own, failed };
    if (same && before.level === level && !newStable) return SKIP;
    return { t: 'show', latest: true, corrected };
  }
}

function outcomesEqual(a: WatchedFrame['outcome'], b: WatchedFrame['outcome']): boolean {
  return jsonEqual(a as unknown as JsonValue, b as unknown as JsonValue);
}
