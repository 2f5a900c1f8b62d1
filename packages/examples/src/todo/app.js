/**
 * A per-user todo list: the smallest app with signed-in users, in plain JavaScript. Replicas load
 * this file with `--app`; clients import only its type (or nothing, in the page).
 *
 * Who sees what: every op needs a signed-in user (ops are closed by default once the cluster
 * verifies users' tokens) and builds its keys from `tx.user.id`, never from its arguments, so no
 * op can read or change another user's todos. An id in the arguments names a todo of the
 * caller's own list only.
 *
 * Why the writes can be weak (one answer, from one replica, at once): Gemini's rule (RedBlue §4.2
 * Theorem 1, §5.3 Theorem 2) lets an op be blue (weak) when it is invariant safe and commutes with
 * the ops it may be reordered with, which are the concurrent ones: causally ordered ops are applied
 * in that order everywhere. Here:
 * - the list has no invariant across todos (no limit, no uniqueness of texts), so no op can break
 *   one;
 * - `todo.add` writes a key no other op writes first: the client picks a fresh id, so two adds
 *   never touch the same key, and a toggle or remove of that id comes causally after the add;
 * - `todo.toggle` flips a todo: two flips of one todo give the same state in either order, and a
 *   flip and a remove of one todo leave it removed in either order (a flip of a missing todo
 *   changes nothing).
 * Only one user's devices ever race on a list, and Creek commits weak ops too, so replicas would
 * converge in any case; commuting is what makes a race change no state, only an answer (which
 * flip came first). A list the users must agree on (a shared budget, a seat limit) needs strong
 * ops.
 * `creek check` advises strong for these writes all the same: it applies Gemini's rule to each op's
 * effect as decided at its replica (a flip decided before a concurrent remove would put the todo
 * back), while Creek runs the flip again after the remove. Here that costs a corrected answer at
 * most; see docs/defining-apps.md, "Weak or strong".
 */
import { z } from 'zod';
import { defineApp, op } from '@creek/app';

/** A todo's id, chosen by the client (a UUID): the page shows an added row before any replica answers. */
const IdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "_" or "-"');

const TextSchema = z.string().trim().min(1, 'must not be empty').max(200);

/**
 * The caller's own prefix. The id is encoded, so no user's prefix starts another's: user `a` and
 * user `a/b` (a `sub` may hold any character) get `todo/a/` and `todo/a%2Fb/`.
 * @param {import('@creek/app').Tx} tx
 */
function mine(tx) {
  if (tx.user === null)
    throw new Error('todo ops need a signed-in user: run the cluster with an identity provider');
  return `todo/${encodeURIComponent(tx.user.id)}/`;
}

/**
 * @typedef {{ text: string, done: boolean, at: number }} Stored
 * @typedef {Stored & { id: string }} Todo
 */

/**
 * @param {string} id
 * @param {unknown} stored
 * @returns {Todo}
 */
const todo = (id, stored) => ({ id, .../** @type {Stored} */ (stored) });

export default defineApp({
  /** Adds a todo to the caller's list; returns it. `at` is the op's timestamp, equal everywhere. */
  'todo.add': op({
    args: z.object({ id: IdSchema, text: TextSchema }),
    run(tx, { id, text }) {
      const key = mine(tx) + id;
      if (tx.get(key) !== undefined) throw new Error(`there is already a todo ${id}`);
      /** @type {Stored} */
      const stored = { text, done: false, at: tx.now() };
      tx.put(key, stored);
      return todo(id, stored);
    },
  }),

  /** Flips a todo of the caller's between done and not done; returns it. */
  'todo.toggle': op({
    args: z.object({ id: IdSchema }),
    run(tx, { id }) {
      const key = mine(tx) + id;
      const current = tx.get(key);
      if (current === undefined) throw new Error(`no todo ${id} in your list`);
      const stored = /** @type {Stored} */ (current);
      const next = { ...stored, done: !stored.done };
      tx.put(key, next);
      return todo(id, next);
    },
  }),

  /** Removes a todo of the caller's; true if it was there (removing twice is no error). */
  'todo.remove': op({
    args: z.object({ id: IdSchema }),
    run(tx, { id }) {
      const key = mine(tx) + id;
      const there = tx.get(key) !== undefined;
      if (there) tx.delete(key);
      return there;
    },
  }),

  /** The caller's todos, oldest first: a read, so a page can watch it (a live query). */
  'todo.list': op({
    args: z.object({}),
    readOnly: true,
    run(tx) {
      const prefix = mine(tx);
      return tx
        .scan(prefix)
        .map(([key, stored]) => todo(key.slice(prefix.length), stored))
        .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
  }),
});
