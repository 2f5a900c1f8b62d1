import { checkAccess, type JsonValue, type Tx, type User } from '@creek/app';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import app from '../src/todo/app.js';

/**
 * The todo app's ops, run serially on one store as a replica runs them, each as a given caller:
 * every op is scoped to its caller, anonymous callers are refused before anything runs, and the
 * writes commute as the app's header says (the reason they may be weak).
 */

/** The replica's store, shared by every caller. */
type Store = Map<string, JsonValue>;

/** A transaction on `store` as `user` (null: anonymous), with `now` as the op's timestamp. */
function txOf(store: Store, user: User | null, now = 0): Tx {
  return {
    get: (k) => store.get(k),
    put: (k, v) => void store.set(k, v),
    delete: (k) => void store.delete(k),
    scan: (prefix) =>
      [...store].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1)),
    now: () => now,
    random: () => 0,
    user,
  };
}

const user = (id: string): User => ({ id, claims: { sub: id } });
const alice = user('alice');
const bob = user('bob');

type OpName = 'todo.add' | 'todo.toggle' | 'todo.remove' | 'todo.list';

/** Runs op `name` as `caller` after the replica's checks: access first, then the arguments. */
function call(store: Store, caller: User | null, name: OpName, args: unknown, now = 0): unknown {
  const denied = checkAccess(app, name, caller);
  if (denied !== null) throw new Error(`${denied.code}: ${denied.message}`);
  const def = app.lookup(name)!;
  return def.run(txOf(store, caller, now), def.args.parse(args));
}

const list = (store: Store, caller: User): unknown => call(store, caller, 'todo.list', {});

describe('the todo ops, one caller at a time', () => {
  it('adds, toggles, removes and lists the caller own todos, oldest first', () => {
    const store: Store = new Map();
    expect(call(store, alice, 'todo.add', { id: 't2', text: ' milk ' }, 20)).toEqual({
      id: 't2',
      text: 'milk',
      done: false,
      at: 20,
    });
    call(store, alice, 'todo.add', { id: 't1', text: 'bread' }, 30);
    expect(call(store, alice, 'todo.toggle', { id: 't2' })).toMatchObject({ done: true });
    expect(list(store, alice)).toEqual([
      { id: 't2', text: 'milk', done: true, at: 20 },
      { id: 't1', text: 'bread', done: false, at: 30 },
    ]);
    expect(call(store, alice, 'todo.toggle', { id: 't2' })).toMatchObject({ done: false });
    expect(call(store, alice, 'todo.remove', { id: 't2' })).toBe(true);
    expect(call(store, alice, 'todo.remove', { id: 't2' })).toBe(false);
    expect(list(store, alice)).toEqual([{ id: 't1', text: 'bread', done: false, at: 30 }]);
    expect(() => call(store, alice, 'todo.add', { id: 't1', text: 'again' })).toThrow(
      /already a todo t1/,
    );
    expect(() => call(store, alice, 'todo.toggle', { id: 'nope' })).toThrow(/no todo nope/);
  });

  it('refuses bad arguments before anything runs', () => {
    const store: Store = new Map();
    for (const args of [
      { id: 'a/b', text: 'x' },
      { id: '', text: 'x' },
      { id: 'x'.repeat(65), text: 'x' },
      { id: 'ok', text: '   ' },
      { id: 'ok', text: 'x'.repeat(201) },
      { id: 'ok' },
      { id: 7, text: 'x' },
    ])
      expect(() => call(store, alice, 'todo.add', args), JSON.stringify(args)).toThrow();
    expect(store.size).toBe(0);
  });
});

describe('one user never reaches another user todos', () => {
  it('bob sees none of alice todos, and cannot toggle or remove them by id', () => {
    const store: Store = new Map();
    call(store, alice, 'todo.add', { id: 'a1', text: 'alice only' });
    const before = structuredClone([...store]);
    expect(list(store, bob)).toEqual([]);
    expect(() => call(store, bob, 'todo.toggle', { id: 'a1' })).toThrow(/no todo a1/);
    expect(call(store, bob, 'todo.remove', { id: 'a1' })).toBe(false);
    // Bob adding a todo with alice's id makes his own, beside hers.
    call(store, bob, 'todo.add', { id: 'a1', text: 'bob too' });
    expect(list(store, alice)).toEqual([{ id: 'a1', text: 'alice only', done: false, at: 0 }]);
    expect(list(store, bob)).toEqual([{ id: 'a1', text: 'bob too', done: false, at: 0 }]);
    expect([...store].filter(([k]) => !k.startsWith('todo/bob/'))).toEqual(before);
  });

  it('keeps users apart whose ids start alike or hold a slash', () => {
    const store: Store = new Map();
    const a = user('a');
    const ab = user('a/b');
    call(store, ab, 'todo.add', { id: 'x', text: "a/b's" });
    call(store, user('a%2Fb'), 'todo.add', { id: 'y', text: "a%2Fb's" });
    expect(list(store, a)).toEqual([]);
    expect(list(store, ab)).toEqual([{ id: 'x', text: "a/b's", done: false, at: 0 }]);
    expect(call(store, a, 'todo.remove', { id: 'x' })).toBe(false);
    expect(() => call(store, a, 'todo.toggle', { id: 'x' })).toThrow(/no todo x/);
    expect(list(store, ab)).toHaveLength(1);
    expect(list(store, user('a%2Fb'))).toEqual([{ id: 'y', text: "a%2Fb's", done: false, at: 0 }]);
  });

  it('refuses anonymous callers every op, and every user the built-in kv.* and queue.* ops', () => {
    for (const name of ['todo.add', 'todo.toggle', 'todo.remove', 'todo.list'] as const) {
      expect(checkAccess(app, name, null)?.code, name).toBe('unauthorized');
      expect(checkAccess(app, name, alice), name).toBeNull();
    }
    for (const name of ['kv.get', 'kv.put', 'kv.delete', 'queue.enqueue', 'queue.peek']) {
      expect(checkAccess(app, name, alice)?.code, name).toBe('forbidden');
      expect(checkAccess(app, name, null)?.code, name).toBe('unauthorized');
    }
  });

  it('fails an op with no user (a cluster that verifies no tokens) instead of sharing a list', () => {
    const store: Store = new Map();
    const def = app.lookup('todo.add')!;
    expect(() => def.run(txOf(store, null), { id: 'x', text: 'y' })).toThrow(
      /need a signed-in user/,
    );
    expect(() => app.lookup('todo.list')!.run(txOf(store, null), {})).toThrow(
      /need a signed-in user/,
    );
  });
});

describe("why the writes may be weak (Gemini's rule)", () => {
  /** One write of alice's, concurrent with the others: each an op with its own timestamp. */
  type Write =
    | { op: 'todo.add'; text: string }
    | { op: 'todo.toggle'; id: string }
    | { op: 'todo.remove'; id: string };

  it('concurrent writes of one user leave the same list in any order', () => {
    const existing = ['e0', 'e1', 'e2'];
    const write: fc.Arbitrary<Write> = fc.oneof(
      fc.record({
        op: fc.constant('todo.add' as const),
        text: fc.constantFrom('milk', 'bread', 'post'),
      }),
      // Toggles and removes of todos that exist already: one of an id added concurrently would
      // come causally after its add, never concurrent with it.
      fc.record({ op: fc.constant('todo.toggle' as const), id: fc.constantFrom(...existing) }),
      fc.record({ op: fc.constant('todo.remove' as const), id: fc.constantFrom(...existing) }),
    );
    fc.assert(
      fc.property(fc.array(write, { maxLength: 10 }), fc.func(fc.integer()), (writes, rank) => {
        // Each add gets a fresh id, as the client picks one.
        const stamped = writes.map((w, i) => ({
          w: w.op === 'todo.add' ? { ...w, id: `new${i}` } : w,
          at: 100 + i,
        }));
        const shuffled = [...stamped].sort((x, y) => rank(x.at) - rank(y.at) || x.at - y.at);
        const finals = [stamped, shuffled].map((order) => {
          const store: Store = new Map();
          existing.forEach((id, i) => call(store, alice, 'todo.add', { id, text: id }, i));
          for (const { w, at } of order) {
            try {
              call(store, alice, w.op, w, at);
            } catch {
              // A failed toggle (of a todo removed first) changes nothing: that is the point.
            }
          }
          return list(store, alice);
        });
        expect(finals[1]).toEqual(finals[0]);
      }),
    );
  });
});
