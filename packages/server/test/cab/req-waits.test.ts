import { describe, expect, it } from 'vitest';
import { ReqWaits } from '@creek/replica/cab/req-waits.js';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { Driven, remoteReq } from '../replica/harness.js';

describe('ReqWaits: waiting casts and 2a by what they await', () => {
  it('a Req waiter is due when that Req arrives; a prefix waiter when the prefix reaches it', () => {
    const w = new ReqWaits();
    w.file({ id: { replica: 1, eventNo: 5 }, prefix: false }, { cast: 'a' });
    w.file({ id: { replica: 2, eventNo: 10 }, prefix: true }, { instance: 7 });
    w.file({ id: { replica: 2, eventNo: 4 }, prefix: true }, { cast: 'b' });
    let upTo = 3;
    const prefix = () => upTo;
    expect(w.arrived([{ replica: 1, eventNo: 4 }], prefix)).toEqual([]);
    expect(w.arrived([{ replica: 1, eventNo: 5 }], prefix)).toEqual([{ cast: 'a' }]);
    // Op 2#9 arrives out of order: the prefix is still 3, nothing is due.
    expect(w.arrived([{ replica: 2, eventNo: 9 }], prefix)).toEqual([]);
    upTo = 9; // 2#4..8 filled the gap: the prefix reaches 9, past 4 and short of 10
    expect(w.arrived([{ replica: 2, eventNo: 4 }], prefix)).toEqual([{ cast: 'b' }]);
    upTo = 12;
    expect(w.arrived([{ replica: 2, eventNo: 10 }], prefix)).toEqual([{ instance: 7 }]);
    // Each waiter is due once.
    expect(
      w.arrived(
        [
          { replica: 2, eventNo: 11 },
          { replica: 1, eventNo: 5 },
        ],
        prefix,
      ),
    ).toEqual([]);
  });

  it('an arrival of another origin leaves prefix waiters alone', () => {
    const w = new ReqWaits();
    w.file({ id: { replica: 2, eventNo: 1 }, prefix: true }, { cast: 'x' });
    expect(w.arrived([{ replica: 3, eventNo: 1 }], () => 100)).toEqual([]);
    w.clear();
    expect(w.arrived([{ replica: 2, eventNo: 1 }], () => 100)).toEqual([]);
  });
});

describe('Replica.awaitedDep: what a strong op waits for before CAB may order it', () => {
  it('its own Req, then the prefix of the first origin it lacks ops of, then nothing', () => {
    const r = new Driven({ id: 0 });
    const ctx = new DottedVersionVector();
    ctx.addPrefix(1, 3);
    ctx.addPrefix(2, 2);
    const strong = remoteReq(3, 1, 50, 'kv.increment', { key: 'k' }, true, ctx);
    expect(r.replica.awaitedDep(strong.id)).toEqual({ id: strong.id, prefix: false });
    r.deliver(strong);
    expect(r.replica.awaitedDep(strong.id)).toEqual({
      id: { replica: 1, eventNo: 3 },
      prefix: true,
    });
    // The highest first: lower ones arriving later do not make it due before the prefix is whole.
    r.deliver(remoteReq(1, 3, 3, 'kv.increment', { key: 'a' }));
    r.deliver(remoteReq(1, 1, 1, 'kv.increment', { key: 'a' }));
    expect(r.replica.awaitedDep(strong.id)?.id).toEqual({ replica: 1, eventNo: 3 });
    r.deliver(remoteReq(1, 2, 2, 'kv.increment', { key: 'a' }));
    expect(r.replica.awaitedDep(strong.id)).toEqual({
      id: { replica: 2, eventNo: 2 },
      prefix: true,
    });
    r.deliver(remoteReq(2, 1, 4, 'kv.increment', { key: 'b' }));
    r.deliver(remoteReq(2, 2, 5, 'kv.increment', { key: 'b' }));
    expect(r.replica.awaitedDep(strong.id)).toBeNull();
    expect(r.replica.missingDeps(strong.id)).toEqual([]);
  });
});
