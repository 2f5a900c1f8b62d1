import * as z from 'zod';

/**
 * Seen vectors: per origin, how many of its ops a session has seen. An origin is one incarnation
 * of one replica: replica `id` numbers its ops under origin `id` until it loses its disk, then
 * under `id + 256`, `id + 512`, ... (INCARNATION_STRIDE). In memory a seen vector is an array
 * indexed by origin, sparse above the first incarnation's origins; on the wire it is `seen` (the
 * counts of origins 0 to 255, dense, as every release sent it) and `seenLater` (the later
 * incarnations' origins that have a count, as pairs). A build that knows no `seenLater` drops it:
 * it then keeps session guarantees for first incarnations' ops only, as it always did.
 */
export const INCARNATION_STRIDE = 256;

/** The largest origin a seen vector names: an incarnation of replica 255 below 2^31. */
const MAX_ORIGIN = 2 ** 31 - 1;

/** At most this many entries in each part of a seen vector on the wire. */
export const MAX_SEEN_ENTRIES = 64;

/** Later incarnations' counts, as [origin, count] pairs with origin ≥ INCARNATION_STRIDE. */
export const SeenLaterSchema = z
  .array(
    z.tuple([
      z.number().int().min(INCARNATION_STRIDE).max(MAX_ORIGIN),
      z.number().int().nonnegative(),
    ]),
  )
  .max(MAX_SEEN_ENTRIES);

/** A seen vector on the wire: the two fields a frame carries it in, both optional. */
export interface SeenOnWire {
  seen?: number[];
  seenLater?: [number, number][];
}

/** A seen vector (indexed by origin, possibly sparse) as frame fields; none for an empty one. */
export function seenOnWire(counts: readonly number[] | undefined): SeenOnWire {
  if (counts === undefined) return {};
  const dense: number[] = [];
  const later: [number, number][] = [];
  counts.forEach((n, origin) => {
    if (origin < INCARNATION_STRIDE) dense[origin] = n;
    else if (n > 0) later.push([origin, n]);
  });
  for (let i = 0; i < dense.length; i++) dense[i] ??= 0;
  return {
    ...(dense.length === 0 ? {} : { seen: dense }),
    ...(later.length === 0 ? {} : { seenLater: later }),
  };
}

/** The seen vector a frame carries (indexed by origin), or undefined if it carries none. */
export function seenFromWire(f: {
  readonly seen?: readonly number[] | undefined;
  readonly seenLater?: readonly (readonly [number, number])[] | undefined;
}): number[] | undefined {
  if (f.seen === undefined && f.seenLater === undefined) return undefined;
  const out = [...(f.seen ?? [])];
  for (const [origin, n] of f.seenLater ?? []) out[origin] = Math.max(out[origin] ?? 0, n);
  return out;
}

/** The most of two seen vectors, origin by origin (holes count as 0). */
export function maxSeen(a: readonly number[] | undefined, b: readonly number[]): number[] {
  const out: number[] = [];
  a?.forEach((n, origin) => (out[origin] = n));
  b.forEach((n, origin) => (out[origin] = Math.max(out[origin] ?? 0, n)));
  return out;
}

/** The origins a seen vector has a count for, with the count (holes left out). */
export function seenEntries(counts: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  counts.forEach((n, origin) => out.push([origin, n]));
  return out;
}
