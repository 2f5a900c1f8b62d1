import { z } from 'zod';
import { MAX_REFS } from './app.js';
import { ClusterFlagsSchema, parseFlags } from '../shared/flags.js';

export const USAGE = `usage: npm run example:ads -- [flags]

  cluster (default: start a local one):
    --replicas N        replicas of the local cluster (3)
    --delay MS          one-way delay between replicas of the local cluster (0), e.g. 20
    --urls U1,U2 --token T   use a running cluster instead (its app must be src/ads/app.ts)
  data:
    --users N           user profiles (1000)
    --ads N             ads (2300)
    --refs N            each profile references 1 to N ads (40)
    --seed N            seed of the data, the key choice and the writer (1)
  load:
    --fetches N         measured fetches, half speculative and half strong-only, alternating (400)
    --warmup N          fetches before measuring (40)
    --concurrency N     readers, each with one fetch outstanding (4)
    --writes N          background weak profile writes per second (20); 0 for none
    --ad-reads weak|strong   how ads are fetched (weak: they are immutable; strong: as the paper's R=2)
  page:
    --serve [PORT]      seed, then serve the page (no load) until Ctrl-C`;

export const AdsFlagsSchema = ClusterFlagsSchema.extend({
  users: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  ads: z.coerce.number().int().min(1).max(10_000_000).default(2_300),
  refs: z.coerce.number().int().min(1).max(MAX_REFS).default(40),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(1),
  fetches: z.coerce.number().int().min(2).max(1_000_000).default(400),
  warmup: z.coerce.number().int().min(0).max(1_000_000).default(40),
  concurrency: z.coerce.number().int().min(1).max(1_000).default(4),
  writes: z.coerce.number().min(0).max(100_000).default(20),
  'ad-reads': z.enum(['weak', 'strong']).default('weak'),
}).refine((f) => f.refs <= f.ads, { message: 'cannot exceed --ads', path: ['refs'] });
export type AdsFlags = z.infer<typeof AdsFlagsSchema>;

export function parseAdsFlags(argv: readonly string[]): AdsFlags {
  return parseFlags(argv, AdsFlagsSchema, USAGE);
}
