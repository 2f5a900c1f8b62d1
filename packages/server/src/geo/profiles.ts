/**
 * Wide-area network profiles: where replicas sit and what a round trip between two of them costs.
 * One definition serves every driver, so that a figure from `bench:geo` (real processes behind
 * latency-injecting proxies), a seeded simulator run and the local cluster (`npm start --
 * --profile`) all mean the same links.
 *
 * Round trips are medians between cloud regions as public inter-region measurements report them,
 * rounded; they are a model of typical links, not of one provider on one day. Each message's
 * one-way delay is half the round trip, varied by `jitter` (a share of it, uniformly either way).
 */

/** A named set of regions and the round trip between every two of them. */
export interface NetworkProfile {
  readonly name: ProfileName;
  /** One line for usages and reports. */
  readonly description: string;
  /** The regions, in the order replicas are placed in them (replica i in region i mod length). */
  readonly regions: readonly string[];
  /** Round trip in ms between regions a and b (symmetric, 0 on the diagonal: one region's LAN). */
  readonly rttMs: readonly (readonly number[])[];
  /** Round trip in ms between two machines of the same region. */
  readonly localRttMs: number;
  /** Each one-way delay varies uniformly by up to this share of itself, either way. */
  readonly jitter: number;
}

export const PROFILE_NAMES = ['lan', 'us-eu', 'global'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** A full symmetric matrix from the upper triangle given row by row. */
function symmetric(upper: readonly (readonly number[])[]): number[][] {
  const n = upper.length + 1;
  const m: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  upper.forEach((row, i) =>
    row.forEach((v, k) => {
      const j = i + 1 + k;
      m[i]![j] = v;
      m[j]![i] = v;
    }),
  );
  return m;
}

const US_EU_REGIONS = ['us-east', 'us-west', 'eu-west'] as const;
const GLOBAL_REGIONS = ['us-east', 'us-west', 'eu-west', 'ap-northeast', 'ap-southeast'] as const;

/**
 * The three profiles. `us-eu`: us-east–us-west 87 ms, us-east–eu-west 81 ms, us-west–eu-west 130
 * ms. `global` adds Tokyo-like and Sydney-like regions: 80 to 330 ms.
 */
export const PROFILES: Readonly<Record<ProfileName, NetworkProfile>> = {
  lan: {
    name: 'lan',
    description: 'one data centre: 0.5 ms round trips',
    regions: ['lan'],
    rttMs: [[0]],
    localRttMs: 0.5,
    jitter: 0.05,
  },
  'us-eu': {
    name: 'us-eu',
    description: '3 regions (us-east, us-west, eu-west): 81–130 ms round trips',
    regions: US_EU_REGIONS,
    rttMs: symmetric([[87, 81], [130]]),
    localRttMs: 0.5,
    jitter: 0.05,
  },
  global: {
    name: 'global',
    description:
      '5 regions (us-east, us-west, eu-west, ap-northeast, ap-southeast): 81–330 ms round trips',
    regions: GLOBAL_REGIONS,
    rttMs: symmetric([[87, 81, 162, 214], [130, 108, 146], [218, 330], [115]]),
    localRttMs: 0.5,
    jitter: 0.05,
  },
};

/** The region replica (or client placed next to replica) `index` sits in. */
export function regionOf(profile: NetworkProfile, index: number): number {
  return index % profile.regions.length;
}

/** The median round trip in ms between the machines of replicas (or clients) `a` and `b`. */
export function rttBetween(profile: NetworkProfile, a: number, b: number): number {
  if (a === b) return 0;
  const ra = regionOf(profile, a);
  const rb = regionOf(profile, b);
  return ra === rb ? profile.localRttMs : profile.rttMs[ra]![rb]!;
}

/** The median one-way delay in ms from `a` to `b`: half the round trip. */
export function oneWayMs(profile: NetworkProfile, a: number, b: number): number {
  return rttBetween(profile, a, b) / 2;
}

/**
 * The physical lower bound of a strong op's stable latency for a client next to replica `at`
 * among `replicas` replicas: the round trip to the nearest majority (itself counted), since any
 * protocol that commits must hear from a majority. A leader-based protocol pays instead the round
 * trip to the leader plus the leader's own round trip to its nearest majority.
 */
export function nearestMajorityRttMs(
  profile: NetworkProfile,
  at: number,
  replicas: number,
): number {
  const rtts = Array.from({ length: replicas }, (_, j) => rttBetween(profile, at, j)).sort(
    (x, y) => x - y,
  );
  return rtts[Math.floor(replicas / 2)]!;
}

/** The largest round trip between any two of `replicas` replicas. */
export function maxRttMs(profile: NetworkProfile, replicas: number): number {
  let max = 0;
  for (let a = 0; a < replicas; a++)
    for (let b = 0; b < replicas; b++) max = Math.max(max, rttBetween(profile, a, b));
  return max;
}

/** The profile called `name`, or an error that lists the names. */
export function profileNamed(name: string): NetworkProfile {
  if ((PROFILE_NAMES as readonly string[]).includes(name)) return PROFILES[name as ProfileName];
  throw new Error(
    `unknown network profile '${name}'; the profiles are ${PROFILE_NAMES.join(', ')}`,
  );
}
