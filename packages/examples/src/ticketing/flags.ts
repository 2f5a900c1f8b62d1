import { z } from 'zod';
import { ClusterFlagsSchema, parseFlags } from '../shared/flags.js';

export const TicketingFlagsSchema = ClusterFlagsSchema.extend({
  /** Tickets the organizer stocks for each run (and for the page's event). */
  tickets: z.coerce.number().int().min(1).max(100_000).default(500),
  /** Concurrent retailers, each with its own client on its own replica (round robin). */
  retailers: z.coerce.number().int().min(1).max(64).default(4),
  /** Sell on the preliminary view only while it leaves more than this many in stock (§4.3). */
  threshold: z.coerce.number().int().min(0).max(100_000).default(20),
  runs: z.coerce.number().int().min(1).max(100).default(5),
});
export type TicketingFlags = z.infer<typeof TicketingFlagsSchema>;

export const USAGE = `usage: npm run example:ticketing -- [flags]

  --tickets N      tickets stocked per run (default 500)
  --retailers R    concurrent retailers, one client each, spread over the replicas (default 4)
  --threshold T    sell on the preliminary view while it leaves more than T in stock (default 20)
  --runs K         runs, each a new event with a fresh stock (default 5)
  --replicas N     replicas of the local cluster (default 3)
  --delay MS       one-way delay between replicas of the local cluster (default 0)
  --urls U1,U2 --token TOKEN   use a running cluster (its replicas must run this app)
  --identity DIR   with --urls: the data directory of its dev identity (creek dev's), to sign
                   the organizer and the retailers in; without it they are anonymous
  --serve [PORT]   serve the web page (a "buy" button) instead of running the load`;

export function parseTicketingFlags(argv: readonly string[]): TicketingFlags {
  return parseFlags(argv, TicketingFlagsSchema, USAGE);
}
