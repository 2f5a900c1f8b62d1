/**
 * `npm run bench:geo-paths`: what each way of reaching a strong op's stable answer would cost per
 * region under a network profile, from the latency model of geo-paths/model.ts (message patterns
 * over the profile's links, seeded jitter), beside each region's physical bound (the round trip
 * to its nearest majority). It compares today's leader-based path, with the leader where it is
 * elected today (the lowest-numbered replica) and where it is best placed, with the options of
 * docs/architecture/beyond-one-leader.md: quorum reads and leaderless fast paths.
 *
 * A model, not a run of the protocols: it starts no process and takes seconds. `bench:geo` runs
 * the real replicas over emulated links.
 */
import {
  PROFILE_NAMES,
  nearestMajorityRttMs,
  profileNamed,
  type NetworkProfile,
} from '@creek/server/geo';
import { Prng } from '@creek/server/sim';
import { flagPairs } from './cli-flags.js';
import { bestLeader, sampleLatencies, type PathOption, type PathSetup } from './geo-paths/model.js';
import { recordResults } from './results.js';
import { median, quantile } from './stats.js';

interface Flags {
  profile: NetworkProfile;
  ops: number;
  seed: number;
  conflicts: number;
}

const USAGE = `npm run bench:geo-paths [-- --profile ${PROFILE_NAMES.join('|')} --ops 5000 --seed 1 --conflicts 0.02]
  --profile    the network profile (default global: 5 replicas, one per region; lan and us-eu: 3)
  --ops        ops drawn per region and option
  --seed       the seed of the jitter and conflict draws
  --conflicts  share of strong ops that conflict with a concurrent one (the fast paths' slow path)`;

function parse(argv: readonly string[]): Flags {
  const f: Flags = { profile: profileNamed('global'), ops: 5000, seed: 1, conflicts: 0.02 };
  const fail = (message: string): never => {
    console.error(`bench:geo-paths: ${message}`);
    process.exit(2);
  };
  const known = ['profile', 'ops', 'seed', 'conflicts'];
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => known.includes(n), fail)) {
    if (name === 'profile') {
      try {
        f.profile = profileNamed(raw);
      } catch (err) {
        fail((err as Error).message);
      }
      continue;
    }
    const n = Number(raw);
    if (name === 'conflicts') {
      if (!(raw.trim() !== '' && n >= 0 && n <= 1))
        fail('--conflicts must be a number from 0 to 1');
      f.conflicts = n;
      continue;
    }
    const [lo, hi] = name === 'ops' ? [10, 1_000_000] : [0, 2 ** 32 - 1];
    if (!Number.isInteger(n) || n < lo || n > hi)
      fail(`--${name} must be a whole number from ${lo} to ${hi}`);
    if (name === 'ops') f.ops = n;
    else f.seed = n;
  }
  return f;
}

const flags = parse(process.argv.slice(2));
const out = recordResults('geo-paths', 'markdown');
const profile = flags.profile;
const replicas = profile.regions.length === 1 ? 3 : profile.regions.length;
const today = 0;
const placed = bestLeader(profile, replicas);

interface Column {
  readonly title: string;
  readonly option: PathOption;
  readonly leader: number;
}
const columns: Column[] = [
  {
    title: `leader write (leader ${profile.regions[today % profile.regions.length]})`,
    option: 'leader',
    leader: today,
  },
  {
    title: `leader write (placed: ${profile.regions[placed % profile.regions.length]})`,
    option: 'leader',
    leader: placed,
  },
  { title: 'leader read (today)', option: 'leader-read', leader: today },
  { title: 'quorum read', option: 'quorum-read', leader: today },
  { title: 'fast quorum write', option: 'fast-quorum', leader: today },
  { title: 'all-agree write (CC-Paxos)', option: 'all-agree', leader: today },
];

out.print(
  `Strong-op latency by region under the \`${profile.name}\` profile (${profile.description}), ${replicas} replicas, one client region per replica; ${flags.ops} ops per cell, seed ${flags.seed}, ${(100 * flags.conflicts).toFixed(0)} % conflicting ops. Each cell: p50 / p99 ms, and p50 ÷ the region's bound (its round trip to its nearest majority).`,
);
out.print('');
out.print(`| region | bound | ${columns.map((c) => c.title).join(' | ')} |`);
out.print(`| --- | ---: | ${columns.map(() => '---:').join(' | ')} |`);
const prng = new Prng(flags.seed);
const ratios = columns.map(() => [] as number[]);
for (let r = 0; r < replicas; r++) {
  const bound = nearestMajorityRttMs(profile, r, replicas);
  const cells = columns.map((c, i) => {
    const setup: PathSetup = { profile, replicas, leader: c.leader, conflicts: flags.conflicts };
    const xs = sampleLatencies(setup, c.option, r, flags.ops, prng);
    const p50 = median(xs);
    ratios[i]!.push(p50 / bound);
    return `${p50.toFixed(0)} / ${quantile(xs, 0.99).toFixed(0)} (${(p50 / bound).toFixed(2)}×)`;
  });
  out.print(
    `| ${profile.regions[r % profile.regions.length]} | ${bound.toFixed(0)} | ${cells.join(' | ')} |`,
  );
}
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const worst = (xs: readonly number[]): number => Math.max(...xs);
out.print(`| mean ÷ bound | | ${ratios.map((xs) => `${mean(xs).toFixed(2)}×`).join(' | ')} |`);
out.print(`| worst ÷ bound | | ${ratios.map((xs) => `${worst(xs).toFixed(2)}×`).join(' | ')} |`);
out.save();
