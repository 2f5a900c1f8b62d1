import { describe, expect, it } from 'vitest';
import { Entry, TENTATIVE, precedes, type Version } from '@creek/replica/core/entry.js';
import type { JsonValue } from '@creek/app';
import { VersionStore } from '@creek/replica/core/version-store.js';

function entry(ts: number, replica: number, eventNo: number, commitSeq = TENTATIVE): Entry {
  const e = new Entry(
    { ts, id: { replica, eventNo }, op: 'x', args: null, strong: false, causalCtx: null },
    null,
    0,
  );
  e.commitSeq = commitSeq;
  return e;
}

function version(writer: Entry, key: string, value: JsonValue | undefined): Version {
  return { writer, key, value };
}

/** A tentative entry after every other one used in these tests. */
const END = entry(Number.MAX_SAFE_INTEGER, 99, 1);

const valueSeen = (store: VersionStore, key: string, reader: Entry) =>
  store.visible(key, reader)?.value;

describe('precedes', () => {
  it('orders tentative entries by (ts, replica, eventNo) and committed ones first, by commitSeq', () => {
    expect(precedes(entry(1, 9, 9), entry(2, 0, 0))).toBe(true);
    expect(precedes(entry(2, 0, 0), entry(1, 9, 9))).toBe(false);
    expect(precedes(entry(1, 1, 9), entry(1, 2, 0))).toBe(true);
    expect(precedes(entry(1, 1, 1), entry(1, 1, 2))).toBe(true);
    expect(precedes(entry(1, 1, 1), entry(1, 1, 1))).toBe(false);
    expect(precedes(entry(100, 1, 1, 0), entry(1, 1, 1))).toBe(true);
    expect(precedes(entry(1, 1, 1), entry(100, 1, 1, 0))).toBe(false);
    expect(precedes(entry(100, 1, 1, 0), entry(1, 1, 1, 1))).toBe(true);
    expect(precedes(entry(1, 1, 1, 1), entry(100, 1, 1, 0))).toBe(false);
    const e = entry(1, 1, 1, 3);
    expect(precedes(e, e)).toBe(false);
    expect(e.committed).toBe(true);
    expect(entry(1, 1, 1).committed).toBe(false);
  });
});

describe('VersionStore', () => {
  it('returns null for a key never written', () => {
    const store = new VersionStore();
    expect(store.visible('k', END)).toBeNull();
    expect(store.scan('', END)).toEqual([]);
  });

  it('shows a tentative reader the last version written before it in (ts, replica, eventNo) order', () => {
    const store = new VersionStore();
    const w1 = entry(10, 1, 1);
    const w2 = entry(10, 2, 1);
    const w3 = entry(10, 2, 2);
    const w4 = entry(20, 0, 5);
    // Installed out of order: the chain must be sorted by writer position.
    store.install([version(w3, 'k', 3)]);
    store.install([version(w1, 'k', 1)]);
    store.install([version(w4, 'k', 4)]);
    store.install([version(w2, 'k', 2)]);

    expect(store.visible('k', entry(5, 0, 1))).toBeNull();
    expect(valueSeen(store, 'k', entry(10, 0, 1))).toBeUndefined();
    expect(store.visible('k', entry(10, 0, 1))).toBeNull();
    expect(valueSeen(store, 'k', entry(10, 1, 2))).toBe(1);
    expect(valueSeen(store, 'k', entry(10, 2, 2))).toBe(2); // w3 itself: sees what precedes it
    expect(valueSeen(store, 'k', entry(10, 2, 3))).toBe(3);
    expect(valueSeen(store, 'k', entry(15, 0, 0))).toBe(3);
    expect(valueSeen(store, 'k', END)).toBe(4);
    expect(store.latest().get('k')?.value).toBe(4);
    expect(store.size()).toBe(4);
    expect(store.keyCount()).toBe(1);
  });

  it('a writer does not see its own version', () => {
    const store = new VersionStore();
    const w = entry(10, 1, 1);
    store.install([version(w, 'k', 'mine')]);
    expect(store.visible('k', w)).toBeNull();
  });

  it('puts committed writers before every tentative one', () => {
    const store = new VersionStore();
    const committedLate = entry(1_000, 1, 1, 0);
    const tentativeEarly = entry(1, 2, 1);
    store.install([version(tentativeEarly, 'k', 'tentative')]);
    store.install([version(committedLate, 'k', 'committed')]);
    // A tentative reader with a smaller ts than the committed writer still sees its version;
    // a tentative reader after the tentative writer sees the tentative version.
    expect(valueSeen(store, 'k', entry(0, 0, 0))).toBe('committed');
    expect(valueSeen(store, 'k', entry(5, 0, 0))).toBe('tentative');
    // A committed reader sees no tentative version, whatever the timestamps.
    expect(valueSeen(store, 'k', entry(5_000, 0, 0, 1))).toBe('committed');
    expect(store.visible('k', entry(5_000, 0, 0, 0))).toBeNull();
    expect(store.latest().get('k')?.value).toBe('tentative');
  });

  it('orders committed writers by commitSeq, not by timestamp', () => {
    const store = new VersionStore();
    const first = entry(900, 1, 1, 0);
    const second = entry(100, 2, 1, 1);
    store.install([version(second, 'k', 'second'), version(first, 'j', 'first-j')]);
    store.install([version(first, 'k', 'first')]);
    expect(valueSeen(store, 'k', entry(0, 0, 0, 1))).toBe('first');
    expect(valueSeen(store, 'k', entry(0, 0, 0, 2))).toBe('second');
    expect(valueSeen(store, 'j', entry(0, 0, 0, 2))).toBe('first-j');
    expect(store.visible('k', entry(0, 0, 0, 0))).toBeNull();
  });

  it('returns a tombstone as a version with an undefined value', () => {
    const store = new VersionStore();
    const put = entry(1, 1, 1);
    const del = entry(2, 1, 2);
    store.install([version(put, 'k', 'v')]);
    store.install([version(del, 'k', undefined)]);
    const seen = store.visible('k', END);
    expect(seen).not.toBeNull();
    expect(seen?.writer).toBe(del);
    expect(seen?.value).toBeUndefined();
    expect(valueSeen(store, 'k', entry(2, 0, 0))).toBe('v');
  });

  describe('remove', () => {
    it('makes a rolled-back version invisible', () => {
      const store = new VersionStore();
      const a = entry(1, 1, 1);
      const b = entry(2, 1, 2);
      const va = version(a, 'k', 'a');
      const vb = [version(b, 'k', 'b'), version(b, 'other', 'b')];
      store.install([va]);
      store.install(vb);
      expect(valueSeen(store, 'k', END)).toBe('b');
      store.remove(vb);
      expect(valueSeen(store, 'k', END)).toBe('a');
      expect(store.visible('other', END)).toBeNull();
      expect(store.keyCount()).toBe(1);
      expect(store.size()).toBe(1);
      store.remove([va]);
      expect(store.visible('k', END)).toBeNull();
      expect(store.keyCount()).toBe(0);
      expect(store.size()).toBe(0);
    });

    it('removes exactly the given version object, not an equal-looking one', () => {
      const store = new VersionStore();
      const w = entry(1, 1, 1);
      const v1 = version(w, 'k', 1);
      store.install([v1]);
      expect(() => store.remove([version(w, 'k', 1)])).toThrow(/no version of 'k' to remove/);
      expect(() => store.remove([version(w, 'absent', 1)])).toThrow(
        /no version of 'absent' to remove/,
      );
      expect(valueSeen(store, 'k', END)).toBe(1);
    });
  });

  describe('reposition', () => {
    it('restores the chain order after a commit reorders writers', () => {
      const store = new VersionStore();
      const a = entry(1, 1, 1);
      const b = entry(2, 2, 1);
      store.install([version(a, 'k', 'a'), version(a, 'j', 'a')]);
      store.install([version(b, 'k', 'b')]);
      const reader = entry(3, 0, 1);
      expect(valueSeen(store, 'k', reader)).toBe('b');

      // b commits first; a stays tentative, so the order is now b, a.
      b.commitSeq = 0;
      store.reposition(['k', 'j', 'missing']);
      expect(valueSeen(store, 'k', reader)).toBe('a');
      expect(valueSeen(store, 'k', entry(0, 0, 0))).toBe('b');
      expect(valueSeen(store, 'k', entry(0, 0, 0, 1))).toBe('b');
      expect(store.latest().get('k')?.value).toBe('a');
      expect(valueSeen(store, 'j', reader)).toBe('a');
    });

    it('sorts a longer chain whose writers were all reordered', () => {
      const store = new VersionStore();
      const writers = [1, 2, 3, 4, 5].map((ts) => entry(ts, 1, ts));
      for (const w of writers) store.install([version(w, 'k', w.req.ts)]);
      // Commit them in reverse timestamp order.
      writers.forEach((w, i) => (w.commitSeq = writers.length - 1 - i));
      store.reposition(['k']);
      const seen: (JsonValue | undefined)[] = [];
      for (let seq = 1; seq <= 5; seq++) seen.push(valueSeen(store, 'k', entry(0, 0, 0, seq)));
      expect(seen).toEqual([5, 4, 3, 2, 1]);
      expect(store.latest().get('k')?.value).toBe(1);
    });
  });

  describe('finalize', () => {
    it('drops the versions older than a finalized one', () => {
      const store = new VersionStore();
      const c1 = entry(1, 1, 1, 0);
      const c2 = entry(2, 1, 2, 1);
      const t = entry(3, 1, 3);
      const v2 = version(c2, 'k', 2);
      store.install([version(c1, 'k', 1)]);
      store.install([v2]);
      store.install([version(t, 'k', 3)]);
      expect(store.size()).toBe(3);
      store.finalize([v2]);
      expect(store.size()).toBe(2);
      expect(store.keyCount()).toBe(1);
      // The version of c1 is gone: a reader before c2 finds nothing.
      expect(store.visible('k', entry(0, 0, 0, 1))).toBeNull();
      expect(valueSeen(store, 'k', entry(0, 0, 0, 2))).toBe(2);
      expect(valueSeen(store, 'k', END)).toBe(3);
    });

    it('leaves a key untouched when the finalized version is already the oldest', () => {
      const store = new VersionStore();
      const c1 = entry(1, 1, 1, 0);
      const v1 = version(c1, 'k', 1);
      store.install([v1]);
      store.finalize([v1]);
      expect(store.size()).toBe(1);
      expect(valueSeen(store, 'k', END)).toBe(1);
    });

    it('deletes a key whose final version is a tombstone', () => {
      const store = new VersionStore();
      const c1 = entry(1, 1, 1, 0);
      const c2 = entry(2, 1, 2, 1);
      const del = version(c2, 'k', undefined);
      store.install([version(c1, 'k', 1), version(c1, 'keep', 'x')]);
      store.install([del]);
      store.finalize([del]);
      expect(store.keyCount()).toBe(1);
      expect(store.size()).toBe(1);
      expect(store.visible('k', END)).toBeNull();
      expect(store.latest().has('k')).toBe(false);
      expect(store.latest().get('keep')?.value).toBe('x');
    });

    it('keeps a final tombstone while a later version of the key exists', () => {
      const store = new VersionStore();
      const c1 = entry(1, 1, 1, 0);
      const c2 = entry(2, 1, 2, 1);
      const t = entry(3, 1, 3);
      const del = version(c2, 'k', undefined);
      store.install([version(c1, 'k', 1)]);
      store.install([del]);
      store.install([version(t, 'k', 'again')]);
      store.finalize([del]);
      expect(store.size()).toBe(2);
      expect(store.keyCount()).toBe(1);
      const seen = store.visible('k', entry(0, 0, 0));
      expect(seen?.writer).toBe(c2);
      expect(seen?.value).toBeUndefined();
      expect(valueSeen(store, 'k', END)).toBe('again');
    });
  });

  describe('scan', () => {
    it('returns live versions of keys with the prefix, sorted by key, as the reader sees them', () => {
      const store = new VersionStore();
      const w1 = entry(1, 1, 1);
      const w2 = entry(2, 1, 2);
      const w3 = entry(3, 1, 3);
      store.install([
        version(w1, 'a/3', 3),
        version(w1, 'a/1', 1),
        version(w1, 'b/1', 'b'),
        version(w1, 'a/4', 4),
        version(w1, 'a', 'bare'),
      ]);
      store.install([version(w2, 'a/2', 2), version(w2, 'a/4', undefined)]);
      store.install([version(w3, 'a/1', 'one')]);

      const scanned = (reader: Entry) =>
        store.scan('a/', reader).map((v) => [v.key, v.value] as const);
      expect(scanned(END)).toEqual([
        ['a/1', 'one'],
        ['a/2', 2],
        ['a/3', 3],
      ]);
      // Before w2: a/2 not yet written, a/4 not yet deleted, a/1 still the old value.
      expect(scanned(entry(2, 0, 0))).toEqual([
        ['a/1', 1],
        ['a/3', 3],
        ['a/4', 4],
      ]);
      expect(scanned(entry(1, 0, 0))).toEqual([]);
      expect(store.scan('', END).map((v) => v.key)).toEqual(['a', 'a/1', 'a/2', 'a/3', 'b/1']);
      expect(store.scan('c', END)).toEqual([]);
    });
  });

  it('counts versions in size() and remembers the peak', () => {
    const store = new VersionStore();
    const c1 = entry(1, 1, 1, 0);
    const c2 = entry(2, 1, 2, 1);
    const t = entry(3, 1, 3);
    const v1 = [version(c1, 'a', 1), version(c1, 'b', 1), version(c1, 'c', 1)];
    store.install(v1);
    expect([store.size(), store.peakSize()]).toEqual([3, 3]);
    const vt = [version(t, 'a', 2)];
    store.install(vt);
    expect([store.size(), store.peakSize()]).toEqual([4, 4]);
    store.remove(vt);
    expect([store.size(), store.peakSize()]).toEqual([3, 4]);
    // Growing again below the peak leaves the peak alone.
    const vt2 = [version(t, 'b', 2)];
    store.install(vt2);
    expect([store.size(), store.peakSize()]).toEqual([4, 4]);
    store.remove(vt2);
    store.install([]);
    expect([store.size(), store.peakSize()]).toEqual([3, 4]);
    const v2 = [version(c2, 'a', 3), version(c2, 'b', undefined)];
    store.install(v2);
    expect([store.size(), store.peakSize()]).toEqual([5, 5]);
    // Finalizing c2 drops a's and b's versions by c1, and b altogether (a final delete).
    store.finalize(v2);
    expect([store.size(), store.peakSize()]).toEqual([2, 5]);
    expect(store.keyCount()).toBe(2);
    expect([...store.latest().keys()].sort()).toEqual(['a', 'c']);
  });
});
