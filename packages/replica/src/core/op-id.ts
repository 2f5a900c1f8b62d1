/**
 * Operation identifiers, Creek Algorithm 1 line 1: `id = (replica, eventNo)`, where eventNo is the
 * origin replica's monotonically increasing event counter (starting at 1).
 */
export interface OpId {
  readonly replica: number;
  readonly eventNo: number;
}

/** A compact string key for maps and sets; unique per id. */
export function opKey(id: OpId): string {
  return `${id.replica}.${id.eventNo}`;
}

export function formatOpId(id: OpId): string {
  return `r${id.replica}#${id.eventNo}`;
}

export function sameOpId(a: OpId, b: OpId): boolean {
  return a.replica === b.replica && a.eventNo === b.eventNo;
}

/**
 * Op ids of one replica's successive identities. A replica whose data directory was lost cannot
 * know which of its op ids the cluster still holds, so it never numbers ops under its old origin
 * again: once it has rebuilt its state from its peers it takes a new incarnation, and its ops
 * carry origin `slot + INCARNATION_STRIDE × incarnation`. Replica ids (slots) are below the
 * stride (the CLI takes 0-255), so every origin names one slot and one incarnation.
 */
export const INCARNATION_STRIDE = 256;

/** The origin of a slot's ops in an incarnation. */
export function originOf(slot: number, incarnation: number): number {
  return slot + INCARNATION_STRIDE * incarnation;
}

/** The replica (slot) an origin belongs to. */
export function slotOf(origin: number): number {
  return origin % INCARNATION_STRIDE;
}

/** The incarnation an origin belongs to (0: the slot's first identity). */
export function incarnationOf(origin: number): number {
  return Math.floor(origin / INCARNATION_STRIDE);
}
