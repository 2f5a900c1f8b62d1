import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@creek/app';
import { FinalDigests, type FinalPair } from '@creek/replica/core/final-digests.js';
import { Replica } from '@creek/replica/core/replica.js';
import {
  DigestSum,
  pairHash,
  pairHashesOf,
  StateDigest,
} from '@creek/replica/core/state-digest.js';
import type { ExecutionResult, Output } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { Driven, T0, testApp } from '../replica/harness.js';

describe('DigestSum', () => {
  it('is the StateDigest of the state its replacements leave', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('a', 'b', 'c', 'd'),
            fc.option(fc.jsonValue(), { nil: undefined }),
          ),
          { maxLength: 40 },
        ),
        (writes) => {
          const sum = new DigestSum();
          const state = new Map<string, JsonValue>();
          for (const [key, value] of writes) {
            sum.replace(key, state.get(key), value as JsonValue | undefined);
            if (value === undefined) state.delete(key);
            else state.set(key, value as JsonValue);
          }
          expect(sum.hex()).toBe(StateDigest.of(state));
          expect(DigestSum.of(state).hex()).toBe(StateDigest.of(state));
        },
      ),
    );
  });
});

describe('FinalDigests', () => {
  const id = (n: number) => ({ replica: 0, eventNo: n });

  it('keeps the last positions, oldest first, and forgets older ones', () => {
    const d = new FinalDigests(3);
    expect(d.latest()).toMatchObject({ position: 0, id: null, digest: '0'.repeat(32) });
    for (let p = 1; p <= 5; p++) {
      d.changed(null, { key: `k${p}`, value: p });
      d.finalized(p, id(p), 'kv.put');
    }
    expect(d.entries().map((e) => e.position)).toEqual([3, 4, 5]);
    expect(d.oldest().position).toBe(3);
    expect(d.at(2)).toBeUndefined();
    expect(d.at(6)).toBeUndefined();
    expect(d.at(4)).toMatchObject({ position: 4, id: id(4), op: 'kv.put' });
    expect(d.at(5)!.digest).toBe(
      StateDigest.of([1, 2, 3, 4, 5].map((p): [string, JsonValue] => [`k${p}`, p])),
    );
  });

  it('hashes each final value once, or not at all when its writer sent the hash', () => {
    const writes: [string, JsonValue][] = [
      ['a', { n: 1 }],
      ['b', [1, 2]],
    ];
    const sent = pairHashesOf(writes);
    const d = new FinalDigests(4);
    // As a worker's result arrives: each version carries its slice of the hashes sent.
    const a1: FinalPair = { key: 'a', value: writes[0]![1], pairHash: sent.subarray(0, 4) };
    const b1: FinalPair = { key: 'b', value: writes[1]![1], pairHash: sent.subarray(4, 8) };
    d.changed(null, a1);
    d.changed(null, b1);
    d.finalized(1, id(1), 'x');
    expect(d.latest().digest).toBe(StateDigest.of(writes));
    // Written inline: hashed when finalized, and kept for when it is replaced.
    const a2: FinalPair = { key: 'a', value: 'two' };
    d.changed(a1, a2);
    d.finalized(2, id(2), 'x');
    expect(a2.pairHash).toEqual(pairHash('a', 'two'));
    d.changed(a2, { key: 'a', value: undefined });
    d.finalized(3, id(3), 'x');
    expect(d.latest().digest).toBe(StateDigest.of([writes[1]!]));
    // The hash kept is the one used: a wrong one shows (so none is made twice).
    const wrong: FinalPair = { key: 'c', value: 1, pairHash: pairHash('c', 2) };
    d.changed(null, wrong);
    d.finalized(4, id(4), 'x');
    expect(d.latest().digest).toBe(StateDigest.of([writes[1]!, ['c', 2]]));
  });

  it('refuses a position that does not follow the last one', () => {
    const d = new FinalDigests(4);
    expect(() => d.finalized(2, id(2), 'x')).toThrow(/position 2 after 0/);
  });

  it('starts again from an installed state', () => {
    const d = new FinalDigests(4);
    d.changed(null, { key: 'a', value: 1 });
    d.finalized(1, id(1), 'x');
    d.restart(10, [['b', 2]]);
    const [only, ...rest] = d.entries();
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ position: 10, id: null, op: null });
    expect(only!.digest).toBe(StateDigest.of([['b', 2]]));
    d.changed({ key: 'b', value: 2 }, { key: 'b', value: undefined });
    d.finalized(11, id(11), 'kv.delete');
    expect(d.latest().digest).toBe('0'.repeat(32));
  });
});

describe('a replica’s final digests', () => {
  const put = (key: string, value: number) => ({ key, value });

  it('follow its finalized state at each committed position, weak ops reordered by commits included', () => {
    const r = new Driven({ id: 0, finalDigestsKept: 64 });
    const states: string[] = [];
    for (let round = 0; round < 8; round++) {
      r.invoke(round * 10, 'kv.put', put(`k${round % 3}`, round));
      r.invoke(round * 10 + 1, 'copy', { from: `k${(round + 1) % 3}`, to: `c${round % 2}` });
      if (round % 3 === 2) r.invoke(round * 10 + 2, 'kv.delete', { key: `k${round % 3}` });
      r.invoke(round * 10 + 3, 'total', { prefix: 'k', into: 'sum' }, true);
      r.deliverStrong(r.cabCast[r.cabCast.length - 1]!);
      // Everything is final now: the finalized state is the state.
      expect(r.replica.finalDigests.latest().digest).toBe(StateDigest.of(r.replica.state()));
      states.push(r.replica.finalDigests.latest().digest);
    }
    const latest = r.replica.finalDigests.latest();
    expect(latest.position).toBe(r.replica.committedOps);
    expect(latest.op).toBe('total');
    // Every position in between is kept, each with its op.
    const entries = r.replica.finalDigests.entries();
    expect(entries.map((e) => e.position)).toEqual(
      Array.from({ length: latest.position + 1 }, (_, i) => i),
    );
    expect(entries.filter((e) => e.op === 'total').map((e) => e.digest)).toEqual(states);
  });

  it('start from a checkpoint’s state after a restart, and go on from there', () => {
    const r = new Driven({ id: 0 });
    r.invoke(0, 'kv.put', put('a', 1));
    r.invoke(1, 'kv.put', put('b', 2), true);
    r.deliverStrong(r.cabCast[0]!);
    const checkpoint = r.replica.checkpoint();
    const executor = new InlineExecutor(testApp);
    const run = (outputs: Output[]): void => {
      for (let i = 0; i < outputs.length; i++) {
        const o = outputs[i]!;
        if (o.type === 'execute')
          outputs.push(...back.executed(executor.execute(o.job) as ExecutionResult));
      }
    };
    const { replica: back, outputs } = Replica.recover(
      { id: 0, app: testApp, noopIntervalMs: 1_000_000 },
      [],
      T0 + 100,
      checkpoint,
    );
    run(outputs);
    const [base, ...rest] = back.finalDigests.entries();
    expect(rest).toEqual([]);
    expect(base).toMatchObject({ position: 2, id: null, op: null });
    expect(base!.digest).toBe(r.replica.finalDigests.latest().digest);
    run(back.invoke(T0 + 200, { op: 'kv.put', args: put('a', 3), strong: true, tag: 1 }));
    // Its op after the checkpoint's two, committed as CAB would deliver it.
    run(back.deliverStrong({ replica: 0, eventNo: 3 }));
    expect(back.finalDigests.latest()).toMatchObject({ position: 3, op: 'kv.put' });
    expect(back.finalDigests.latest().digest).toBe(StateDigest.of(back.state()));
  });
});
