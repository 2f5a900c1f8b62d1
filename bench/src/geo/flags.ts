/** bench:geo's flags, checked before anything starts. */
import { PROFILE_NAMES, profileNamed, type NetworkProfile } from '@creek/server/geo';
import { flagPairs } from '../cli-flags.js';

export interface GeoFlags {
  readonly profile: NetworkProfile;
  /** Sequential ops per cell and client region. */
  readonly ops: number;
  /** Ad fetches per variant and client region. */
  readonly ads: number;
  /** Seconds of each throughput cell (after one of warm-up). */
  readonly seconds: number;
  /** The outstanding ops of the throughput cells. */
  readonly outstanding: readonly number[];
  /** How Creek's replicas serve strong reads (`creek start --reads`). */
  readonly reads: 'leader' | 'quorum';
  /** Creek's timers (`creek start --network`): `wan` unless the profile is `lan`. */
  readonly network: 'lan' | 'wan';
}

export const USAGE = `npm run bench:geo [-- --profile ${PROFILE_NAMES.join('|')} --ops 60 --ads 20 --seconds 5 --outstanding 64,256 --reads quorum|leader --network wan|lan]

Creek, etcd 3.4 and Creek without speculation (SMR) on the same emulated WAN links (Toxiproxy):
3 replicas for lan and us-eu, 5 for global, a client next to each. --ops: sequential ops per
cell and region; --ads: ad fetches per variant and region; --seconds: each throughput cell;
--outstanding: comma-separated in-flight counts for throughput. Creek's replicas run as an
operator across regions would start them: strong reads by quorum (--reads), the WAN timers
(--network; lan for the lan profile) and replica 0 as the preferred leader. CREEK_BENCH_RESULTS=off
writes no results file.`;

const RANGES = {
  ops: [10, 100_000],
  ads: [0, 10_000],
  seconds: [1, 600],
} as const;

/** Digits only ('1e3', '0x10' and ' 5' are refused); NaN otherwise. */
const whole = (raw: string): number => (/^\d{1,9}$/.test(raw) ? Number(raw) : NaN);

export function parseGeoFlags(argv: readonly string[], fail: (message: string) => never): GeoFlags {
  let profile = profileNamed('us-eu');
  const n: Record<keyof typeof RANGES, number> = { ops: 60, ads: 20, seconds: 5 };
  let outstanding: number[] = [64, 256];
  let reads: GeoFlags['reads'] = 'quorum';
  let network: GeoFlags['network'] | null = null;
  const known = (name: string): boolean =>
    ['profile', 'outstanding', 'reads', 'network'].includes(name) || name in RANGES;
  for (const [name, raw] of flagPairs(argv, USAGE, known, fail)) {
    if (name === 'reads') {
      if (raw !== 'leader' && raw !== 'quorum') fail('--reads must be leader or quorum');
      reads = raw;
      continue;
    }
    if (name === 'network') {
      if (raw !== 'lan' && raw !== 'wan') fail('--network must be lan or wan');
      network = raw;
      continue;
    }
    if (name === 'profile') {
      try {
        profile = profileNamed(raw);
      } catch (err) {
        fail(`--profile: ${(err as Error).message}`);
      }
      continue;
    }
    if (name === 'outstanding') {
      const list = raw.split(',').map(whole);
      if (list.some((x) => !(x >= 1 && x <= 4096)))
        fail('--outstanding must be comma-separated whole numbers from 1 to 4096');
      outstanding = list;
      continue;
    }
    const [lo, hi] = RANGES[name as keyof typeof RANGES];
    const v = whole(raw);
    if (!(v >= lo && v <= hi)) fail(`--${name} must be a whole number from ${lo} to ${hi}`);
    n[name as keyof typeof RANGES] = v;
  }
  return {
    profile,
    ...n,
    outstanding,
    reads,
    network: network ?? (profile.name === 'lan' ? 'lan' : 'wan'),
  };
}

/** Replicas (and etcd members) for a profile: one per region, at least 3. */
export function replicasFor(profile: NetworkProfile): number {
  return Math.max(3, profile.regions.length);
}
