import type { OpId } from './op-id.js';

/**
 * A set of operation ids kept as a dotted version vector (Creek §4.2, citing Preguiça et al.):
 * per origin replica, a contiguous prefix `1..base` plus the "dots" above it that are known out of
 * order. The replica's causalCtx (Algorithm 1 line 7) is one: it has gaps wherever an origin's strong
 * operation is not yet CAB-delivered (its id enters the context only then, line 34) and wherever
 * gossip delivered an origin's operations out of order.
 */
export class DottedVersionVector {
  private readonly entries = new Map<number, { base: number; dots: Set<number> }>();

  static fromPrefixes(prefixes: Iterable<readonly [number, number]>): DottedVersionVector {
    const v = new DottedVersionVector();
    for (const [replica, base] of prefixes) {
      if (base > 0) v.entries.set(replica, { base, dots: new Set() });
    }
    return v;
  }

  has(id: OpId): boolean {
    const e = this.entries.get(id.replica);
    if (e === undefined) return false;
    return id.eventNo <= e.base || e.dots.has(id.eventNo);
  }

  add(id: OpId): void {
    let e = this.entries.get(id.replica);
    if (e === undefined) {
      e = { base: 0, dots: new Set() };
      this.entries.set(id.replica, e);
    }
    if (id.eventNo <= e.base) return;
    if (id.eventNo === e.base + 1) {
      e.base++;
      // Absorb dots that became contiguous.
      while (e.dots.size > 0 && e.dots.delete(e.base + 1)) e.base++;
    } else {
      e.dots.add(id.eventNo);
    }
  }

  /** Adds every id of `replica` up to `eventNo`. */
  addPrefix(replica: number, eventNo: number): void {
    let e = this.entries.get(replica);
    if (e === undefined) {
      if (eventNo <= 0) return;
      e = { base: 0, dots: new Set() };
      this.entries.set(replica, e);
    }
    if (eventNo <= e.base) return;
    e.base = eventNo;
    for (const d of e.dots) if (d <= eventNo) e.dots.delete(d);
    while (e.dots.delete(e.base + 1)) e.base++;
  }

  /** Adds every id of `other` (set union). */
  addAll(other: DottedVersionVector): void {
    for (const [replica, o] of other.entries) {
      this.addPrefix(replica, o.base);
      for (const d of o.dots) this.add({ replica, eventNo: d });
    }
  }

  /**
   * True when every id in `other` is in this set, or (`also`) among one origin's extra ids counted
   * as if they were in it.
   */
  includes(
    other: DottedVersionVector,
    also?: { readonly replica: number; readonly eventNos: ReadonlySet<number> },
  ): boolean {
    for (const [replica, o] of other.entries) {
      const e = this.entries.get(replica);
      const extra = also !== undefined && also.replica === replica ? also.eventNos : undefined;
      if (o.base > 0 && (e === undefined || e.base < o.base)) {
        // The prefix may still be covered by this vector's dots (or the extra ids).
        for (let n = (e?.base ?? 0) + 1; n <= o.base; n++)
          if (!e?.dots.has(n) && extra?.has(n) !== true) return false;
      }
      for (const d of o.dots)
        if (!this.has({ replica, eventNo: d }) && extra?.has(d) !== true) return false;
    }
    return true;
  }

  /** The contiguous prefix of each origin, without dots. */
  prefixes(): DottedVersionVector {
    const v = new DottedVersionVector();
    for (const [replica, e] of this.entries) {
      if (e.base > 0) v.entries.set(replica, { base: e.base, dots: new Set() });
    }
    return v;
  }

  /** Calls `fn` with each origin and its contiguous prefix (`1..base`), dots aside. */
  forEachBase(fn: (replica: number, base: number) => void): void {
    for (const [replica, e] of this.entries) fn(replica, e.base);
  }

  /** The origins with an id in the set. */
  origins(): number[] {
    const out: number[] = [];
    for (const [replica, e] of this.entries) if (e.base > 0 || e.dots.size > 0) out.push(replica);
    return out;
  }

  /** The contiguous prefix known for one origin. */
  base(replica: number): number {
    return this.entries.get(replica)?.base ?? 0;
  }

  /** Number of dots held above the prefixes; bounded by out-of-order and pending-strong gaps. */
  dotCount(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.dots.size;
    return n;
  }

  clone(): DottedVersionVector {
    const v = new DottedVersionVector();
    for (const [replica, e] of this.entries)
      v.entries.set(replica, { base: e.base, dots: new Set(e.dots) });
    return v;
  }

  /** A plain, serializable form: `{ [replica]: [base, ...dots] }`. */
  toJSON(): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const [replica, e] of [...this.entries].sort((a, b) => a[0] - b[0])) {
      out[String(replica)] = [e.base, ...[...e.dots].sort((a, b) => a - b)];
    }
    return out;
  }

  static fromJSON(json: Record<string, readonly number[]>): DottedVersionVector {
    const v = new DottedVersionVector();
    for (const [replica, [base = 0, ...dots]] of Object.entries(json)) {
      const r = Number(replica);
      v.entries.set(r, { base, dots: new Set() });
      for (const d of dots) v.add({ replica: r, eventNo: d });
    }
    return v;
  }

  toString(): string {
    return JSON.stringify(this.toJSON());
  }
}
