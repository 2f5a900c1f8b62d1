import fc from 'fast-check';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { View } from '../src/binding.js';
import { Correctable, jsonEqual, type Callbacks } from '../src/correctable.js';
import { Cancelled, CreekError, OperationFailed, Timeout, Unavailable } from '../src/errors.js';
import {
  capturingProcessEvent,
  failOnUnhandledRejections,
  invokeVia,
  ScriptedBinding,
  settle,
} from './support.js';

failOnUnhandledRejections();

/** Callbacks that log what they get, as short strings. */
function recorder<T>(): { log: string[]; callbacks: Callbacks<T> } {
  const log: string[] = [];
  return {
    log,
    callbacks: {
      onUpdate: (v, view) => log.push(`update ${JSON.stringify(v)} ${view.level}`),
      onFinal: (v, view) => log.push(`final ${JSON.stringify(v)} ${view.level}`),
      onError: (e) => log.push(`error ${e.message}`),
    },
  };
}

describe('states (§3.1)', () => {
  it('starts updating, with no view', () => {
    const { correctable: c } = Correctable.create<number>();
    expect(c.state).toBe('updating');
    expect(c.latest()).toBeUndefined();
    expect(c.level).toBeUndefined();
    expect(c.error).toBeUndefined();
  });

  it('updating → updating on each preliminary view, then → final', () => {
    const ctl = Correctable.create<number>();
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);

    expect(ctl.update(1, 'weak')).toBe(true);
    expect(ctl.correctable.state).toBe('updating');
    expect(ctl.correctable.latest()).toEqual({ value: 1, level: 'weak', final: false });
    expect(ctl.correctable.level).toBe('weak');

    expect(ctl.update(2, 'weak')).toBe(true);
    expect(ctl.close(3, 'strong')).toBe(true);
    expect(ctl.correctable.state).toBe('final');
    expect(ctl.correctable.latest()).toEqual({ value: 3, level: 'strong', final: true });
    expect(ctl.correctable.level).toBe('strong');
    expect(log).toEqual(['update 1 weak', 'update 2 weak', 'final 3 strong']);
  });

  it('updating → final without preliminary views (invokeStrong)', () => {
    const ctl = Correctable.create<string>();
    const { log, callbacks } = recorder<string>();
    ctl.correctable.setCallbacks(callbacks);
    ctl.close('x', 'strong');
    expect(log).toEqual(['final "x" strong']);
  });

  it('updating → error, keeping the last preliminary view', () => {
    const ctl = Correctable.create<number>();
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    ctl.update(1, 'weak');
    const err = new Unavailable();
    expect(ctl.fail(err)).toBe(true);
    expect(ctl.correctable.state).toBe('error');
    expect(ctl.correctable.error).toBe(err);
    expect(ctl.correctable.latest()).toEqual({ value: 1, level: 'weak', final: false });
    expect(log).toEqual(['update 1 weak', `error ${err.message}`]);
  });

  it('ignores everything after the final view', () => {
    const ctl = Correctable.create<number>();
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    ctl.close(1, 'strong');
    expect(ctl.update(2, 'weak')).toBe(false);
    expect(ctl.close(3, 'strong')).toBe(false);
    expect(ctl.fail(new Unavailable())).toBe(false);
    ctl.sink.view({ value: 4, level: 'weak', final: false });
    ctl.sink.error(new Unavailable());
    expect(ctl.correctable.state).toBe('final');
    expect(ctl.correctable.latest()?.value).toBe(1);
    expect(log).toEqual(['final 1 strong']);
  });

  it('ignores everything after an error', () => {
    const ctl = Correctable.create<number>();
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    ctl.fail(new Unavailable());
    expect(ctl.update(2, 'weak')).toBe(false);
    expect(ctl.close(3, 'strong')).toBe(false);
    expect(ctl.fail(new Timeout(5))).toBe(false);
    expect(ctl.correctable.error).toBeInstanceOf(Unavailable);
    expect(log).toHaveLength(1);
  });

  it('views are frozen and say whether they are final', () => {
    const ctl = Correctable.create<number>();
    ctl.update(1, 'weak');
    const v = ctl.correctable.latest() as View<number>;
    expect(Object.isFrozen(v)).toBe(true);
    expect(v.final).toBe(false);
  });

  it('a non-Error failure is wrapped in an Error', () => {
    const ctl = Correctable.create<number>();
    ctl.fail('boom' as unknown as Error);
    expect(ctl.correctable.error).toBeInstanceOf(Error);
    expect(ctl.correctable.error?.message).toBe('boom');
  });
});

describe('setCallbacks', () => {
  it('is chainable and takes any subset of callbacks', () => {
    const ctl = Correctable.create<number>();
    const updates: number[] = [];
    const finals: number[] = [];
    const same = ctl.correctable
      .setCallbacks({ onUpdate: (v) => updates.push(v) })
      .setCallbacks({ onFinal: (v) => finals.push(v) })
      .setCallbacks({});
    expect(same).toBe(ctl.correctable);
    ctl.update(1, 'weak');
    ctl.close(2, 'strong');
    expect(updates).toEqual([1]);
    expect(finals).toEqual([2]);
  });

  it('calls every set of callbacks, in the order they were attached', () => {
    const ctl = Correctable.create<number>();
    const log: string[] = [];
    ctl.correctable
      .setCallbacks({ onUpdate: (v) => log.push(`a${v}`), onFinal: (v) => log.push(`A${v}`) })
      .setCallbacks({ onUpdate: (v) => log.push(`b${v}`), onFinal: (v) => log.push(`B${v}`) });
    ctl.update(1, 'weak');
    ctl.close(2, 'strong');
    expect(log).toEqual(['a1', 'b1', 'A2', 'B2']);
  });

  it('late callbacks get the latest preliminary view at once, then the rest', () => {
    const ctl = Correctable.create<number>();
    ctl.update(1, 'weak');
    ctl.update(2, 'weak');
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    expect(log).toEqual(['update 2 weak']);
    ctl.close(3, 'strong');
    expect(log).toEqual(['update 2 weak', 'final 3 strong']);
  });

  it('late callbacks after the final view get only onFinal', () => {
    const ctl = Correctable.create<number>();
    ctl.update(1, 'weak');
    ctl.close(3, 'strong');
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    expect(log).toEqual(['final 3 strong']);
  });

  it('late callbacks after an error get only onError', () => {
    const ctl = Correctable.create<number>();
    ctl.update(1, 'weak');
    ctl.fail(new Unavailable('down'));
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^error down/);
  });

  it('callbacks attached before any view get nothing until one arrives', () => {
    const ctl = Correctable.create<number>();
    const { log, callbacks } = recorder<number>();
    ctl.correctable.setCallbacks(callbacks);
    expect(log).toEqual([]);
  });

  it('a callback attached from inside a callback is not called twice for the same view', () => {
    const ctl = Correctable.create<number>();
    const inner: number[] = [];
    let attached = false;
    ctl.correctable.setCallbacks({
      onUpdate: () => {
        if (attached) return;
        attached = true;
        ctl.correctable.setCallbacks({ onUpdate: (v) => inner.push(v) });
      },
    });
    ctl.update(1, 'weak');
    ctl.update(2, 'weak');
    expect(inner).toEqual([1, 2]);
  });

  it('a view produced from inside a callback reaches every callback after the current one, in order', () => {
    const ctl = Correctable.create<number>();
    const log: string[] = [];
    ctl.correctable.setCallbacks({
      onUpdate: (v) => {
        log.push(`a update ${v}`);
        ctl.close(v + 1, 'strong');
      },
      onFinal: (v) => log.push(`a final ${v}`),
    });
    ctl.correctable.setCallbacks({
      onUpdate: (v) => log.push(`b update ${v}`),
      onFinal: (v) => log.push(`b final ${v}`),
    });
    ctl.update(1, 'weak');
    expect(log).toEqual(['a update 1', 'b update 1', 'a final 2', 'b final 2']);
  });

  it('a throwing callback does not stop the others; its error is reported as uncaught', async () => {
    const boom = new Error('callback bug');
    const seen: number[] = [];
    const uncaught = await capturingProcessEvent('uncaughtException', () => {
      const ctl = Correctable.create<number>();
      ctl.correctable
        .setCallbacks({
          onUpdate: () => {
            throw boom;
          },
        })
        .setCallbacks({ onUpdate: (v) => seen.push(v), onFinal: (v) => seen.push(v) });
      ctl.update(1, 'weak');
      ctl.close(2, 'strong');
      expect(ctl.correctable.state).toBe('final');
    });
    expect(seen).toEqual([1, 2]);
    expect(uncaught).toEqual([boom]);
  });
});

describe('then / await', () => {
  it('await gives the final value', async () => {
    const ctl = Correctable.create<number>();
    setTimeout(() => {
      ctl.update(1, 'weak');
      ctl.close(2, 'strong');
    }, 1);
    await expect(ctl.correctable).resolves.toBe(2);
    expect(await ctl.correctable).toBe(2);
  });

  it('await on an already-final Correctable gives its value', async () => {
    const ctl = Correctable.create<number>();
    ctl.close(7, 'strong');
    expect(await ctl.correctable).toBe(7);
  });

  it('await throws the error', async () => {
    const ctl = Correctable.create<number>();
    const err = new OperationFailed('insufficient funds');
    setTimeout(() => ctl.fail(err), 1);
    await expect(ctl.correctable).rejects.toBe(err);
    try {
      await ctl.correctable;
      expect.unreachable();
    } catch (e) {
      expect(e).toBe(err);
    }
  });

  it('then with both handlers, catch and finally', async () => {
    const ok = Correctable.create<number>();
    const bad = Correctable.create<number>();
    const order: string[] = [];
    const p1 = ok.correctable.then(
      (v) => v * 10,
      () => -1,
    );
    const p2 = bad.correctable.catch((e: unknown) => (e as Error).message);
    const p3 = ok.correctable.finally(() => order.push('finally ok'));
    const p4 = bad.correctable.finally(() => order.push('finally bad')).catch(() => 'caught');
    ok.close(4, 'strong');
    bad.fail(new Error('nope'));
    expect(await p1).toBe(40);
    expect(await p2).toBe('nope');
    expect(await p3).toBe(4);
    expect(await p4).toBe('caught');
    expect(order.sort()).toEqual(['finally bad', 'finally ok']);
  });

  it('is typed as a PromiseLike of its value', () => {
    const { correctable } = Correctable.create<{ n: number }>();
    expectTypeOf(correctable).toMatchTypeOf<PromiseLike<{ n: number }>>();
    expectTypeOf<Awaited<typeof correctable>>().toEqualTypeOf<{ n: number }>();
  });

  it('an error nobody awaits is not an unhandled rejection', async () => {
    const unhandled = await capturingProcessEvent('unhandledRejection', async () => {
      const a = Correctable.create<number>();
      a.fail(new Unavailable());
      const b = Correctable.create<number>();
      b.correctable.setCallbacks({ onError: () => {} });
      b.fail(new Unavailable());
      const c = Correctable.create<number>();
      c.update(1, 'weak');
      c.fail(new Unavailable());
      // Asking for the state or the latest view creates no promise either.
      expect(c.correctable.state).toBe('error');
      expect(c.correctable.latest()?.value).toBe(1);
      await settle();
    });
    expect(unhandled).toEqual([]);
  });

  it('then(onFulfilled) alone makes the rejection unhandled, as with a Promise', async () => {
    const err = new Unavailable();
    const unhandled = await capturingProcessEvent('unhandledRejection', async () => {
      const ctl = Correctable.create<number>();
      void ctl.correctable.then((v) => v);
      ctl.fail(err);
      await settle();
    });
    expect(unhandled).toEqual([err]);
  });
});

describe('toObservable', () => {
  it('emits every view and completes at the final one', async () => {
    const ctl = Correctable.create<number>();
    const all = lastValueFrom(ctl.correctable.toObservable().pipe(toArray()));
    ctl.update(1, 'weak');
    ctl.update(2, 'weak');
    ctl.close(3, 'strong');
    expect(await all).toEqual([
      { value: 1, level: 'weak', final: false },
      { value: 2, level: 'weak', final: false },
      { value: 3, level: 'strong', final: true },
    ]);
  });

  it('a late subscriber first gets the latest view', () => {
    const ctl = Correctable.create<number>();
    ctl.update(1, 'weak');
    ctl.update(2, 'weak');
    const got: number[] = [];
    let completed = false;
    ctl.correctable.toObservable().subscribe({
      next: (v) => got.push(v.value),
      complete: () => (completed = true),
    });
    expect(got).toEqual([2]);
    ctl.close(3, 'strong');
    expect(got).toEqual([2, 3]);
    expect(completed).toBe(true);
  });

  it('a subscriber after the final view gets it and completes', async () => {
    const ctl = Correctable.create<number>();
    ctl.close(3, 'strong');
    expect(await firstValueFrom(ctl.correctable.toObservable())).toEqual({
      value: 3,
      level: 'strong',
      final: true,
    });
    expect(await lastValueFrom(ctl.correctable.toObservable().pipe(toArray()))).toHaveLength(1);
  });

  it('errors with the Correctable’s error, also for late subscribers', async () => {
    const ctl = Correctable.create<number>();
    const early = lastValueFrom(ctl.correctable.toObservable());
    const err = new Unavailable();
    ctl.fail(err);
    await expect(early).rejects.toBe(err);
    await expect(lastValueFrom(ctl.correctable.toObservable())).rejects.toBe(err);
  });

  it('unsubscribing stops delivery', () => {
    const ctl = Correctable.create<number>();
    const got: number[] = [];
    const sub = ctl.correctable.toObservable().subscribe((v) => got.push(v.value));
    ctl.update(1, 'weak');
    sub.unsubscribe();
    ctl.update(2, 'weak');
    ctl.close(3, 'strong');
    expect(got).toEqual([1]);
  });
});

describe('Correctable.all', () => {
  it('gives arrays of the latest values once each has a view, final when all are', () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<string>();
    const all = Correctable.all([a.correctable, b.correctable] as const);
    expectTypeOf(all).toEqualTypeOf<Correctable<[number, string]>>();
    const { log, callbacks } = recorder<[number, string]>();
    all.setCallbacks(callbacks);

    a.update(1, 'weak');
    expect(log).toEqual([]);
    b.update('x', 'weak');
    a.close(2, 'strong');
    expect(all.state).toBe('updating');
    b.close('y', 'strong');
    expect(log).toEqual(['update [1,"x"] weak', 'update [2,"x"] weak', 'final [2,"y"] strong']);
  });

  it('takes inputs that already have views or are final', async () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<number>();
    a.close(1, 'strong');
    b.update(2, 'weak');
    const all = Correctable.all([a.correctable, b.correctable]);
    expect(all.latest()).toEqual({ value: [1, 2], level: 'weak', final: false });
    b.close(3, 'strong');
    expect(await all).toEqual([1, 3]);
  });

  it('ends with the first error and ignores the rest', async () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<number>();
    const all = Correctable.all([a.correctable, b.correctable]);
    const onUpdate = vi.fn();
    all.setCallbacks({ onUpdate });
    a.update(1, 'weak');
    const err = new Unavailable();
    b.fail(err);
    a.close(2, 'strong');
    expect(all.state).toBe('error');
    expect(all.error).toBe(err);
    expect(onUpdate).not.toHaveBeenCalled();
    await expect(all).rejects.toBe(err);
  });

  it('an input that had already failed fails it at once', () => {
    const a = Correctable.create<number>();
    a.fail(new Unavailable());
    const b = Correctable.create<number>();
    const all = Correctable.all([a.correctable, b.correctable]);
    expect(all.state).toBe('error');
  });

  it('of nothing is final at once', async () => {
    const all = Correctable.all([]);
    expect(all.state).toBe('final');
    expect(await all).toEqual([]);
  });
});

describe('Correctable.race', () => {
  it('closes with the first to close, passing on preliminary views of any', () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<number>();
    const race = Correctable.race([a.correctable, b.correctable]);
    const { log, callbacks } = recorder<number>();
    race.setCallbacks(callbacks);
    a.update(1, 'weak');
    b.update(2, 'weak');
    b.close(3, 'strong');
    a.close(4, 'strong');
    a.update(5, 'weak');
    expect(log).toEqual(['update 1 weak', 'update 2 weak', 'final 3 strong']);
  });

  it('ends with an error when the first to end ends in error', async () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<number>();
    const race = Correctable.race([a.correctable, b.correctable]);
    const err = new Timeout(10);
    a.fail(err);
    b.close(1, 'strong');
    await expect(race).rejects.toBe(err);
  });

  it('an input already final wins at once', async () => {
    const a = Correctable.create<number>();
    const b = Correctable.create<string>();
    b.close('done', 'strong');
    const race = Correctable.race([a.correctable, b.correctable]);
    expectTypeOf(race).toEqualTypeOf<Correctable<number | string>>();
    expect(await race).toBe('done');
  });
});

describe('cancellation and timeouts', () => {
  it('aborting the signal ends it with Cancelled and aborts the binding’s signal', async () => {
    const caller = new AbortController();
    const ctl = Correctable.create<number>({ signal: caller.signal });
    const onError = vi.fn();
    ctl.correctable.setCallbacks({ onError });
    ctl.update(1, 'weak');
    caller.abort(new Error('user navigated away'));
    expect(ctl.correctable.state).toBe('error');
    const err = ctl.correctable.error;
    expect(err).toBeInstanceOf(Cancelled);
    expect(err).toBeInstanceOf(CreekError);
    expect((err as Cancelled).code).toBe('cancelled');
    expect(err?.message).toMatch(/user navigated away/);
    expect(onError).toHaveBeenCalledWith(err);
    expect(ctl.signal.aborted).toBe(true);
    expect(ctl.signal.reason).toBe(err);
    expect(ctl.close(2, 'strong')).toBe(false);
    await expect(ctl.correctable).rejects.toBeInstanceOf(Cancelled);
  });

  it('an already-aborted signal ends it at once', () => {
    const ctl = Correctable.create<number>({ signal: AbortSignal.abort() });
    expect(ctl.correctable.state).toBe('error');
    expect(ctl.correctable.error).toBeInstanceOf(Cancelled);
    expect(ctl.signal.aborted).toBe(true);
    expect(ctl.update(1, 'weak')).toBe(false);
  });

  it('aborting after the final view changes nothing, and the listener is removed', () => {
    const caller = new AbortController();
    const remove = vi.spyOn(caller.signal, 'removeEventListener');
    const ctl = Correctable.create<number>({ signal: caller.signal });
    ctl.close(1, 'strong');
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
    caller.abort();
    expect(ctl.correctable.state).toBe('final');
    expect(ctl.signal.aborted).toBe(false);
  });

  it('a signal asked for only after it was cancelled starts aborted, with the same reason', () => {
    const caller = new AbortController();
    const ctl = Correctable.create<number>({ signal: caller.signal });
    caller.abort(new Error('gone'));
    const err = ctl.correctable.error;
    expect(err).toBeInstanceOf(Cancelled);
    expect(ctl.signal.aborted).toBe(true);
    expect(ctl.signal.reason).toBe(err);
    expect(ctl.signal).toBe(ctl.signal); // one signal, however often asked for
  });

  it('the timeout ends it with Timeout', async () => {
    vi.useFakeTimers();
    const ctl = Correctable.create<number>({ timeoutMs: 500 });
    ctl.update(1, 'weak');
    vi.advanceTimersByTime(499);
    expect(ctl.correctable.state).toBe('updating');
    vi.advanceTimersByTime(1);
    expect(ctl.correctable.state).toBe('error');
    const err = ctl.correctable.error as Timeout;
    expect(err).toBeInstanceOf(Timeout);
    expect(err.code).toBe('timeout');
    expect(err.timeoutMs).toBe(500);
    expect(err.message).toMatch(/500 ms/);
    expect(ctl.signal.reason).toBe(err);
    expect(ctl.close(2, 'strong')).toBe(false);
    const rejected = expect(ctl.correctable).rejects.toBe(err);
    vi.useRealTimers();
    await rejected;
  });

  it('closing in time clears the timer', () => {
    vi.useFakeTimers();
    const ctl = Correctable.create<number>({ timeoutMs: 500 });
    expect(vi.getTimerCount()).toBe(1);
    ctl.close(1, 'strong');
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(ctl.correctable.state).toBe('final');
  });

  it('failing in time clears the timer too', () => {
    vi.useFakeTimers();
    const ctl = Correctable.create<number>({ timeoutMs: 500 });
    ctl.fail(new Unavailable());
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects a negative or NaN timeout; no timeout when left out', () => {
    expect(() => Correctable.create({ timeoutMs: -1 })).toThrow(RangeError);
    expect(() => Correctable.create({ timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
    vi.useFakeTimers();
    Correctable.create({});
    Correctable.create({ timeoutMs: Number.POSITIVE_INFINITY });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('with a binding (§5.1)', () => {
  it('the binding’s views and errors drive the Correctable through its sink', async () => {
    const binding = new ScriptedBinding();
    const c = invokeVia<number>(binding, 'counter.get', { key: 'k' });
    expect(binding.submissions[0]).toMatchObject({
      op: 'counter.get',
      args: { key: 'k' },
      levels: ['weak', 'strong'],
    });
    const { log, callbacks } = recorder<number>();
    c.setCallbacks(callbacks);
    binding.sink().view({ value: 1, level: 'weak', final: false });
    binding.sink().view({ value: 2, level: 'strong', final: true });
    expect(log).toEqual(['update 1 weak', 'final 2 strong']);
    expect(await c).toBe(2);

    const d = invokeVia<number>(binding, 'counter.get', { key: 'k' }, ['strong']);
    expect(binding.submissions[1]?.levels).toEqual(['strong']);
    binding.sink().error(new OperationFailed({ op: 'counter.get', reason: 'no such key' }));
    await expect(d).rejects.toMatchObject({ code: 'operation-failed', reason: 'no such key' });
  });

  it('cancelling the call aborts the signal the binding got', () => {
    const binding = new ScriptedBinding();
    const caller = new AbortController();
    const c = invokeVia<number>(binding, 'op', null, undefined, { signal: caller.signal });
    const bindingSignal = binding.submissions[0]?.signal;
    expect(bindingSignal?.aborted).toBe(false);
    caller.abort();
    expect(bindingSignal?.aborted).toBe(true);
    expect(c.error).toBeInstanceOf(Cancelled);
  });
});

describe('jsonEqual', () => {
  it('compares JSON-like values structurally', () => {
    expect(jsonEqual({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(jsonEqual(Number.NaN, Number.NaN)).toBe(true);
    expect(jsonEqual(new Date(5), new Date(5))).toBe(true);
    expect(jsonEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual({ a: 1 }, { b: 1 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual(null, undefined)).toBe(false);
    expect(jsonEqual(new Date(5), 5)).toBe(false);
  });

  /** JSON with object keys sorted: equal exactly when the values are equal as JSON. */
  function canonical(x: unknown): string {
    return JSON.stringify(x, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)))
        : v,
    );
  }

  it('agrees with comparing canonical JSON (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonical(a) === canonical(b));
        expect(jsonEqual(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
