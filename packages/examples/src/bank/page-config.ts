import { z } from 'zod';
import { AccountSchema } from './account.js';

/**
 * What the page server hands the bank's page (`window.CREEK_PAGE`). A module of its own, with
 * nothing Node-only in it, so the browser script can import and check it.
 */
export const PageConfigSchema = z.object({
  token: z.string(),
  account: AccountSchema,
  /** Interest per accrual, in basis points (100 = 1 %). */
  rateBps: z.number().int().min(0).max(10_000),
  /** After this long (ms) with no server answering, the page is offline and queues operations. */
  offlineAfterMs: z.number().int().min(100).max(600_000).default(3_000),
  /**
   * The cluster verifies users' tokens and the page server signs dev users in: the names the
   * picker offers, and the account's owner (whom the page opens it for). Absent: the page's
   * clients are anonymous, for a cluster that verifies no tokens.
   */
  signIn: z
    .object({ users: z.array(z.string().min(1)).min(1), owner: z.string().min(1) })
    .optional(),
  /**
   * Each branch: a name, the replica it talks to, its URLs (its replica first) and, with
   * `signIn`, the user it is signed in as at first.
   */
  branches: z
    .array(
      z.object({
        name: z.string(),
        replica: z.number().int().min(0),
        urls: z.array(z.string()).min(1),
        user: z.string().min(1).optional(),
      }),
    )
    .min(1),
});
export type PageConfig = z.infer<typeof PageConfigSchema>;
