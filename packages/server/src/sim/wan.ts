import {
  maxRttMs,
  oneWayMs,
  profileNamed,
  regionOf,
  rttBetween,
  TIMERS,
  type NetworkProfile,
  type PaxosTimers,
} from '../geo/index.js';
import { Prng } from './prng.js';

/** The WAN profiles a seed may run on (`lan` is what the uniform delays already cover). */
export const WAN_PROFILES = ['us-eu', 'global'] as const;
export type WanProfileName = (typeof WAN_PROFILES)[number];

/** One seed in this many runs on a WAN profile. */
export const WAN_SHARE = 5;

/** The longest one-way delay a scaled profile reaches (before jitter). */
const LONGEST_ONE_WAY_MS = 200;

/**
 * A run on a WAN profile (SimParameters.wan): replica i sits in the profile's region
 * `regionOf(i)`, and each message between two replicas takes the profile's one-way delay times
 * `scale`, varied by the profile's jitter, instead of the uniform [minDelayMs, maxDelayMs]. The
 * replicas run the WAN timers (`timers`). Clients still sit next to their replica.
 */
export interface SimWan {
  readonly profile: WanProfileName;
  /** Every delay of the profile is multiplied by this: 1, or up to a 200 ms longest one-way. */
  readonly scale: number;
  readonly timers: PaxosTimers;
}

/**
 * Whether a seed's run is on a WAN profile, and which. `network` (SimConfig.network) 'mix': one
 * seed in WAN_SHARE, from a stream of its own (`prng`, the run's stream named 'wan'), so that no
 * other draw of a seed moves; a profile's name: that profile; 'uniform': none. The draws are made
 * all the same.
 */
export function drawWan(prng: Prng, network: WanProfileName | 'uniform' | 'mix'): SimWan | null {
  const on = prng.chance(1 / WAN_SHARE);
  const drawnProfile = prng.pick(WAN_PROFILES);
  const stretch = prng.chance(0.5);
  if (network === 'uniform' || (network === 'mix' && !on)) return null;
  const profile = network === 'mix' ? drawnProfile : network;
  const longest = maxRttMs(profileNamed(profile), profileNamed(profile).regions.length) / 2;
  // Scaled so that the longest link reaches LONGEST_ONE_WAY_MS, or as the profile is.
  const scale = stretch ? Math.floor((100 * LONGEST_ONE_WAY_MS) / longest) / 100 : 1;
  return { profile, scale, timers: TIMERS.wan };
}

/** The WAN profile of `seed`'s run on `network` (SimConfig.network), from its stream 'wan'. */
export function wanOf(seed: number, network: WanProfileName | 'uniform' | 'mix'): SimWan | null {
  return drawWan(Prng.named(seed, 'wan'), network);
}

/** Simulated ms of workload on a WAN profile (SimConfig.workloadMs): three election timeouts. */
export const WAN_WORKLOAD_MS = 3 * TIMERS.wan.electionTimeoutMs;

/**
 * The Paxos timers of a run's replicas: the WAN ones on a profile (none on uniform delays: the
 * host's defaults, made for them); with the planted bug, an election timeout of half the shortest
 * round trip between two regions (on uniform delays, the shortest one-way delay).
 */
export function paxosTimers(
  /** SimConfig.unsafeElectionBelowRtt, the planted bug. */
  electionBelowRtt: boolean,
  wan: SimWan | null,
  minDelayMs: number,
  replicas: number,
): Partial<PaxosTimers> {
  const timers: Partial<PaxosTimers> = wan === null ? {} : wan.timers;
  if (!electionBelowRtt) return timers;
  const below = wan === null ? minDelayMs : shortestRegionRttMs(wan, replicas) / 2;
  return { ...timers, electionTimeoutMs: below };
}

/** The delays of a WAN run's links, as SimNetwork draws them. */
export class WanLinks {
  private readonly profile: NetworkProfile;

  constructor(private readonly wan: SimWan) {
    this.profile = profileNamed(wan.profile);
  }

  /** A message's one-way delay from host `from` to host `to`, with `u` uniform in [0, 1). */
  delay(from: number, to: number, u: number): number {
    const base = oneWayMs(this.profile, from, to) * this.wan.scale;
    return base * (1 + this.profile.jitter * (2 * u - 1));
  }
}

/** The longest one-way delay between any two of `replicas` replicas, jitter included. */
export function longestOneWayMs(wan: SimWan, replicas: number): number {
  const profile = profileNamed(wan.profile);
  return (maxRttMs(profile, replicas) / 2) * wan.scale * (1 + profile.jitter);
}

/** The shortest round trip between two replicas in different regions, scaled (no jitter). */
export function shortestRegionRttMs(wan: SimWan, replicas: number): number {
  const profile = profileNamed(wan.profile);
  let min = Number.POSITIVE_INFINITY;
  for (let a = 0; a < replicas; a++)
    for (let b = 0; b < replicas; b++)
      if (regionOf(profile, a) !== regionOf(profile, b))
        min = Math.min(min, rttBetween(profile, a, b));
  return (Number.isFinite(min) ? min : profile.localRttMs) * wan.scale;
}
