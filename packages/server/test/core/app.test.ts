import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checkArgs,
  op,
  builtins,
  defineApp,
  toFrozenJson,
  type AnyOpDefinition,
  type App,
  type JsonValue,
} from '@creek/app';
import { hlcToMillis } from '@creek/replica/core/hlc.js';
import type { OpId } from '@creek/replica/core/op-id.js';
import { runOperation } from '@creek/replica/core/run-operation.js';
import type { ExecutionJob, ExecutionResult, SnapshotReader } from '@creek/replica/core/types.js';

type Store = Map<string, JsonValue>;

/** A map-backed snapshot; values are frozen, as versions in the real store are. */
function storeOf(data: Record<string, unknown> = {}): Store {
  return new Map(Object.entries(data).map(([k, v]) => [k, toFrozenJson(v)]));
}

function snapshotOf(store: Store): SnapshotReader {
  return {
    get: (key) => store.get(key),
    scan: (prefix) =>
      [...store]
        .filter(([k]) => k.startsWith(prefix))
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
  };
}

let jobs = 0;
function job(
  op: string,
  args: JsonValue,
  options: { store?: Store; ts?: number; id?: OpId | null } = {},
): ExecutionJob {
  return {
    jobId: ++jobs,
    op,
    args,
    ts: options.ts ?? 1_700_000_000_000_000,
    id: options.id === undefined ? { replica: 1, eventNo: jobs } : options.id,
    snapshot: snapshotOf(options.store ?? new Map()),
  };
}

/** Runs one op of `app` as a replica does: check the arguments, run, apply the writes if it succeeded. */
function call(app: App, name: string, args: unknown, store: Store): ExecutionResult {
  const def = app.lookup(name);
  if (def === undefined) throw new Error(`no op ${name}`);
  const checked = checkArgs(name, def, args);
  if (!checked.ok) throw new Error(checked.error);
  const result = runOperation(def, job(name, toFrozenJson(checked.args), { store }));
  if (result.outcome.ok) {
    for (const [k, v] of result.writes) {
      if (v === undefined) store.delete(k);
      else store.set(k, v);
    }
  }
  return result;
}

const valueOf = (r: ExecutionResult): JsonValue => {
  if (!r.outcome.ok) throw new Error(`op failed: ${r.outcome.error}`);
  return r.outcome.value;
};
const errorOf = (r: ExecutionResult): string => {
  if (r.outcome.ok) throw new Error(`op succeeded with ${JSON.stringify(r.outcome.value)}`);
  return r.outcome.error;
};

/** An op definition from a bare function, for tests of runOperation itself. */
function def(run: AnyOpDefinition['run'], readOnly = false): AnyOpDefinition {
  return { args: z.unknown(), readOnly, run };
}

describe('defineApp', () => {
  const app = defineApp({
    addItem: op({
      args: z.object({ list: z.string(), item: z.string() }),
      run: (tx, { list, item }) => {
        const cur = (tx.get(list) as string[] | undefined) ?? [];
        tx.put(list, [...cur, item]);
        return cur.length + 1;
      },
    }),
    'cart.v2-checkout_now': op({ args: z.null(), run: () => null }),
    kvstore: op({ args: z.null(), run: () => null }),
  });

  it('registers the app’s ops next to the built-ins', () => {
    expect(app.names()).toEqual([...app.names()].sort());
    expect(app.names()).toEqual(
      expect.arrayContaining([
        'addItem',
        'cart.v2-checkout_now',
        'kvstore',
        'kv.get',
        'kv.put',
        'kv.delete',
        'kv.cas',
        'kv.increment',
        'queue.enqueue',
        'queue.dequeue',
        'queue.peek',
        'queue.size',
        'creek.noop',
      ]),
    );
    expect(app.names()).toHaveLength(Object.keys(builtins).length + 3);
    expect(app.lookup('kv.get')).toBe(builtins['kv.get']);
    expect(app.lookup('addItem')).toBe(app.definitions.addItem);
    expect(app.lookup('nope')).toBeUndefined();
  });

  it('runs an app op end to end', () => {
    const store = storeOf();
    expect(valueOf(call(app, 'addItem', { list: 'l', item: 'a' }, store))).toBe(1);
    expect(valueOf(call(app, 'addItem', { list: 'l', item: 'b' }, store))).toBe(2);
    expect(store.get('l')).toEqual(['a', 'b']);
  });

  it.each(['kv.mine', 'queue.custom', 'creek.noop', 'creek.other'])(
    'rejects the reserved name %s',
    (name) => {
      expect(() => defineApp({ [name]: op({ args: z.null(), run: () => null }) })).toThrow(
        /reserved prefix \(kv\., queue\., creek\.\)/,
      );
    },
  );

  it.each(['', '1op', 'has space', 'semi;colon', '-dash', 'é'])(
    'rejects the bad name %j',
    (name) => {
      expect(() => defineApp({ [name]: op({ args: z.null(), run: () => null }) })).toThrow(
        `invalid operation name '${name}'`,
      );
    },
  );

  it('rejects args that are not a Zod schema and a run that is not a function', () => {
    const noSchema = { args: { key: 'string' }, run: () => null } as unknown as AnyOpDefinition;
    expect(() => defineApp({ noSchema })).toThrow(
      "operation 'noSchema': args must be a Zod schema",
    );
    const noRun = { args: z.null(), run: 'x' } as unknown as AnyOpDefinition;
    expect(() => defineApp({ noRun })).toThrow("operation 'noRun': run must be a function");
  });
});

describe('checkArgs', () => {
  const order = op({
    args: z.object({
      name: z.string(),
      items: z.array(z.object({ sku: z.string(), qty: z.number().int().positive() })),
    }),
    run: () => null,
  });

  it('returns the parsed arguments', () => {
    const args = { name: 'n', items: [{ sku: 'a', qty: 1 }] };
    expect(checkArgs('order', order, args)).toEqual({ ok: true, args });
    // Defaults are applied and unknown fields stripped.
    expect(checkArgs('kv.increment', builtins['kv.increment'], { key: 'k', extra: 1 })).toEqual({
      ok: true,
      args: { key: 'k', by: 1 },
    });
  });

  it('names the path of every offending field', () => {
    const r = checkArgs('order', order, {
      name: 5,
      items: [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: -1 },
      ],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.startsWith("invalid arguments for 'order': ")).toBe(true);
    const problems = r.error.slice("invalid arguments for 'order': ".length).split('; ');
    expect(problems).toHaveLength(2);
    expect(problems.some((p) => p.startsWith('name: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('items.1.qty: '))).toBe(true);
  });

  it('uses the built-ins’ messages', () => {
    expect(checkArgs('kv.get', builtins['kv.get'], { key: '' })).toEqual({
      ok: false,
      error: "invalid arguments for 'kv.get': key: must be a non-empty string",
    });
    const r = checkArgs('queue.enqueue', builtins['queue.enqueue'], { queue: '', item: 1 });
    expect(r).toEqual({
      ok: false,
      error: "invalid arguments for 'queue.enqueue': queue: must be a non-empty string",
    });
    const missing = checkArgs('kv.put', builtins['kv.put'], { value: 1 });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toMatch(/^invalid arguments for 'kv.put': key: /);
    const notFinite = checkArgs('kv.increment', builtins['kv.increment'], {
      key: 'k',
      by: Infinity,
    });
    expect(notFinite.ok).toBe(false);
    if (!notFinite.ok) expect(notFinite.error).toMatch(/: by: /);
  });

  it('says (arguments) when the arguments themselves are wrong', () => {
    const r = checkArgs('kv.get', builtins['kv.get'], 'k');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/^invalid arguments for 'kv.get': \(arguments\): /);
    expect(checkArgs('creek.noop', builtins['creek.noop'], null)).toEqual({ ok: true, args: null });
    expect(checkArgs('creek.noop', builtins['creek.noop'], {}).ok).toBe(false);
  });
});

describe('runOperation', () => {
  it('fails an unknown operation', () => {
    const r = runOperation(undefined, job('nope', null));
    expect(r.outcome).toEqual({ ok: false, error: "unknown operation 'nope'" });
    expect(r.writes).toEqual([]);
  });

  it('returns the job id, the value and the writes', () => {
    const j = job('w', null);
    const r = runOperation(
      def((tx) => {
        tx.put('a', 1);
        tx.put('b', { x: [1] });
        return 'done';
      }),
      j,
    );
    expect(r.jobId).toBe(j.jobId);
    expect(r.outcome).toEqual({ ok: true, value: 'done' });
    expect(r.writes).toEqual([
      ['a', 1],
      ['b', { x: [1] }],
    ]);
  });

  it('turns undefined into null and freezes the result', () => {
    expect(
      runOperation(
        def(() => undefined),
        job('u', null),
      ).outcome,
    ).toEqual({
      ok: true,
      value: null,
    });
    const r = runOperation(
      def(() => ({ list: [1] })),
      job('f', null),
    );
    expect(r.outcome.ok && Object.isFrozen(r.outcome.value)).toBe(true);
  });

  it('turns a thrown error into a failed outcome and discards the writes', () => {
    const r = runOperation(
      def((tx) => {
        tx.put('a', 1);
        throw new Error('sold out');
      }),
      job('t', null),
    );
    expect(r).toMatchObject({ outcome: { ok: false, error: 'sold out' }, writes: [] });
    expect(
      runOperation(
        def(() => {
          throw 'plain string';
        }),
        job('t', null),
      ).outcome,
    ).toEqual({ ok: false, error: 'plain string' });
    expect(
      runOperation(
        def(() => {
          throw new RangeError();
        }),
        job('t', null),
      ).outcome,
    ).toEqual({ ok: false, error: 'RangeError' });
  });

  it('fails a result that is not JSON', () => {
    const r = runOperation(
      def(() => ({ n: NaN })),
      job('nan', null),
    );
    expect(r.outcome).toEqual({ ok: false, error: 'result.n is not a finite number' });
  });

  it('fails a write that is not JSON, naming the key', () => {
    const r = runOperation(
      def((tx) => tx.put('k', { when: new Date(0) } as unknown as JsonValue)),
      job('bad', null),
    );
    expect(r.outcome).toEqual({ ok: false, error: "value of 'k'.when is not a plain object" });
    expect(r.writes).toEqual([]);
  });

  it('rejects empty or non-string keys', () => {
    for (const run of [
      (tx: Parameters<AnyOpDefinition['run']>[0]) => tx.get(''),
      (tx: Parameters<AnyOpDefinition['run']>[0]) => tx.put('', 1),
      (tx: Parameters<AnyOpDefinition['run']>[0]) => tx.delete(''),
      (tx: Parameters<AnyOpDefinition['run']>[0]) => tx.get(1 as unknown as string),
    ]) {
      expect(runOperation(def(run), job('k', null)).outcome).toEqual({
        ok: false,
        error: 'keys must be non-empty strings',
      });
    }
    expect(
      runOperation(
        def((tx) => tx.scan(undefined as unknown as string)),
        job('s', null),
      ).outcome,
    ).toEqual({ ok: false, error: 'scan prefix must be a string' });
  });

  it('buffers writes, which the op reads back, without touching the snapshot', () => {
    const store = storeOf({ a: 1, b: 2 });
    const seen: unknown[] = [];
    const r = runOperation(
      def((tx) => {
        seen.push(tx.get('a'), tx.get('missing'));
        tx.put('a', 10);
        tx.delete('b');
        tx.put('c', 3);
        tx.delete('c');
        tx.put('d', 4);
        seen.push(tx.get('a'), tx.get('b'), tx.get('c'), tx.get('d'));
        return null;
      }),
      job('buf', null, { store }),
    );
    expect(seen).toEqual([1, undefined, 10, undefined, undefined, 4]);
    expect(r.writes).toEqual([
      ['a', 10],
      ['b', undefined],
      ['c', undefined],
      ['d', 4],
    ]);
    expect(Object.fromEntries(store)).toEqual({ a: 1, b: 2 });
  });

  it('stores a frozen copy of a written value', () => {
    const value = { n: 1 };
    const r = runOperation(
      def((tx) => {
        tx.put('k', value);
        value.n = 2;
        const back = tx.get('k') as { n: number };
        const frozen = Object.isFrozen(back);
        return { n: back.n, frozen };
      }),
      job('copy', null),
    );
    expect(r.outcome).toEqual({ ok: true, value: { n: 1, frozen: true } });
    expect(r.writes).toEqual([['k', { n: 1 }]]);
  });

  it('scan merges the snapshot with the op’s own writes and deletes, sorted by key', () => {
    const store = storeOf({ 'p/1': 1, 'p/2': 2, 'p/3': 3, 'q/1': 'q' });
    const r = runOperation(
      def((tx) => {
        const before = tx.scan('p/');
        tx.put('p/2', 20);
        tx.delete('p/3');
        tx.put('p/0', 0);
        tx.delete('p/9');
        tx.put('q/2', 'q2');
        return { before, after: tx.scan('p/'), all: tx.scan('').map(([k]) => k) };
      }),
      job('scan', null, { store }),
    );
    expect(valueOf(r)).toEqual({
      before: [
        ['p/1', 1],
        ['p/2', 2],
        ['p/3', 3],
      ],
      after: [
        ['p/0', 0],
        ['p/1', 1],
        ['p/2', 20],
      ],
      all: ['p/0', 'p/1', 'p/2', 'q/1', 'q/2'],
    });
  });

  it('tx.now() is the millisecond part of the op timestamp', () => {
    const ts = 1_712_345_678_901_234;
    const r = runOperation(
      def((tx) => tx.now()),
      job('now', null, { ts }),
    );
    expect(valueOf(r)).toBe(hlcToMillis(ts));
    expect(valueOf(r)).toBe(1_712_345_678_901);
  });

  describe('tx.random()', () => {
    const draw = def((tx) => [tx.random(), tx.random(), tx.random(), tx.random()]);
    const draws = (id: OpId | null, ts = 1_000_000) =>
      valueOf(runOperation(draw, job('rnd', null, { id, ts }))) as number[];

    it('is in [0, 1) and not constant', () => {
      const xs = draws({ replica: 3, eventNo: 7 });
      for (const x of xs) {
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThan(1);
      }
      expect(new Set(xs).size).toBe(xs.length);
    });

    it('is equal for equal op ids, on any replica', () => {
      expect(draws({ replica: 3, eventNo: 7 })).toEqual(draws({ replica: 3, eventNo: 7 }));
      expect(draws(null, 42_000)).toEqual(draws(null, 42_000));
    });

    it('differs for different op ids', () => {
      const base = draws({ replica: 3, eventNo: 7 });
      expect(draws({ replica: 3, eventNo: 8 })).not.toEqual(base);
      expect(draws({ replica: 4, eventNo: 7 })).not.toEqual(base);
      expect(draws({ replica: 7, eventNo: 3 })).not.toEqual(base);
      const firsts = new Set<number>();
      for (let r = 0; r < 5; r++)
        for (let e = 1; e <= 20; e++) firsts.add(draws({ replica: r, eventNo: e })[0]!);
      expect(firsts.size).toBe(100);
    });
  });

  it('fails a read-only op that writes', () => {
    const putter = runOperation(
      def((tx) => {
        tx.put('k', 1);
      }, true),
      job('peekAndPoke', null),
    );
    expect(putter).toMatchObject({
      outcome: { ok: false, error: "operation 'peekAndPoke' is read-only and cannot put 'k'" },
      writes: [],
    });
    const deleter = runOperation(
      def((tx) => {
        tx.delete('k');
      }, true),
      job('peekAndDrop', null),
    );
    expect(deleter.outcome).toEqual({
      ok: false,
      error: "operation 'peekAndDrop' is read-only and cannot delete 'k'",
    });
    // Reading is fine.
    const store = storeOf({ k: 'v' });
    expect(
      runOperation(
        def((tx) => tx.get('k') ?? null, true),
        job('reader', null, { store }),
      ).outcome,
    ).toEqual({ ok: true, value: 'v' });
  });

  it('fails an op that mutates a value it read', () => {
    const store = storeOf({ cart: { items: ['a'] } });
    const r = runOperation(
      def((tx) => {
        const cart = tx.get('cart') as { items: string[] };
        cart.items.push('b');
        tx.put('cart', cart);
      }),
      job('mutate', null, { store }),
    );
    expect(r.outcome.ok).toBe(false);
    expect(r.writes).toEqual([]);
    expect(store.get('cart')).toEqual({ items: ['a'] });
    // Copying first works.
    const ok = runOperation(
      def((tx) => {
        const cart = tx.get('cart') as { items: string[] };
        tx.put('cart', { items: [...cart.items, 'b'] });
      }),
      job('copy', null, { store }),
    );
    expect(ok.outcome.ok).toBe(true);
    expect(ok.writes).toEqual([['cart', { items: ['a', 'b'] }]]);
  });

  it('fails an op that returns a promise', () => {
    const r = runOperation(
      def(() => Promise.resolve(1)),
      job('asyncOp', null),
    );
    expect(r.outcome).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^operation 'asyncOp' returned a Promise \(or another thenable\): run must be synchronous/,
      ),
    });
    const thenable = runOperation(
      def(() => ({ then: () => undefined })),
      job('thenable', null),
    );
    expect(thenable.outcome.ok).toBe(false);
  });
});

describe('built-ins', () => {
  const app = defineApp({});

  it('marks exactly the reads as read-only', () => {
    const readOnly = Object.entries(builtins)
      .filter(([, d]) => (d as AnyOpDefinition).readOnly === true)
      .map(([n]) => n)
      .sort();
    expect(readOnly).toEqual(['creek.context.frontier', 'kv.get', 'queue.peek', 'queue.size']);
  });

  describe('kv', () => {
    it('get returns null for a missing key and the value otherwise', () => {
      const store = storeOf({ k: { a: [1] } });
      expect(valueOf(call(app, 'kv.get', { key: 'missing' }, store))).toBeNull();
      expect(valueOf(call(app, 'kv.get', { key: 'k' }, store))).toEqual({ a: [1] });
    });

    it('put writes the value and returns null', () => {
      const store = storeOf();
      const r = call(app, 'kv.put', { key: 'k', value: { a: 1 } }, store);
      expect(valueOf(r)).toBeNull();
      expect(r.writes).toEqual([['k', { a: 1 }]]);
      expect(valueOf(call(app, 'kv.get', { key: 'k' }, store))).toEqual({ a: 1 });
      call(app, 'kv.put', { key: 'k', value: 'replaced' }, store);
      expect(valueOf(call(app, 'kv.get', { key: 'k' }, store))).toBe('replaced');
    });

    it('delete removes the key and is fine on a missing key', () => {
      const store = storeOf({ k: 1 });
      const r = call(app, 'kv.delete', { key: 'k' }, store);
      expect(valueOf(r)).toBeNull();
      expect(r.writes).toEqual([['k', undefined]]);
      expect(store.has('k')).toBe(false);
      expect(valueOf(call(app, 'kv.get', { key: 'k' }, store))).toBeNull();
      expect(valueOf(call(app, 'kv.delete', { key: 'k' }, store))).toBeNull();
    });

    describe('cas', () => {
      it('creates a missing key when expected is null', () => {
        const store = storeOf();
        const r = call(app, 'kv.cas', { key: 'k', expected: null, value: 1 }, store);
        expect(valueOf(r)).toEqual({ ok: true, current: 1 });
        expect(store.get('k')).toBe(1);
      });

      it('swaps when the current value equals expected, whatever the key order', () => {
        const store = storeOf({ k: { a: 1, b: [2] } });
        const r = call(
          app,
          'kv.cas',
          { key: 'k', expected: { b: [2], a: 1 }, value: { a: 2 } },
          store,
        );
        expect(valueOf(r)).toEqual({ ok: true, current: { a: 2 } });
        expect(store.get('k')).toEqual({ a: 2 });
      });

      it('fails without writing when the current value differs', () => {
        const store = storeOf({ k: 5 });
        const r = call(app, 'kv.cas', { key: 'k', expected: 4, value: 6 }, store);
        expect(valueOf(r)).toEqual({ ok: false, current: 5 });
        expect(r.writes).toEqual([]);
        expect(store.get('k')).toBe(5);
        const absent = call(app, 'kv.cas', { key: 'none', expected: 0, value: 1 }, store);
        expect(valueOf(absent)).toEqual({ ok: false, current: null });
        expect(store.has('none')).toBe(false);
        const present = call(app, 'kv.cas', { key: 'k', expected: null, value: 1 }, store);
        expect(valueOf(present)).toEqual({ ok: false, current: 5 });
      });
    });

    describe('increment', () => {
      it('starts a missing key at 0 and adds 1 by default', () => {
        const store = storeOf();
        expect(valueOf(call(app, 'kv.increment', { key: 'n' }, store))).toBe(1);
        expect(valueOf(call(app, 'kv.increment', { key: 'n' }, store))).toBe(2);
        expect(store.get('n')).toBe(2);
      });

      it('adds any finite amount', () => {
        const store = storeOf({ n: 10 });
        expect(valueOf(call(app, 'kv.increment', { key: 'n', by: 5 }, store))).toBe(15);
        expect(valueOf(call(app, 'kv.increment', { key: 'n', by: -20.5 }, store))).toBe(-5.5);
        expect(valueOf(call(app, 'kv.increment', { key: 'm', by: 0 }, store))).toBe(0);
        expect(store.get('m')).toBe(0);
      });

      it('fails on a value that is not a number, without writing', () => {
        const store = storeOf({ s: '1', l: [1], o: { n: 1 }, b: true });
        const str = call(app, 'kv.increment', { key: 's' }, store);
        expect(errorOf(str)).toBe("kv.increment: 's' holds a string, not a number");
        expect(str.writes).toEqual([]);
        expect(errorOf(call(app, 'kv.increment', { key: 'l' }, store))).toBe(
          "kv.increment: 'l' holds a list, not a number",
        );
        expect(errorOf(call(app, 'kv.increment', { key: 'b' }, store))).toBe(
          "kv.increment: 'b' holds a boolean, not a number",
        );
        expect(errorOf(call(app, 'kv.increment', { key: 'o' }, store))).toMatch(
          /^kv.increment: 'o' holds a/,
        );
        expect(store.get('s')).toBe('1');
      });

      it('fails when the sum overflows to Infinity', () => {
        const store = storeOf({ n: Number.MAX_VALUE });
        const r = call(app, 'kv.increment', { key: 'n', by: Number.MAX_VALUE }, store);
        expect(errorOf(r)).toBe("value of 'n' is not a finite number");
        expect(store.get('n')).toBe(Number.MAX_VALUE);
      });
    });
  });

  describe('queue', () => {
    it('is empty at first', () => {
      const store = storeOf();
      expect(valueOf(call(app, 'queue.size', { queue: 'q' }, store))).toBe(0);
      expect(valueOf(call(app, 'queue.peek', { queue: 'q' }, store))).toBeNull();
      const r = call(app, 'queue.dequeue', { queue: 'q' }, store);
      expect(valueOf(r)).toBeNull();
      expect(r.writes).toEqual([]);
    });

    it('enqueues at increasing positions and dequeues in FIFO order', () => {
      const store = storeOf();
      expect(valueOf(call(app, 'queue.enqueue', { queue: 'q', item: 'a' }, store))).toEqual({
        position: 0,
      });
      expect(valueOf(call(app, 'queue.enqueue', { queue: 'q', item: { job: 2 } }, store))).toEqual({
        position: 1,
      });
      expect(valueOf(call(app, 'queue.enqueue', { queue: 'q', item: null }, store))).toEqual({
        position: 2,
      });
      expect(valueOf(call(app, 'queue.size', { queue: 'q' }, store))).toBe(3);
      expect(valueOf(call(app, 'queue.peek', { queue: 'q' }, store))).toEqual({
        item: 'a',
        position: 0,
      });
      // peek does not remove.
      expect(valueOf(call(app, 'queue.size', { queue: 'q' }, store))).toBe(3);

      expect(valueOf(call(app, 'queue.dequeue', { queue: 'q' }, store))).toEqual({
        item: 'a',
        position: 0,
        remaining: 2,
      });
      expect(valueOf(call(app, 'queue.peek', { queue: 'q' }, store))).toEqual({
        item: { job: 2 },
        position: 1,
      });
      expect(valueOf(call(app, 'queue.dequeue', { queue: 'q' }, store))).toEqual({
        item: { job: 2 },
        position: 1,
        remaining: 1,
      });
      expect(valueOf(call(app, 'queue.dequeue', { queue: 'q' }, store))).toEqual({
        item: null,
        position: 2,
        remaining: 0,
      });
      expect(valueOf(call(app, 'queue.size', { queue: 'q' }, store))).toBe(0);
      expect(valueOf(call(app, 'queue.dequeue', { queue: 'q' }, store))).toBeNull();
      expect(valueOf(call(app, 'queue.peek', { queue: 'q' }, store))).toBeNull();

      // Positions keep counting after the queue drained.
      expect(valueOf(call(app, 'queue.enqueue', { queue: 'q', item: 'd' }, store))).toEqual({
        position: 3,
      });
      expect(valueOf(call(app, 'queue.dequeue', { queue: 'q' }, store))).toEqual({
        item: 'd',
        position: 3,
        remaining: 0,
      });
    });

    it('deletes dequeued items from the store', () => {
      const store = storeOf();
      call(app, 'queue.enqueue', { queue: 'q', item: 'a' }, store);
      expect([...store.values()]).toContain('a');
      const r = call(app, 'queue.dequeue', { queue: 'q' }, store);
      expect(r.writes.filter(([, v]) => v === undefined)).toHaveLength(1);
      expect([...store.values()]).not.toContain('a');
      // Only the head and tail counters are left (under ~queue/<name>/).
      expect([...store.keys()].sort()).toEqual(['~queue/q/head', '~queue/q/tail']);
    });

    it('keeps queues separate', () => {
      const store = storeOf();
      call(app, 'queue.enqueue', { queue: 'a', item: 1 }, store);
      call(app, 'queue.enqueue', { queue: 'a', item: 2 }, store);
      call(app, 'queue.enqueue', { queue: 'b', item: 'x' }, store);
      expect(valueOf(call(app, 'queue.size', { queue: 'a' }, store))).toBe(2);
      expect(valueOf(call(app, 'queue.size', { queue: 'b' }, store))).toBe(1);
      expect(valueOf(call(app, 'queue.dequeue', { queue: 'b' }, store))).toEqual({
        item: 'x',
        position: 0,
        remaining: 0,
      });
      expect(valueOf(call(app, 'queue.peek', { queue: 'a' }, store))).toEqual({
        item: 1,
        position: 0,
      });
    });

    it('does not touch kv keys of the same name', () => {
      const store = storeOf({ q: 'plain', tail: 7, head: 3 });
      expect(valueOf(call(app, 'queue.size', { queue: 'q' }, store))).toBe(0);
      call(app, 'queue.enqueue', { queue: 'q', item: 1 }, store);
      expect(store.get('q')).toBe('plain');
      expect(store.get('tail')).toBe(7);
    });
  });

  it('creek.noop does nothing', () => {
    const store = storeOf({ k: 1 });
    const r = call(app, 'creek.noop', null, store);
    expect(r).toMatchObject({ outcome: { ok: true, value: null }, writes: [] });
  });
});

describe('shared contexts’ built-ins', () => {
  const app = defineApp({});

  it('merge keeps the most of each origin, and frontier reads it back in origin order', () => {
    const store = storeOf();
    expect(valueOf(call(app, 'creek.context.frontier', { id: 'doc' }, store))).toEqual([]);
    call(
      app,
      'creek.context.merge',
      {
        id: 'doc',
        seen: [
          [2, 5],
          [0, 3],
        ],
      },
      store,
    );
    call(
      app,
      'creek.context.merge',
      {
        id: 'doc',
        seen: [
          [0, 1],
          [258, 4],
        ],
      },
      store,
    );
    expect(valueOf(call(app, 'creek.context.frontier', { id: 'doc' }, store))).toEqual([
      [0, 3],
      [2, 5],
      [258, 4],
    ]);
    // Merging again what it holds changes nothing (a merge resubmitted after a failover).
    call(app, 'creek.context.merge', { id: 'doc', seen: [[2, 5]] }, store);
    expect(valueOf(call(app, 'creek.context.frontier', { id: 'doc' }, store))).toHaveLength(3);
    // Another context is another key.
    expect(valueOf(call(app, 'creek.context.frontier', { id: 'other' }, store))).toEqual([]);
  });

  it('refuses a bad id, counts that are not whole numbers, and more origins than a token holds', () => {
    const merge = builtins['creek.context.merge'];
    expect(checkArgs('creek.context.merge', merge, { id: '', seen: [] }).ok).toBe(false);
    expect(checkArgs('creek.context.merge', merge, { id: 'x'.repeat(129), seen: [] }).ok).toBe(
      false,
    );
    expect(checkArgs('creek.context.merge', merge, { id: 'doc', seen: [[0, 1.5]] }).ok).toBe(false);
    expect(checkArgs('creek.context.merge', merge, { id: 'doc', seen: [[-1, 1]] }).ok).toBe(false);
    const many = Array.from({ length: 129 }, (_, i) => [i, 1]);
    expect(checkArgs('creek.context.merge', merge, { id: 'doc', seen: many }).ok).toBe(false);
    // Within bounds each time, over them together: the op fails and writes nothing.
    const store = storeOf();
    call(app, 'creek.context.merge', { id: 'doc', seen: many.slice(0, 100) }, store);
    const r = call(
      app,
      'creek.context.merge',
      { id: 'doc', seen: many.slice(100).map(([o]) => [o! + 1000, 1]) },
      store,
    );
    expect(errorOf(r)).toMatch(/more than 128 origins/);
    expect(valueOf(call(app, 'creek.context.frontier', { id: 'doc' }, store))).toHaveLength(100);
  });

  it('keeps the frontiers from kv.*: a contexts check cannot be gone around through a key', () => {
    for (const [op, args] of [
      ['kv.get', { key: '~context/doc' }],
      ['kv.put', { key: '~context/doc', value: [[0, 99]] }],
      ['kv.delete', { key: '~context/doc' }],
      ['kv.cas', { key: '~context/doc', expected: null, value: 1 }],
      ['kv.increment', { key: '~context/doc' }],
    ] as const) {
      const r = checkArgs(op, builtins[op], args);
      expect(r.ok, op).toBe(false);
      expect(r.ok ? '' : r.error).toMatch(/must not start with '~context\/'/);
    }
    // Keys that only look alike are keys like any other.
    expect(checkArgs('kv.get', builtins['kv.get'], { key: '~contexts/doc' }).ok).toBe(true);
    expect(checkArgs('kv.get', builtins['kv.get'], { key: 'a/~context/doc' }).ok).toBe(true);
  });
});
