import type { Prng } from './prng.js';

/** How an 'sdk' run's sessions are configured and its callers behave, as the seed draws them. */
export interface SessionParameters {
  /** ClientSessionConfig: when a useless replica is left, when ops fail for want of one. */
  readonly stallTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Offline ops: past the connect timeout, ops wait in the session's queue instead of failing. */
  readonly offline: boolean;
  /** Ops one connection may have in flight (the rest wait in the session). */
  readonly maxInFlight: number;
  /** Of the ops, the share whose caller stops waiting after a while (a timeout). */
  readonly timeoutShare: number;
  /** The mean time between two resets of a link under an open connection; null: none. */
  readonly resetEveryMs: number | null;
}

/** Draws an 'sdk' run's session parameters (SimParameters.sessions), from its own stream. */
export function drawSessionParameters(prng: Prng, benign: boolean): SessionParameters {
  return {
    stallTimeoutMs: prng.pick([3_000, 1_000, 300]),
    connectTimeoutMs: prng.pick([10_000, 10_000, 1_000]),
    offline: prng.chance(0.5),
    maxInFlight: prng.pick([1_024, 16, 2]),
    timeoutShare: prng.pick([0, 0.05, 0.2]),
    resetEveryMs: benign ? null : prng.pick([null, 1_000, 300]),
  };
}
