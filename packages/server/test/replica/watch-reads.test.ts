import { describe, expect, it } from 'vitest';
import { readSetCovers } from '@creek/replica/core/types.js';
import { Driven, remoteReq, T0 } from './harness.js';

/**
 * Live queries' reads (InvokeRequest.watch): a read-only op read at the end of the list
 * (`tentative`) or at the committed state (`stable`), answered with what it read, and the keys
 * whose value may have changed since the driver last asked (`takeChangedKeys`).
 */
function watch(r: Driven, at: number, key: string, level: 'tentative' | 'stable') {
  const tag = 1000 + r.responses.length + Math.floor(Math.random() * 1e6);
  r.handle(
    r.replica.invoke(T0 + at, { op: 'kv.get', args: { key }, strong: false, tag, watch: level }),
  );
  return r.responsesFor(tag).at(-1)!;
}

describe('watch reads', () => {
  it('tentative reads the end of the list; stable reads only what is committed', () => {
    const r = new Driven({ id: 0 });
    r.invoke(10, 'kv.put', { key: 'a', value: 1 });
    r.deliver(remoteReq(1, 1, 5, 'kv.put', { key: 'b', value: 2 }));
    const t = watch(r, 20, 'a', 'tentative');
    expect(t).toMatchObject({ level: 'tentative', outcome: { ok: true, value: 1 }, id: null });
    expect(t.reads).toEqual({ keys: ['a'], prefixes: [] });
    // Nothing committed yet: the committed state has no `a`.
    expect(watch(r, 21, 'a', 'stable')).toMatchObject({
      level: 'stable',
      outcome: { ok: true, value: null },
    });
    // A strong op commits everything before it that it depends on: then `a` is committed.
    const tag = r.invoke(30, 'kv.put', { key: 'c', value: 3 }, true);
    r.deliverStrong(r.cabCast.at(-1)!);
    expect(r.responsesFor(tag).some((x) => x.level === 'stable')).toBe(true);
    expect(watch(r, 31, 'a', 'stable').outcome).toEqual({ ok: true, value: 1 });
    expect(watch(r, 31, 'c', 'stable').outcome).toEqual({ ok: true, value: 3 });
  });

  it('says which keys changed: writes, and what commits bring into the committed state', () => {
    const r = new Driven({ id: 0 });
    r.replica.takeChangedKeys();
    r.invoke(10, 'kv.put', { key: 'x', value: 1 });
    expect([...r.replica.takeChangedKeys()]).toEqual(['x']);
    expect([...r.replica.takeChangedKeys()]).toEqual([]);
    const tag = r.invoke(20, 'kv.put', { key: 'y', value: 2 }, true);
    r.deliverStrong(r.cabCast.at(-1)!);
    expect(r.responsesFor(tag).some((x) => x.level === 'stable')).toBe(true);
    expect(new Set(r.replica.takeChangedKeys())).toEqual(new Set(['x', 'y']));
  });

  it('refuses to watch an op that writes', () => {
    const r = new Driven({ id: 0 });
    const tag = 77;
    r.handle(
      r.replica.invoke(T0, {
        op: 'kv.put',
        args: { key: 'a', value: 1 },
        strong: false,
        tag,
        watch: 'tentative',
      }),
    );
    expect(r.responsesFor(tag)[0]).toMatchObject({ level: 'failed', outcome: { ok: false } });
    expect((r.responsesFor(tag)[0]!.outcome as { error: string }).error).toMatch(
      /only read-only ops can be watched/,
    );
  });

  it('a read set covers its keys and whatever its prefixes scan', () => {
    const reads = { keys: ['a'], prefixes: ['q/'] };
    expect(readSetCovers(reads, 'a')).toBe(true);
    expect(readSetCovers(reads, 'q/1')).toBe(true);
    expect(readSetCovers(reads, 'b')).toBe(false);
  });
});
