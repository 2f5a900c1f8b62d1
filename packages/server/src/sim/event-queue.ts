/** A min-heap of timed events; ties run in the order they were scheduled, so runs are replayable. */
export class EventQueue<T> {
  private heap: { at: number; seq: number; event: T }[] = [];
  private seq = 0;

  push(at: number, event: T): void {
    const item = { at, seq: this.seq++, event };
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

  pop(): { at: number; event: T } | undefined {
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

  peekTime(): number | undefined {
    return this.heap[0]?.at;
  }

  get size(): number {
    return this.heap.length;
  }
}

function less(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
