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
