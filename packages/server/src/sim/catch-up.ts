/**
 * The work a replica that fell behind did to catch up (faults 'lag': from the heal to the end of
 * the run), per op that reached its committed order meanwhile (its lag). Each count is work a
 * lagging replica was found doing more of per op the further behind it was, until it was indexed
 * or batched: executions (its tentative tail re-run with each batch of older ops that arrived:
 * Replica.holdSpeculation), CAB's checks of what waiting casts and 2a lack (ReqWaits), and the peer
 * messages it handled.
 */
export interface CatchUpWork {
  readonly replica: number;
  /** Ops that reached its committed order after the heal. */
  readonly ops: number;
  readonly executions: number;
  readonly lackChecks: number;
  readonly messages: number;
  /** The three counts together, per op. */
  readonly perOp: number;
}

/** How much more work per op a lag many times longer may cost: 25 % and a tenth of a unit. */
const GROWTH = { factor: 1.25, slack: 0.1 } as const;

/**
 * The checker of how catch-up work scales: `long` caught up on at least three times the ops of
 * `short` (the same seed with a longer lag), and none of its counts per op grew beyond
 * `GROWTH` of `short`'s. Work per op that grows with the lag is total work that grows with its
 * square: what kept a replica behind by a few thousand ops busy for minutes. Returns the
 * violations (empty when it scales).
 */
export function catchUpGrowth(short: CatchUpWork, long: CatchUpWork): string[] {
  if (long.ops < 3 * short.ops)
    return [`catch-up: the long lag (${long.ops} ops) is not 3 times the short one (${short.ops})`];
  const out: string[] = [];
  for (const count of ['executions', 'lackChecks', 'messages'] as const) {
    const a = short[count] / Math.max(1, short.ops);
    const b = long[count] / Math.max(1, long.ops);
    if (b > a * GROWTH.factor + GROWTH.slack)
      out.push(
        `catch-up: ${count} per op grew from ${a.toFixed(2)} (lag ${short.ops} ops) to ${b.toFixed(2)} (lag ${long.ops} ops)`,
      );
  }
  return out;
}
