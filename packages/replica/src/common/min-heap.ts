/**
 * A min-heap of values by a numeric key; values with equal keys come out in the order they went
 * in, so whatever pops them stays deterministic (the simulator's event queue, CAB's waits).
 */
export class MinHeap<T> {
  private heap: { key: number; seq: number; value: T }[] = [];
  private seq = 0;

  push(key: number, value: T): void {
    const item = { key, seq: this.seq++, value };
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[p]!, item)) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = item;
  }

  pop(): { key: number; value: T } | undefined {
    const h = this.heap;
    const top = h[0];
    if (top === undefined) return undefined;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const c = r < h.length && less(h[r]!, h[l]!) ? r : l;
        if (less(last, h[c]!)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }

  peekKey(): number | undefined {
    return this.heap[0]?.key;
  }

  get size(): number {
    return this.heap.length;
  }

  clear(): void {
    this.heap = [];
  }
}

function less(a: { key: number; seq: number }, b: { key: number; seq: number }): boolean {
  return a.key < b.key || (a.key === b.key && a.seq < b.seq);
}
