/**
 * Seen vectors keyed by origin (seen.ts): the first incarnations' counts travel in `seen` as every
 * release sent them, later incarnations' (a replica that lost its disk numbers its ops under
 * `id + 256 × incarnation`) in `seenLater`; context tokens carry both.
 */
import { describe, expect, it } from 'vitest';
import {
  ClientFrameSchema,
  contextTokenPayload,
  maxSeen,
  readContextToken,
  seenEntries,
  seenFromWire,
  seenOnWire,
  ServerFrameSchema,
} from '../src/index.js';

/** A seen vector with counts for origins 0-2 and for 257 (replica 1's second incarnation). */
function vector(): number[] {
  const v = [4, 7, 2];
  v[257] = 5;
  return v;
}

const MAC = 'A'.repeat(22);

describe('seen vectors on the wire', () => {
  it('splits first incarnations from later ones and reads them back', () => {
    const wire = seenOnWire(vector());
    expect(wire).toEqual({ seen: [4, 7, 2], seenLater: [[257, 5]] });
    expect(seenEntries(seenFromWire(wire)!)).toEqual([
      [0, 4],
      [1, 7],
      [2, 2],
      [257, 5],
    ]);
    // Holes among the first incarnations go as zeros; later origins without a count go not at all.
    const sparse: number[] = [];
    sparse[2] = 3;
    sparse[300] = 0;
    expect(seenOnWire(sparse)).toEqual({ seen: [0, 0, 3] });
    expect(seenOnWire([])).toEqual({});
    expect(seenFromWire({})).toBeUndefined();
  });

  it('takes the larger count origin by origin, later origins included', () => {
    const other: number[] = [5, 1];
    other[257] = 2;
    other[513] = 1;
    expect(seenEntries(maxSeen(vector(), other))).toEqual([
      [0, 5],
      [1, 7],
      [2, 2],
      [257, 5],
      [513, 1],
    ]);
    expect(seenEntries(maxSeen(undefined, other))).toEqual(seenEntries(other));
  });

  it('is accepted in hellos, context requests, views and confirmations, and bounded', () => {
    const later = seenOnWire(vector());
    const hello = { t: 'hello', version: 2, session: 'session-0001', ...later };
    expect(ClientFrameSchema.safeParse(hello).success).toBe(true);
    expect(ClientFrameSchema.safeParse({ t: 'context', n: 1, ...later }).success).toBe(true);
    const view = { t: 'view', opId: 'o', level: 'tentative', outcome: { ok: true, value: 1 } };
    expect(ServerFrameSchema.safeParse({ ...view, ...later }).success).toBe(true);
    expect(ServerFrameSchema.safeParse({ t: 'confirm', opId: 'o', ...later }).success).toBe(true);
    // A later origin below 256 is a first incarnation's: it belongs in `seen`.
    expect(ClientFrameSchema.safeParse({ ...hello, seenLater: [[3, 1]] }).success).toBe(false);
    expect(
      ClientFrameSchema.safeParse({
        ...hello,
        seenLater: Array.from({ length: 65 }, (_, i) => [256 + i, 1]),
      }).success,
    ).toBe(false);
    expect(ClientFrameSchema.safeParse({ ...hello, seenLater: [[257, -1]] }).success).toBe(false);
  });
});

describe('context tokens with later incarnations', () => {
  it('carry them after the first incarnations, as origin:count', () => {
    expect(contextTokenPayload(vector())).toBe('ct1.4-7-2-257:5');
    const read = readContextToken(`ct1.4-7-2-257:5.${MAC}`);
    expect(read.ok && seenEntries(read.seen)).toEqual([
      [0, 4],
      [1, 7],
      [2, 2],
      [257, 5],
    ]);
    expect(read.ok && read.payload).toBe('ct1.4-7-2-257:5');
    const only: number[] = [];
    only[513] = 9;
    expect(contextTokenPayload(only)).toBe('ct1.513:9');
    expect(readContextToken(`ct1.513:9.${MAC}`).ok).toBe(true);
  });

  it('refuse a pair before a count by position, an origin below 256 and malformed pairs', () => {
    for (const counts of ['257:5-3', '12:5', '0257:5', '257:', ':5', '257:5:1', '257:05'])
      expect(readContextToken(`ct1.${counts}.${MAC}`), counts).toMatchObject({
        ok: false,
        message: expect.stringMatching(/at most 64 counts/),
      });
    const many = Array.from({ length: 65 }, (_, i) => `${256 + i}:1`).join('-');
    expect(readContextToken(`ct1.${many}.${MAC}`).ok).toBe(false);
  });
});
