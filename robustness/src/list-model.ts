import { jsonEqual, type JsonValue } from '@creek/app';
import { ReferenceInterpreter, type Model } from '@creek/server/sim';
import app from './app.js';

/**
 * The sequential specification of one list (app.ts's list.append and list.read) for the
 * linearizability checker, in the form a long history needs. In any linearization that explains a
 * history whose every effective append is in the final list once, the list is always a prefix of
 * the final list (the app appends at the end, and the final list is the order the appends took
 * effect in), so a state is a prefix's length: a step costs nothing to copy or compare, where the
 * reference interpreter's map of the whole list (appModel) made a minute's history take gigabytes.
 * An append of anything but the prefix's next value leaves the prefixes for good (DIVERGED), and
 * nothing after it can match: a history that needs it is reported not linearizable.
 *
 * That this is the app's semantics is checked, not assumed: `agreesWithReference` runs the final
 * order through the reference interpreter and compares each step.
 */
const DIVERGED = -1;

export function listModel(final: readonly string[]): Model<number> {
  return {
    init: 0,
    step(len, op, args) {
      if (op === 'list.read')
        return {
          outcome: { ok: true, value: len === DIVERGED ? null : final.slice(0, len) },
          next: len,
        };
      if (op !== 'list.append') throw new Error(`listModel: unsupported op '${op}'`);
      const value = (args as { value?: JsonValue }).value;
      if (len !== DIVERGED && final[len] === value)
        return { outcome: { ok: true, value: len + 1 }, next: len + 1 };
      return { outcome: { ok: true, value: null }, next: DIVERGED };
    },
    key: (len) => String(len),
  };
}

/**
 * Whether the reference interpreter, running list `key`'s appends in the final order and then a
 * read, gives what listModel gives at each step: each append the prefix's new length, the read
 * the whole list. Null when it does; otherwise what differs.
 */
export function agreesWithReference(key: string, final: readonly string[]): string | null {
  const reference = new ReferenceInterpreter(app);
  const model = listModel(final);
  let state = model.init;
  for (const value of final) {
    const args = { key, value };
    const want = reference.apply({ op: 'list.append', args, ts: 0, id: null });
    const got = model.step(state, 'list.append', args);
    if (!want.ok || !got.outcome.ok || !jsonEqual(want.value, got.outcome.value))
      return `list ${key}: appending '${value}' gives ${JSON.stringify(got.outcome)} in the list model and ${JSON.stringify(want)} in the reference interpreter`;
    state = got.next;
  }
  const want = reference.apply({ op: 'list.read', args: { key }, ts: 0, id: null });
  const got = model.step(state, 'list.read', { key }).outcome;
  if (!want.ok || !got.ok || !jsonEqual(want.value, got.value))
    return `list ${key}: the final read gives ${JSON.stringify(got)} in the list model and ${JSON.stringify(want)} in the reference interpreter`;
  return null;
}
