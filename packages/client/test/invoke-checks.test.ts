import { defineApp, op } from '@creek/app';
import { decodeClientFrame, encodeFrame, MAX_FRAME_BYTES } from '@creek/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CreekClient } from '../src/client.js';
import { InvalidArguments } from '../src/errors.js';
import { ScriptedBinding } from './support.js';

/**
 * What `invoke` checks before anything is sent: every problem ends the Correctable with
 * InvalidArguments naming where it is — never a synchronous throw, never a value silently changed
 * on its way to the replica (JSON.stringify turns NaN into null, a Date into a string, a Map into
 * `{}`).
 */
function client(app?: unknown) {
  const binding = new ScriptedBinding();
  const creek = new CreekClient<never>(binding, app === undefined ? {} : { app: app as never });
  const invoke = (op: unknown, args?: unknown, options?: unknown) =>
    (creek.invoke as (o: unknown, a: unknown, opts?: unknown) => PromiseLike<unknown>)(
      op,
      args,
      options,
    );
  return { binding, invoke };
}

/**
 * The error `call` ended with: it must not throw, and must end in InvalidArguments. Nothing is
 * sent (the scripted binding answers nothing), so a call that was not refused never settles: the
 * guard says so instead of waiting for the test's timeout.
 */
async function refused(call: () => PromiseLike<unknown>): Promise<InvalidArguments> {
  let c: PromiseLike<unknown> | undefined;
  expect(() => (c = call())).not.toThrow();
  let guard: ReturnType<typeof setTimeout> | undefined;
  const unsettled = new Promise<never>((_, reject) => {
    guard = setTimeout(() => reject(new Error('the call did not settle')), 5_000);
  });
  const e = await Promise.race([Promise.resolve(c), unsettled])
    .then(
      () => {
        throw new Error('expected a rejection');
      },
      (err: unknown) => err,
    )
    .finally(() => clearTimeout(guard));
  expect(e).toBeInstanceOf(InvalidArguments);
  return e as InvalidArguments;
}

describe('invoke checks its arguments as JSON before sending', () => {
  it('refuses values JSON would change, naming their path; nothing is sent', async () => {
    const { binding, invoke } = client();
    const date = await refused(() =>
      invoke('cart.add', { items: [{}, {}, {}, { when: new Date(0) }] }),
    );
    expect(date.field).toBe('args.items[3].when');
    expect(date.message).toMatch(
      /'cart\.add'.*args\.items\[3\]\.when.*a Date is not a JSON value; pass date\.toISOString\(\).*nothing was applied/,
    );
    expect((await refused(() => invoke('kv.put', { key: 'k', value: NaN }))).message).toMatch(
      /args\.value.*NaN is not a JSON number/,
    );
    expect(
      (await refused(() => invoke('kv.put', { key: 'k', value: new Map([['a', 1]]) }))).field,
    ).toBe('args.value');
    expect(binding.submissions).toEqual([]);
  });

  it('rejects what used to throw out of invoke: a BigInt, a cycle, 5,000-deep nesting', async () => {
    const { binding, invoke } = client();
    expect((await refused(() => invoke('kv.put', { key: 'k', value: 1n }))).message).toMatch(
      /args\.value.*BigInt/,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect((await refused(() => invoke('kv.put', cyclic))).message).toMatch(/args\.self.*cycle/);
    let deep: unknown = 0;
    for (let i = 0; i < 5_000; i++) deep = { d: deep };
    expect((await refused(() => invoke('kv.put', deep))).message).toMatch(/nested deeper than 63/);
    expect(binding.submissions).toEqual([]);
  });

  it('refuses missing arguments, a bad op name, and a value over the frame limit', async () => {
    const { binding, invoke } = client();
    expect((await refused(() => invoke('kv.get'))).message).toMatch(
      /'kv\.get'.*field 'args'.*undefined is not a JSON value/,
    );
    const long = await refused(() => invoke('x'.repeat(257), null));
    expect(long.field).toBe('op');
    expect(long.message).toMatch(/257 characters; op names have at most 256/);
    expect((await refused(() => invoke('', null))).message).toMatch(/op name is empty/);
    expect((await refused(() => invoke(42, null))).message).toMatch(/must be a string/);
    const big = await refused(() => invoke('kv.put', { key: 'k', value: 'x'.repeat(2 << 20) }));
    expect(big.field).toBe('args.value');
    expect(big.message).toMatch(/passes \d+ bytes/);
    expect(binding.submissions).toEqual([]);
  });

  it('accepts an op name of 256 characters counted in code points, as the replica counts them', () => {
    const { binding, invoke } = client();
    void invoke('😀'.repeat(256), null);
    expect(binding.submissions.map((s) => s.op)).toEqual(['😀'.repeat(256)]);
  });

  it('lets through the largest arguments an invoke frame can carry, and no larger', () => {
    const { binding, invoke } = client();
    const accepted = (n: number) => {
      const before = binding.submissions.length;
      void invoke('kv.put', 'x'.repeat(n)).then(undefined, () => undefined);
      return binding.submissions.length > before;
    };
    let lo = 0; // accepted
    let hi = MAX_FRAME_BYTES; // refused
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (accepted(mid)) lo = mid;
      else hi = mid;
    }
    // The largest accepted value fits in a frame even with the largest op name and numbers …
    const frame = encodeFrame({
      t: 'invoke',
      opId: String(Number.MAX_SAFE_INTEGER),
      op: '\u0000'.repeat(256),
      args: 'x'.repeat(lo),
      level: 'strong',
      tentative: false,
      seq: Number.MAX_SAFE_INTEGER,
      acked: Number.MAX_SAFE_INTEGER,
    });
    expect(frame.length).toBe(MAX_FRAME_BYTES);
    expect(decodeClientFrame(frame).ok).toBe(true);
  });

  it('checks what the app schema makes of the arguments, too', async () => {
    const app = defineApp({
      at: op({ args: z.object({ when: z.coerce.date() }), run: () => null }),
      boom: op({
        args: z.object({ n: z.number() }).refine(() => {
          throw new Error('refine exploded');
        }),
        run: () => null,
      }),
    });
    const { binding, invoke } = client(app);
    expect((await refused(() => invoke('at', { when: '2020-01-01' }))).message).toMatch(
      /args\.when.*a Date/,
    );
    expect((await refused(() => invoke('boom', { n: 1 }))).message).toMatch(/refine exploded/);
    expect(binding.submissions).toEqual([]);
  });

  it('refuses a getter that throws as the arguments’ problem', async () => {
    const { invoke } = client();
    const args = {
      get key(): string {
        throw new Error('no key today');
      },
    };
    expect((await refused(() => invoke('kv.get', args))).message).toMatch(/no key today/);
  });
});

describe('invoke checks its options', () => {
  it('refuses levels the binding does not offer, naming the bad entry', async () => {
    const { binding, invoke } = client();
    const bogus = await refused(() => invoke('kv.get', { key: 'k' }, { levels: ['bogus'] }));
    expect(bogus.field).toBe('levels[0]');
    expect(bogus.message).toMatch(/'bogus' is not a consistency level.*'weak', 'strong'/);
    expect(
      (await refused(() => invoke('kv.get', { key: 'k' }, { levels: ['weak', 'strnog'] }))).field,
    ).toBe('levels[1]');
    expect((await refused(() => invoke('kv.get', { key: 'k' }, { levels: [] }))).field).toBe(
      'levels',
    );
    expect(
      (await refused(() => invoke('kv.get', { key: 'k' }, { levels: 'strong' }))).message,
    ).toMatch(/non-empty array/);
    expect(binding.submissions).toEqual([]);
  });

  it('refuses a bad timeout or signal instead of throwing', async () => {
    const { invoke } = client();
    expect((await refused(() => invoke('kv.get', { key: 'k' }, { timeoutMs: -1 }))).field).toBe(
      'timeoutMs',
    );
    expect((await refused(() => invoke('kv.get', { key: 'k' }, { timeoutMs: NaN }))).field).toBe(
      'timeoutMs',
    );
    expect((await refused(() => invoke('kv.get', { key: 'k' }, { signal: {} }))).field).toBe(
      'signal',
    );
  });

  it('gives the binding a signal only when the caller can end the op early', async () => {
    const { binding, invoke } = client();
    void invoke('kv.get', { key: 'k' });
    expect(binding.submissions[0]?.signal).toBeUndefined();
    const caller = new AbortController();
    void invoke('kv.get', { key: 'k' }, { signal: caller.signal }).then(undefined, () => {});
    const timed = invoke('kv.get', { key: 'k' }, { timeoutMs: 1 });
    const [, bySignal, byTimeout] = binding.submissions.map((s) => s.signal);
    expect(bySignal?.aborted).toBe(false);
    caller.abort();
    expect(bySignal?.aborted).toBe(true);
    await Promise.resolve(timed).then(undefined, () => {});
    expect(byTimeout?.aborted).toBe(true);
    expect((byTimeout?.reason as Error).name).toBe('Timeout');
  });

  it('passes valid levels through', () => {
    const { binding, invoke } = client();
    void invoke('kv.get', { key: 'k' }, { levels: ['strong'] });
    void invoke('kv.get', { key: 'k' });
    expect(binding.submissions.map((s) => s.levels)).toEqual([['strong'], ['weak', 'strong']]);
  });
});
