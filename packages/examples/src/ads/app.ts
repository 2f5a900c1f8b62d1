/**
 * The ad-serving app (Correctables §4.2, Listing 4; evaluated in §6.3.2): user profiles that
 * reference ads by id, and the ads themselves. One module for both sides: replicas load its default
 * export with `--app`, and clients take its type (`connect<typeof app>`) — the browser page with
 * `import type` only, so no server code reaches the bundle.
 *
 * Keys: `ad/<id>` holds an {@link Ad}, `profile/<user>` a {@link Profile}. They are owned by these
 * ops; the built-in `kv.put` could still write there, so reads check what they find.
 */
import { defineApp, jsonEqual, op, type Tx } from '@creek/app';
import { z } from 'zod';

/** The paper's profiles reference 1 to 40 ads (§6.3.2); this leaves room above that. */
export const MAX_REFS = 64;
/** Ads or profiles per seeding op: keeps each frame far below the protocol's 1 MiB limit. */
export const MAX_BATCH = 500;

const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, "_" or "-"');

export const AdSchema = z.object({
  id: Id,
  advertiser: z.string().min(1).max(100),
  headline: z.string().min(1).max(200),
  /** May contain `{name}`, filled in with the viewer's name when the ad is rendered. */
  body: z.string().max(1_000),
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }),
});
export type Ad = z.infer<typeof AdSchema>;

export const AdRefsSchema = z
  .array(Id)
  .max(MAX_REFS)
  .refine((ids) => new Set(ids).size === ids.length, 'must not name the same ad twice');

export const ProfileSchema = z.object({
  user: Id,
  name: z.string().min(1).max(100),
  /** The ads picked for this user, in display order. */
  adIds: AdRefsSchema,
});
export type Profile = z.infer<typeof ProfileSchema>;

export const adKey = (id: string): string => `ad/${id}`;
export const profileKey = (user: string): string => `profile/${user}`;

function readAd(tx: Tx, id: string): Ad | null {
  const stored = tx.get(adKey(id));
  if (stored === undefined) return null;
  const parsed = AdSchema.safeParse(stored);
  if (!parsed.success)
    throw new Error(`${adKey(id)} does not hold an ad (was it written with kv.put?)`);
  return parsed.data;
}

function readProfile(tx: Tx, user: string): Profile | null {
  const stored = tx.get(profileKey(user));
  if (stored === undefined) return null;
  const parsed = ProfileSchema.safeParse(stored);
  if (!parsed.success)
    throw new Error(`${profileKey(user)} does not hold a profile (was it written with kv.put?)`);
  return parsed.data;
}

/**
 * A profile may only reference ads that exist at its position in the order. Ads are never changed
 * or deleted, so every ad a profile references exists in every state that contains the profile:
 * that is what lets a client fetch the ads with a weak read (see fetch-ads.ts).
 */
function checkRefs(tx: Tx, user: string, adIds: readonly string[]): void {
  for (const id of adIds)
    if (tx.get(adKey(id)) === undefined)
      throw new Error(
        `profile ${user}: ad ${id} does not exist (create ads before referencing them)`,
      );
}

const app = defineApp({
  /** Creates ads. Ads are immutable: writing an existing id again must give the same content. */
  'ads.create': op({
    args: z.object({ ads: z.array(AdSchema).min(1).max(MAX_BATCH) }),
    run(tx, { ads }) {
      let created = 0;
      for (const ad of ads) {
        const existing = readAd(tx, ad.id);
        if (existing === null) {
          tx.put(adKey(ad.id), ad);
          created++;
        } else if (!jsonEqual(existing, ad)) {
          throw new Error(`ad ${ad.id} exists with other content; ads are immutable`);
        }
      }
      return { created };
    },
  }),

  /** The ads with these ids, in the same order; null for an id with no ad (here, yet). */
  'ads.get': op({
    args: z.object({ ids: z.array(Id).max(MAX_REFS) }),
    readOnly: true,
    run: (tx, { ids }) => ids.map((id) => readAd(tx, id)),
  }),

  /** Creates or replaces whole profiles (seeding). */
  'profiles.put': op({
    args: z.object({ profiles: z.array(ProfileSchema).min(1).max(MAX_BATCH) }),
    run(tx, { profiles }) {
      for (const p of profiles) {
        checkRefs(tx, p.user, p.adIds);
        tx.put(profileKey(p.user), p);
      }
      return { written: profiles.length };
    },
  }),

  /** A user's profile (its ad references); null for an unknown user. */
  'profile.get': op({
    args: z.object({ user: Id }),
    readOnly: true,
    run: (tx, { user }) => readProfile(tx, user),
  }),

  /** Re-targets a user: replaces the ads their profile references. Returns the new profile. */
  'profile.setAds': op({
    args: z.object({ user: Id, adIds: AdRefsSchema }),
    run(tx, { user, adIds }) {
      const profile = readProfile(tx, user);
      if (profile === null) throw new Error(`no profile for user ${user}`);
      checkRefs(tx, user, adIds);
      const next: Profile = { ...profile, adIds };
      tx.put(profileKey(user), next);
      return next;
    },
  }),
});

export default app;
export type AdsApp = typeof app;
