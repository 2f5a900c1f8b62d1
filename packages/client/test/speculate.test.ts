import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { Correctable, type Callbacks } from '../src/correctable.js';
import { Unavailable } from '../src/errors.js';
import {
  deferred,
  failOnUnhandledRejections,
  invokeVia,
  ScriptedBinding,
  settle,
  type Deferred,
} from './support.js';

const unhandled = failOnUnhandledRejections();

interface Ads {
  refs: string[];
}

/** Logs what the returned Correctable reports. */
function watch<R>(c: Correctable<R>): string[] {
  const log: string[] = [];
  const callbacks: Callbacks<R> = {
    onUpdate: (v, view) => log.push(`update ${JSON.stringify(v)} ${view.level}`),
    onFinal: (v, view) => log.push(`final ${JSON.stringify(v)} ${view.level}`),
    onError: (e) => log.push(`error ${e.message}`),
  };
  c.setCallbacks(callbacks);
  return log;
}

describe('speculate (§4): synchronous speculation', () => {
  it('confirm: fn runs once on the preliminary view; the final view that equals it closes at once', () => {
    const src = Correctable.create<Ads>();
    const fn = vi.fn((ads: Ads) => ads.refs.map((r) => `ad:${r}`));
    const abort = vi.fn();
    const spec = src.correctable.speculate(fn, abort);
    const log = watch(spec);

    src.update({ refs: ['a', 'b'] }, 'weak');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(log).toEqual(['update ["ad:a","ad:b"] weak']);

    // A different object with the same content: still a confirmation.
    src.close({ refs: ['a', 'b'] }, 'strong');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(abort).not.toHaveBeenCalled();
    // Delivered synchronously, as soon as the final view arrived.
    expect(spec.state).toBe('final');
    expect(log).toEqual(['update ["ad:a","ad:b"] weak', 'final ["ad:a","ad:b"] strong']);
  });

  it('mismatch: abort gets the stale value and fn runs again on the final view', async () => {
    const src = Correctable.create<number>();
    const calls: string[] = [];
    const spec = src.correctable.speculate(
      (n) => {
        calls.push(`fn ${n}`);
        return n * 2;
      },
      (n) => calls.push(`abort ${n}`),
    );
    const log = watch(spec);
    src.update(1, 'weak');
    src.close(5, 'strong');
    expect(calls).toEqual(['fn 1', 'abort 1', 'fn 5']);
    expect(log).toEqual(['update 2 weak', 'final 10 strong']);
    expect(await spec).toBe(10);
  });

  it('several preliminary views: fn runs for each distinct one, abort for each one replaced', () => {
    const src = Correctable.create<string>();
    const calls: string[] = [];
    const spec = src.correctable.speculate(
      (s) => {
        calls.push(`fn ${s}`);
        return s.toUpperCase();
      },
      (s) => calls.push(`abort ${s}`),
    );
    const log = watch(spec);
    src.update('a', 'weak');
    src.update('b', 'weak');
    src.update('c', 'weak');
    src.close('c', 'strong');
    expect(calls).toEqual(['fn a', 'abort a', 'fn b', 'abort b', 'fn c']);
    expect(log).toEqual([
      'update "A" weak',
      'update "B" weak',
      'update "C" weak',
      'final "C" strong',
    ]);
  });

  it('several preliminary views and a final one that differs from all', () => {
    const src = Correctable.create<string>();
    const calls: string[] = [];
    const spec = src.correctable.speculate(
      (s) => {
        calls.push(`fn ${s}`);
        return s;
      },
      (s) => calls.push(`abort ${s}`),
    );
    src.update('a', 'weak');
    src.update('b', 'weak');
    src.close('z', 'strong');
    expect(calls).toEqual(['fn a', 'abort a', 'fn b', 'abort b', 'fn z']);
    expect(spec.latest()).toEqual({ value: 'z', level: 'strong', final: true });
  });

  it('identical successive views do not re-run fn', () => {
    const src = Correctable.create<{ n: number; tags: string[] }>();
    const fn = vi.fn((v: { n: number }) => v.n);
    const abort = vi.fn();
    const spec = src.correctable.speculate(fn, abort);
    const log = watch(spec);
    src.update({ n: 1, tags: ['x'] }, 'weak');
    src.update({ tags: ['x'], n: 1 }, 'weak');
    src.update({ n: 1, tags: ['x'] }, 'weak');
    src.close({ n: 1, tags: ['x'] }, 'strong');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(abort).not.toHaveBeenCalled();
    expect(log).toEqual(['update 1 weak', 'final 1 strong']);
  });

  it('a value that comes back after another one is a new view (A, B, A)', () => {
    const src = Correctable.create<number>();
    const fn = vi.fn((n: number) => n);
    const abort = vi.fn();
    src.correctable.speculate(fn, abort);
    src.update(1, 'weak');
    src.update(2, 'weak');
    src.update(1, 'weak');
    src.close(1, 'strong');
    expect(fn.mock.calls.map((c) => c[0])).toEqual([1, 2, 1]);
    expect(abort.mock.calls.map((c) => c[0])).toEqual([1, 2]);
  });

  it('no preliminary view (invokeStrong): fn runs once, on the final view', async () => {
    const src = Correctable.create<number>();
    const fn = vi.fn((n: number) => n + 1);
    const abort = vi.fn();
    const spec = src.correctable.speculate(fn, abort);
    src.close(1, 'strong');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(abort).not.toHaveBeenCalled();
    expect(await spec).toBe(2);
  });

  it('abort is optional', () => {
    const src = Correctable.create<number>();
    const spec = src.correctable.speculate((n) => n);
    src.update(1, 'weak');
    src.close(2, 'strong');
    expect(spec.latest()?.value).toBe(2);
  });

  it('speculating late: on the latest preliminary view, or directly on the final one', () => {
    const a = Correctable.create<number>();
    a.update(1, 'weak');
    a.update(2, 'weak');
    const fnA = vi.fn((n: number) => n);
    const specA = a.correctable.speculate(fnA);
    expect(fnA.mock.calls).toEqual([[2]]);
    a.close(2, 'strong');
    expect(specA.state).toBe('final');
    expect(fnA).toHaveBeenCalledTimes(1);

    const b = Correctable.create<number>();
    b.update(1, 'weak');
    b.close(3, 'strong');
    const fnB = vi.fn((n: number) => n);
    const abortB = vi.fn();
    const specB = b.correctable.speculate(fnB, abortB);
    expect(fnB.mock.calls).toEqual([[3]]);
    expect(abortB).not.toHaveBeenCalled();
    expect(specB.latest()).toEqual({ value: 3, level: 'strong', final: true });
  });

  it('an undefined result still closes', async () => {
    const src = Correctable.create<number>();
    const spec = src.correctable.speculate(() => undefined);
    src.update(1, 'weak');
    src.close(1, 'strong');
    expect(spec.state).toBe('final');
    expect(await spec).toBeUndefined();
  });

  it('the returned Correctable is a full Correctable: observable, chainable speculation', async () => {
    const src = Correctable.create<number>();
    const doubled = src.correctable.speculate((n) => n * 2);
    const views = lastValueFrom(doubled.toObservable().pipe(toArray()));
    const plusOne = doubled.speculate((n) => n + 1);
    src.update(1, 'weak');
    src.close(3, 'strong');
    expect((await views).map((v) => [v.value, v.level, v.final])).toEqual([
      [2, 'weak', false],
      [6, 'strong', true],
    ]);
    expect(await plusOne).toBe(7);
  });
});

describe('speculate: errors', () => {
  it('an error of the source mid-way ends the returned Correctable with it; the outstanding speculation is aborted', async () => {
    const src = Correctable.create<number>();
    const fn = vi.fn((n: number) => n);
    const abort = vi.fn();
    const spec = src.correctable.speculate(fn, abort);
    const log = watch(spec);
    src.update(1, 'weak');
    const err = new Unavailable('the replica went away');
    src.fail(err);
    expect(spec.state).toBe('error');
    expect(spec.error).toBe(err);
    expect(abort.mock.calls).toEqual([[1]]);
    expect(log).toEqual(['update 1 weak', `error ${err.message}`]);
    await expect(spec).rejects.toBe(err);
  });

  it('a binding error before any view: no speculation ran, nothing to abort', () => {
    const binding = new ScriptedBinding();
    const src = invokeVia<number>(binding, 'op', {});
    const fn = vi.fn();
    const abort = vi.fn();
    const spec = src.speculate(fn, abort);
    binding.sink().error(new Unavailable());
    expect(spec.error).toBeInstanceOf(Unavailable);
    expect(fn).not.toHaveBeenCalled();
    expect(abort).not.toHaveBeenCalled();
  });

  it('when abort throws while the source fails, the source’s error is the one reported', () => {
    const src = Correctable.create<number>();
    const spec = src.correctable.speculate(
      (n) => n,
      () => {
        throw new Error('abort bug');
      },
    );
    src.update(1, 'weak');
    const err = new Unavailable();
    src.fail(err);
    expect(spec.error).toBe(err);
  });

  it('fn throwing on a preliminary view ends it in error; later views are ignored', async () => {
    const src = Correctable.create<number>();
    const bad = new Error('speculation bug');
    const fn = vi.fn(() => {
      throw bad;
    });
    const abort = vi.fn();
    const spec = src.correctable.speculate(fn, abort);
    src.update(1, 'weak');
    expect(spec.state).toBe('error');
    expect(spec.error).toBe(bad);
    src.update(2, 'weak');
    src.close(3, 'strong');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(abort).not.toHaveBeenCalled();
    await expect(spec).rejects.toBe(bad);
  });

  it('fn throwing on the final view ends it in error', () => {
    const src = Correctable.create<number>();
    const spec = src.correctable.speculate((n) => {
      if (n === 2) throw new Error('cannot handle 2');
      return n;
    });
    src.update(1, 'weak');
    src.close(2, 'strong');
    expect(spec.error?.message).toBe('cannot handle 2');
    expect(spec.latest()).toEqual({ value: 1, level: 'weak', final: false });
  });

  it('fn throwing a non-Error still ends it with an Error', () => {
    const src = Correctable.create<number>();
    const spec = src.correctable.speculate(() => {
      throw 'plain string';
    });
    src.close(1, 'strong');
    expect(spec.error).toBeInstanceOf(Error);
    expect(spec.error?.message).toBe('plain string');
  });

  it('abort throwing ends it in error, and fn is not re-run', () => {
    const src = Correctable.create<number>();
    const fn = vi.fn((n: number) => n);
    const spec = src.correctable.speculate(fn, () => {
      throw new Error('could not undo');
    });
    src.update(1, 'weak');
    src.close(2, 'strong');
    expect(spec.error?.message).toBe('could not undo');
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('errors nobody listens to are not unhandled rejections', async () => {
    const a = Correctable.create<number>();
    a.correctable.speculate(() => Promise.reject(new Error('async bug')));
    a.update(1, 'weak');
    const b = Correctable.create<number>();
    b.correctable.speculate(() => {
      throw new Error('sync bug');
    });
    b.close(1, 'strong');
    const c = Correctable.create<number>();
    c.correctable.speculate((n) => n);
    c.fail(new Unavailable());
    await settle();
    expect(unhandled).toEqual([]);
  });
});

describe('speculate: asynchronous speculation', () => {
  /** fn returns a deferred per input, which the test settles. */
  function asyncSpeculation() {
    const pending = new Map<number, Deferred<string>>();
    const calls: string[] = [];
    const fn = (n: number): Promise<string> => {
      calls.push(`fn ${n}`);
      const d = deferred<string>();
      pending.set(n, d);
      return d.promise;
    };
    const abort = (n: number): void => {
      calls.push(`abort ${n}`);
    };
    const settleWith = (n: number, v: string): void => pending.get(n)?.resolve(v);
    const rejectWith = (n: number, e: unknown): void => pending.get(n)?.reject(e);
    return { fn, abort, calls, settleWith, rejectWith };
  }

  it('a result that resolves after the (confirming) final view closes it when it resolves', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    const log = watch(spec);
    src.update(1, 'weak');
    src.close(1, 'strong');
    await settle();
    expect(spec.state).toBe('updating');
    s.settleWith(1, 'one');
    await settle();
    expect(log).toEqual(['final "one" strong']);
    expect(s.calls).toEqual(['fn 1']);
  });

  it('a result that resolved before the final view is delivered as an update, then confirmed at once', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    const log = watch(spec);
    src.update(1, 'weak');
    s.settleWith(1, 'one');
    await settle();
    expect(log).toEqual(['update "one" weak']);
    src.close(1, 'strong');
    expect(log).toEqual(['update "one" weak', 'final "one" strong']);
  });

  it('mismatch with async fn: the stale result is ignored, the re-run closes it', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    const log = watch(spec);
    src.update(1, 'weak');
    src.close(2, 'strong');
    expect(s.calls).toEqual(['fn 1', 'abort 1', 'fn 2']);
    s.settleWith(2, 'two');
    await settle();
    s.settleWith(1, 'one (stale)');
    await settle();
    expect(log).toEqual(['final "two" strong']);
    expect(await spec).toBe('two');
  });

  it('a stale speculation settling late, after a newer preliminary one, is ignored', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    const log = watch(spec);
    src.update(1, 'weak');
    src.update(2, 'weak');
    s.settleWith(2, 'two');
    await settle();
    s.settleWith(1, 'one (stale)');
    await settle();
    expect(log).toEqual(['update "two" weak']);
    src.close(2, 'strong');
    expect(log).toEqual(['update "two" weak', 'final "two" strong']);
    expect(s.calls).toEqual(['fn 1', 'abort 1', 'fn 2']);
  });

  it('a stale speculation rejecting is ignored (and not unhandled)', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    src.update(1, 'weak');
    src.close(2, 'strong');
    s.rejectWith(1, new Error('stale failure'));
    s.settleWith(2, 'two');
    expect(await spec).toBe('two');
  });

  it('the current speculation rejecting ends it in error', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    src.update(1, 'weak');
    src.close(1, 'strong');
    const err = new Error('fetch failed');
    s.rejectWith(1, err);
    await expect(spec).rejects.toBe(err);
  });

  it('the source failing while a speculation is pending: its later result is ignored', async () => {
    const src = Correctable.create<number>();
    const s = asyncSpeculation();
    const spec = src.correctable.speculate(s.fn, s.abort);
    src.update(1, 'weak');
    src.fail(new Unavailable());
    expect(s.calls).toEqual(['fn 1', 'abort 1']);
    s.settleWith(1, 'late');
    await settle();
    expect(spec.state).toBe('error');
    expect(spec.latest()).toBeUndefined();
  });

  it('a thenable that is not a Promise works too', async () => {
    const src = Correctable.create<number>();
    const inner = Correctable.create<string>();
    const spec = src.correctable.speculate(() => inner.correctable);
    src.close(1, 'strong');
    inner.update('prelim', 'weak');
    inner.close('from a Correctable', 'strong');
    expect(await spec).toBe('from a Correctable');
  });
});

describe('speculate: any sequence of views (property)', () => {
  it('fn runs on each change, abort on each replaced run, and the result is fn(final)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 3 }),
        (prelims, final) => {
          const src = Correctable.create<number>();
          const ran: number[] = [];
          const aborted: number[] = [];
          const spec = src.correctable.speculate(
            (n) => {
              ran.push(n);
              return n * 10;
            },
            (n) => aborted.push(n),
          );
          for (const p of prelims) src.update(p, 'weak');
          src.close(final, 'strong');

          const expected: number[] = [];
          for (const v of [...prelims, final]) {
            if (expected[expected.length - 1] !== v) expected.push(v);
          }
          expect(ran).toEqual(expected);
          expect(aborted).toEqual(expected.slice(0, -1));
          expect(spec.latest()).toEqual({ value: final * 10, level: 'strong', final: true });
        },
      ),
      { numRuns: 300 },
    );
  });
});
