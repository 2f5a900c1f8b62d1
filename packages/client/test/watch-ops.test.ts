import { defineApp, op, type App, type JsonValue } from '@creek/app';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { View } from '../src/binding.js';
import { CreekClient, type ReadOpName } from '../src/client.js';
import { errorFromWire, InvalidArguments } from '../src/errors.js';
import { ScriptedBinding } from './support.js';

/**
 * Which ops `watch` takes, at compile time and at run time, and what an unknown op or a watch of
 * an op that writes is told: advice about the op, never "fix the arguments". The `@ts-expect-error`
 * lines are the type test: `tsc -b` fails when one of them no longer fires.
 */
const app = defineApp({
  'todo.add': op({
    args: z.object({ text: z.string() }),
    run: (tx, { text }) => {
      tx.put(`todo/${text}`, text);
      return text;
    },
  }),
  'todo.clear': op({ args: z.null(), readOnly: false, run: () => null }),
  'todo.list': op({
    args: z.object({ prefix: z.string() }),
    readOnly: true,
    run: (tx, { prefix }) => tx.scan(prefix).map(([, v]) => v),
  }),
});

/** A binding that takes live queries and answers none (the client's own checks are tested). */
class WatchingBinding extends ScriptedBinding {
  readonly watched: string[] = [];
  watch(op: string): () => void {
    this.watched.push(op);
    return () => undefined;
  }
}

function typed() {
  return new CreekClient<typeof app>(new WatchingBinding(), { app });
}

describe('watch takes read-only ops', () => {
  it('types: read-only ops (the app’s and the built-in ones) only; any name when untyped', () => {
    expectTypeOf<ReadOpName<typeof app>>().toEqualTypeOf<
      'todo.list' | 'kv.get' | 'queue.peek' | 'queue.size' | 'creek.context.frontier'
    >();
    expectTypeOf<ReadOpName<App>>().toEqualTypeOf<string>();
    const creek = typed();
    const q = creek.watch('todo.list', { prefix: 'todo/' });
    expectTypeOf(q.latest()).toEqualTypeOf<View<JsonValue[]> | undefined>();
    // @ts-expect-error todo.add writes: only read-only ops can be watched
    creek.watch('todo.add', { text: 'milk' }).close();
    // @ts-expect-error readOnly: false is an op that writes too
    creek.watch('todo.clear', null).close();
    // @ts-expect-error kv.put is a built-in op that writes
    creek.watch('kv.put', { key: 'k', value: 1 }).close();
    // @ts-expect-error an op the app does not define
    creek.watch('todo.lst', { prefix: 'todo/' }).close();
    creek.close();
  });

  it('with the app at hand, refuses a watch of an op that writes, saying to invoke it', () => {
    const creek = typed();
    const q = (creek.watch as (op: string, args: unknown) => { error?: unknown })('todo.add', {
      text: 'milk',
    });
    expect(q.error).toBeInstanceOf(InvalidArguments);
    const e = q.error as InvalidArguments;
    expect(e).toMatchObject({ op: 'todo.add', field: 'op' });
    expect(e.message).toMatch(/'todo\.add' writes: only read-only ops can be watched/);
    expect(e.message).toMatch(/invoke the ones that write/);
    expect(e.message).not.toMatch(/fix the arguments/);
    creek.close();
  });

  it('with the app at hand, names the app’s ops for an unknown one, in invoke and in watch', async () => {
    const creek = typed();
    const untyped = creek as unknown as {
      invoke(op: string, args: unknown): PromiseLike<unknown>;
      watch(op: string, args: unknown): { error?: unknown };
    };
    const invoked = await Promise.resolve(untyped.invoke('todo.ad', { text: 'x' })).then(
      () => null,
      (err: unknown) => err,
    );
    const watched = untyped.watch('todo.lst', { prefix: '' }).error;
    for (const [e, name] of [
      [invoked, 'todo.ad'],
      [watched, 'todo.lst'],
    ] as const) {
      expect(e).toBeInstanceOf(InvalidArguments);
      expect(e).toMatchObject({ op: name, field: 'op' });
      const message = (e as Error).message;
      expect(message).toMatch(
        new RegExp(`unknown operation '${name}'; this app has: .*todo\\.add`),
      );
      expect(message).toMatch(/check the op name/);
      expect(message).not.toMatch(/fix the arguments/);
    }
    creek.close();
  });

  it('without the app (plain JavaScript), the replica’s refusal of a write gets the same advice', () => {
    // The replica's words (core/replica.ts); live-queries.e2e.test.ts gets them from a real one.
    const e = errorFromWire(
      'invalid-arguments',
      "'todo.add' writes: only read-only ops can be watched",
    );
    expect(e).toBeInstanceOf(InvalidArguments);
    expect(e).toMatchObject({ op: 'todo.add', field: 'op' });
    expect(e.message).toMatch(/invoke the ones that write/);
    expect(e.message).not.toMatch(/fix the arguments/);
  });
});
