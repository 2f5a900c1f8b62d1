import { describe, expect, it } from 'vitest';
import { checksum, SimDisk } from '../../src/sim/disk.js';
import { Prng } from '../../src/sim/prng.js';
import { flipBit } from '../../src/sim/record-damage.js';

type Rec = { readonly n: number; readonly text: string };
const rec = (n: number): Rec => ({ n, text: `record ${n}` });

/** A disk with checksums, and `count` records written at time 0, durable 1 ms later. */
function diskWith(count: number, supersedesAt: readonly number[] = []): SimDisk<Rec> {
  const d = new SimDisk<Rec>((r) => JSON.stringify(r));
  for (let i = 1; i <= count; i++) d.write(0, 1, rec(i), supersedesAt.includes(i));
  return d;
}

describe('the simulated disk', () => {
  it('checksums with the CRC-32 the runtime computes with node:zlib', async () => {
    const { crc32 } = await import('node:zlib');
    for (const text of ['', 'a', '{"layer":"cab","record":{"kind":"promise","ballot":7}}', 'é€'])
      for (const prev of [0, 1, 0xdeadbeef]) expect(checksum(text, prev)).toBe(crc32(text, prev));
  });

  it('reads back what it holds and finds nothing wrong with an undamaged disk', () => {
    const d = diskWith(5);
    d.crash(2);
    expect(d.load(true)).toEqual({ records: [1, 2, 3, 4, 5].map(rec), damage: null });
  });

  it('finds a record whose bit flipped at rest, and reads it as it is when not asked to check', () => {
    const d = diskWith(4);
    d.crash(2);
    d.corrupt(2, (r) => ({ ...r, n: r.n ^ 2 }));
    expect(d.load(true).damage).toBe('record 3 of 4 fails its checksum');
    // The planted bug reads every record as it comes.
    expect(d.load(false)).toEqual({
      records: [rec(1), rec(2), { n: 1, text: 'record 3' }, rec(4)],
      damage: null,
    });
  });

  it('finds a record read back as the older version a checkpoint replaced', () => {
    // Records 1–3, then a checkpoint (4) that supersedes them, then 5 and 6: the disk holds 4, 5,
    // 6, at the positions 1, 2 and 3 held before the checkpoint was durable.
    const d = diskWith(3);
    d.crash(2);
    d.write(2, 1, rec(4), true);
    d.write(2, 1, rec(5));
    d.write(2, 1, rec(6));
    d.crash(10);
    expect(d.read()).toEqual([4, 5, 6].map(rec));
    expect(d.stalePositions()).toEqual([0, 1, 2]);
    d.stale(1);
    expect(d.read()).toEqual([4, 2, 6].map(rec));
    // Its own checksum holds: the chain to the record before it does not.
    expect(d.load(true).damage).toMatch(/^record 2 of 3 does not follow the record before it/);
  });

  it('makes no stale fault no checksum could find: a disk read back whole as it was', () => {
    const d = diskWith(2);
    d.crash(2);
    d.write(2, 1, rec(3), true);
    d.crash(10);
    // The checkpoint alone: its older version (record 1) with nothing around it is a consistent,
    // older disk.
    expect(d.read()).toEqual([rec(3)]);
    expect(d.stalePositions()).toEqual([]);
  });

  it('a power loss loses what was not durable, and with a tear leaves the first of it in part', () => {
    const d = diskWith(2);
    d.write(5, 10, rec(3));
    d.write(5, 10, rec(4));
    expect(d.crash(6, 'power', (r) => ({ ...r, text: 'torn' }))).toBe(1);
    expect(d.read()).toEqual([rec(1), rec(2), { n: 3, text: 'torn' }]);
    expect(d.readWhole()).toEqual([rec(1), rec(2)]);
    expect(d.load(true).damage).toBe('record 3 of 3 fails its checksum');
  });

  it('a torn checkpoint drops nothing it would have superseded', () => {
    const d = diskWith(2);
    d.write(5, 10, rec(3), true);
    d.crash(6, 'power', (r) => ({ ...r, text: 'torn' }));
    expect(d.readWhole()).toEqual([rec(1), rec(2)]);
    expect(d.size).toBe(3);
  });

  it('a process crash keeps every write issued: the operating system had them', () => {
    const d = diskWith(2);
    d.write(5, 10, rec(3), true);
    d.write(5, 10, rec(4));
    expect(d.crash(6, 'process')).toBe(0);
    // The checkpoint's write completed: what it superseded is dropped.
    expect(d.read()).toEqual([rec(3), rec(4)]);
    expect(d.load(true).damage).toBeNull();
  });

  it('without checksums, it keeps none and reports no damage', () => {
    const d = new SimDisk<Rec>();
    d.write(0, 1, rec(1));
    d.crash(2);
    d.corrupt(0, (r) => ({ ...r, n: 9 }));
    expect(d.load(true)).toEqual({ records: [{ n: 9, text: 'record 1' }], damage: null });
  });
});

describe('a flipped bit', () => {
  it('changes one field of a copy, which still makes sense, and leaves the original whole', () => {
    const original = Object.freeze({
      layer: 'cab',
      record: Object.freeze({ kind: 'accept', instance: 12, ballot: 1_700_000_000_123, ok: true }),
    });
    const prng = new Prng(7);
    for (let i = 0; i < 50; i++) {
      const damaged = flipBit(original, prng);
      expect(damaged).not.toEqual(original);
      expect(Object.isFrozen(damaged)).toBe(true);
      const changed = [
        damaged.layer !== original.layer,
        ...Object.keys(original.record).map(
          (k) =>
            damaged.record[k as keyof typeof original.record] !==
            original.record[k as keyof typeof original.record],
        ),
      ].filter(Boolean);
      expect(changed).toHaveLength(1);
      // Numbers stay integers (a timestamp stays exact), strings keep their length.
      expect(Number.isSafeInteger(damaged.record.ballot)).toBe(true);
      expect(damaged.layer).toHaveLength(3);
    }
    expect(original.record.instance).toBe(12);
  });

  it('leaves class instances whole: a record with nothing else reads back as it was', () => {
    class Context {
      constructor(readonly n: number) {}
    }
    const r = { ctx: new Context(3) };
    expect(flipBit(r, new Prng(1))).toBe(r);
  });
});
