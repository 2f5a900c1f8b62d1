import type { Prng } from './prng.js';

/**
 * What an operator does to a simulated cluster's membership in one run (cab/configuration.ts),
 * besides the other faults: every change goes through the ordered log, asked at a live member
 * and asked again until it is decided, as `creek member` does.
 *
 * - `replace`: a member is removed (the leader at that time, or another), dead (crashed for good
 *   first, as `creek member replace` of a lost machine) or alive (it finds itself removed and
 *   stops), then a new replica with a new id is added and started empty: it rebuilds itself from a
 *   peer's checkpoint (state transfer) before it takes part.
 * - `grow`: a new replica is added and started, and later a member (the new one, the leader, or
 *   another) is removed.
 *
 * Faults aimed at the change itself: the new replica may crash while it pulls its checkpoint
 * (and restart, resuming the transfer), and the leader may crash right after a change is asked
 * (and restart), so another leader finishes it.
 */
export interface ReconfigScenario {
  readonly kind: 'replace' | 'grow';
  /** Simulated time of the first change. */
  readonly at: number;
  /** Whom `replace` removes, or `grow` removes at `shrinkAt`. */
  readonly victim: 'leader' | 'new' | number;
  /** `replace`: the victim is crashed for good before its removal. */
  readonly dead: boolean;
  /** `grow`: when the second change (a removal) is asked. */
  readonly shrinkAt: number;
  /** The new replica crashes this long after its start (while it rebuilds), down for `downMs`. */
  readonly crashJoiner: { readonly afterMs: number; readonly downMs: number } | null;
  /** The leader crashes right after the first change is asked, down for this long. */
  readonly crashLeaderMs: number | null;
}

/** Of the runs with faults 'all', the share that also change their membership. */
export const RECONFIG_SHARE = 0.5;

/**
 * The run's membership scenario, or null (faults other than 'all' and 'reconfig', one replica,
 * or a run of 'all' drawn without one). Drawn from a stream of its own, so runs without one keep
 * every other draw of their seed.
 */
export function drawReconfiguration(
  prng: Prng,
  n: number,
  workloadMs: number,
  always: boolean,
): ReconfigScenario | null {
  if (n < 2) return null;
  if (!always && !prng.chance(RECONFIG_SHARE)) return null;
  const kind = prng.pick(['replace', 'grow'] as const);
  const at = prng.float(50, workloadMs / 2);
  const victim =
    kind === 'replace'
      ? prng.chance(0.5)
        ? ('leader' as const)
        : prng.int(0, n - 1)
      : prng.pick(['new', 'leader', prng.int(0, n - 1)] as const);
  return {
    kind,
    at,
    victim,
    dead: kind === 'replace' && prng.chance(0.5),
    shrinkAt: prng.float(at + 100, Math.max(at + 150, workloadMs - 50)),
    crashJoiner: prng.chance(0.5)
      ? { afterMs: prng.float(0, 40), downMs: prng.float(20, 200) }
      : null,
    crashLeaderMs: prng.chance(0.3) ? prng.float(20, 200) : null,
  };
}
