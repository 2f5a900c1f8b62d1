import { describe, expect, it } from 'vitest';
import type { ConsistencyLevel, View, ViewSink } from '../src/binding.js';
import { Unavailable, type CreekError } from '../src/errors.js';
import type { ContextSink } from '../src/session/context-requests.js';
import * as app from '@creek/app';
import {
  CONTEXT_FRONTIER_OP,
  CONTEXT_MERGE_OP,
  MAX_CONTEXT_ID_LENGTH,
  SharedContext,
  type SharedContextIo,
} from '../src/session/shared-context.js';

/**
 * A shared context's steps (session/shared-context.ts) over a scripted session: the frontier read
 * strong, the wait for its ops, the op, the merge of a token covering it, strong, and only then
 * the caller's final view. Each step waits for the one before; the test answers them by hand.
 */
interface Submitted {
  readonly op: string;
  readonly args: unknown;
  readonly levels: ConsistencyLevel[];
  readonly sink: ViewSink<unknown>;
}

function scripted() {
  const submitted: Submitted[] = [];
  const contexts: ContextSink[] = [];
  const waits: { seen: readonly number[]; sink: ContextSink }[] = [];
  const io: SharedContextIo = {
    submit: (op, args, levels, sink) => submitted.push({ op, args, levels, sink }),
    context: (sink) => contexts.push(sink),
    afterSeen: (seen, sink) => waits.push({ seen, sink }),
  };
  return { io, submitted, contexts, waits };
}

function caller() {
  const views: View<unknown>[] = [];
  const errors: CreekError[] = [];
  const sink: ViewSink<unknown> = {
    view: (v) => views.push(v),
    error: (e) => errors.push(e),
  };
  return { views, errors, sink };
}

const final = (value: unknown, level: ConsistencyLevel = 'strong'): View<unknown> => ({
  value,
  level,
  final: true,
});
/** A token as a replica signs it: counts 4, 0, 2 (the MAC is not checked client-side). */
const TOKEN = 'ct1.4-0-2.AAAAAAAAAAAAAAAAAAAAAA';

describe('a shared context', () => {
  it('names the built-ins and bounds the id as the replicas do (@creek/app)', () => {
    // Copies, so that a browser bundle of the client does not carry the built-ins' schemas.
    expect([CONTEXT_MERGE_OP, CONTEXT_FRONTIER_OP, MAX_CONTEXT_ID_LENGTH]).toEqual([
      app.CONTEXT_MERGE_OP,
      app.CONTEXT_FRONTIER_OP,
      app.MAX_CONTEXT_ID_CHARS,
    ]);
  });

  it('says the op waits offline while its frontier read or its merge does', () => {
    const s = scripted();
    const queued: boolean[] = [];
    new SharedContext('doc-1', s.io).invoke('kv.put', { key: 'k' }, ['weak'], {
      ...caller().sink,
      queued: (q) => queued.push(q),
    });
    s.submitted[0]!.sink.queued!(true);
    s.submitted[0]!.sink.queued!(false);
    s.submitted[0]!.sink.view(final([]));
    s.submitted[1]!.sink.view(final(null, 'weak'));
    s.contexts[0]!.token(TOKEN);
    expect(s.submitted[2]!.op).toBe('creek.context.merge');
    s.submitted[2]!.sink.queued!(true);
    expect(queued).toEqual([true, false, true]);
  });

  it('reads the frontier, waits for it, runs the op, merges it, and only then gives the final view', () => {
    const s = scripted();
    const c = caller();
    const acks: string[] = [];
    new SharedContext('doc-1', s.io).invoke(
      'kv.put',
      { key: 'k', value: 1 },
      ['weak', 'strong'],
      c.sink,
      [],
      (ref) => acks.push(ref),
    );
    // 1. The frontier, read strong; nothing else yet.
    expect(s.submitted.map((x) => [x.op, x.args, x.levels])).toEqual([
      ['creek.context.frontier', { id: 'doc-1' }, ['strong']],
    ]);
    s.submitted[0]!.sink.view(
      final([
        [0, 3],
        [2, 7],
      ]),
    );
    // 2. The session waits for the frontier's ops before the op goes.
    expect(s.waits.map((w) => w.seen)).toEqual([[3, undefined, 7]]);
    expect(s.submitted).toHaveLength(1);
    s.waits[0]!.sink.token('ct1.3-0-7.AAAAAAAAAAAAAAAAAAAAAA');
    // 3. The op, at the caller's levels; its preliminary view passes at once.
    expect(s.submitted[1]!.op).toBe('kv.put');
    expect(s.submitted[1]!.levels).toEqual(['weak', 'strong']);
    s.submitted[1]!.sink.view({ value: null, level: 'weak', final: false });
    expect(c.views).toEqual([{ value: null, level: 'weak', final: false }]);
    // 4. Its final view is held: a token covering it is asked for and merged, strong.
    s.submitted[1]!.sink.view(final(null));
    expect(c.views).toHaveLength(1);
    expect(s.contexts).toHaveLength(1);
    s.contexts[0]!.token(TOKEN);
    expect(s.submitted[2]!.op).toBe('creek.context.merge');
    expect(s.submitted[2]!.levels).toEqual(['strong']);
    expect(s.submitted[2]!.args).toEqual({
      id: 'doc-1',
      seen: [
        [0, 4],
        [2, 2],
      ],
    });
    expect(c.views).toHaveLength(1);
    s.submitted[2]!.sink.view(final(null));
    expect(c.views.at(-1)).toEqual(final(null));
    expect(acks).toEqual([TOKEN]);
    expect(c.errors).toEqual([]);
  });

  it('goes straight to the op when the frontier is empty, and waits for the op refs it names', () => {
    const s = scripted();
    new SharedContext('doc-1', s.io).invoke('kv.get', { key: 'k' }, ['weak'], caller().sink);
    s.submitted[0]!.sink.view(final([]));
    expect(s.waits).toEqual([]);
    expect(s.submitted[1]!.op).toBe('kv.get');

    const t = scripted();
    new SharedContext('doc-1', t.io).invoke('kv.get', { key: 'k' }, ['weak'], caller().sink, [
      TOKEN,
    ]);
    t.submitted[0]!.sink.view(final([[1, 9]]));
    // The element-wise maximum of the frontier and the ref.
    expect(t.waits.map((w) => w.seen)).toEqual([[4, 9, 2]]);
  });

  it('fails the op when the frontier cannot be read or waited for, before the op is sent', () => {
    const s = scripted();
    const c = caller();
    new SharedContext('doc-1', s.io).invoke('kv.put', { key: 'k', value: 1 }, ['weak'], c.sink);
    s.submitted[0]!.sink.error(new Unavailable('no majority'));
    expect(c.errors.map((e) => e.message)).toEqual([expect.stringContaining('no majority')]);
    expect(s.submitted).toHaveLength(1);

    const t = scripted();
    const d = caller();
    new SharedContext('doc-1', t.io).invoke('kv.put', { key: 'k', value: 1 }, ['weak'], d.sink);
    t.submitted[0]!.sink.view(final([[0, 5]]));
    t.waits[0]!.sink.error(new Unavailable('not caught up within 3 s'));
    expect(d.errors).toHaveLength(1);
    expect(t.submitted).toHaveLength(1);
  });

  it('says an op that has its answer but was not merged may have taken effect', () => {
    const s = scripted();
    const c = caller();
    new SharedContext('doc-1', s.io).invoke('kv.put', { key: 'k', value: 1 }, ['weak'], c.sink);
    s.submitted[0]!.sink.view(final([]));
    s.submitted[1]!.sink.view(final(null, 'weak'));
    s.contexts[0]!.token(TOKEN);
    s.submitted[2]!.sink.error(new Unavailable('no majority'));
    expect(c.views).toEqual([]);
    expect(c.errors).toHaveLength(1);
    expect(c.errors[0]).toBeInstanceOf(Unavailable);
    expect(c.errors[0]!.mayHaveTakenEffect).toBe(true);
    expect(c.errors[0]!.message).toMatch(/context 'doc-1' did not take it in/);
  });

  it('refuses a bad context id, a malformed op ref, and a frontier that is not one', () => {
    const s = scripted();
    expect(() => new SharedContext('', s.io)).toThrow(/non-empty/);
    expect(() => new SharedContext('x'.repeat(129), s.io)).toThrow(/at most 128 characters/);
    expect(() => new SharedContext(7 as unknown as string, s.io)).toThrow(/a string, not number/);
    const c = caller();
    new SharedContext('doc-1', s.io).invoke('kv.get', { key: 'k' }, ['weak'], c.sink, ['ct1.x']);
    expect(c.errors[0]).toBeInstanceOf(TypeError);
    expect(s.submitted).toEqual([]);
    const d = caller();
    new SharedContext('doc-1', s.io).invoke('kv.get', { key: 'k' }, ['weak'], d.sink);
    s.submitted[0]!.sink.view(final({ not: 'pairs' }));
    expect(d.errors[0]!.message).toMatch(/not \[origin, count\] pairs/);
  });

  it('merges weak in the planted bug the simulator catches', () => {
    const s = scripted();
    new SharedContext('doc-1', s.io, { weakMerge: true }).invoke(
      'kv.put',
      { key: 'k', value: 1 },
      ['weak'],
      caller().sink,
    );
    s.submitted[0]!.sink.view(final([]));
    s.submitted[1]!.sink.view(final(null, 'weak'));
    s.contexts[0]!.token(TOKEN);
    expect(s.submitted[2]!.levels).toEqual(['weak']);
  });
});
