import { jsonEqual, type JsonValue } from '@creek/app';
import { MAX_CAUSE_KEY_CHARS, MAX_CORRECTION_CAUSES } from '@creek/protocol';
import { formatOpId } from './op-id.js';
import type { Entry, ReadRecord, ShownRead, ShownReads } from './entry.js';
import type { CorrectionCause } from './types.js';

export type { CorrectionCause } from './types.js';
export type { ShownReads } from './entry.js';

/**
 * Why a stable answer differs from the tentative one its client was shown (an explained
 * correction): the ops ordered ahead of it whose writes its final execution read and the
 * execution that gave the tentative answer had not seen. Each cause names the op and one key it
 * wrote that this op read. The answer's client can then say "was X, now Y because a withdrawal
 * elsewhere came first".
 *
 * What an execution saw is kept as the writer of each key it read (`ShownReads`), for the
 * execution whose answer the client was last shown; the final execution's reads are compared
 * with it when the op is final. Pure functions of the entries (DESIGN.md, "the central rule").
 */

/** The most causes a view carries (the protocol's bound): the frame stays small whatever the op read. */
export const MAX_CAUSES = MAX_CORRECTION_CAUSES;
/** Longer keys are cut to this many characters in a cause. */
export const MAX_CAUSE_KEY = MAX_CAUSE_KEY_CHARS;

export function shownReads(reads: readonly ReadRecord[]): ShownReads {
  const shown = new Map<string, ShownRead>();
  for (const r of reads)
    if (r.kind === 'key')
      shown.set(r.key, { writer: r.version?.writer ?? null, value: r.version?.value });
    else for (const v of r.versions) shown.set(v.key, { writer: v.writer, value: v.value });
  return shown;
}

/**
 * The causes of a correction, from each version the final execution read, in the order it read
 * them, at most MAX_CAUSES:
 * - a version by another writer than the one the shown execution saw at that key: that writer's
 *   op, ordered ahead of this one unseen (at a key the shown execution did not read, only when no
 *   key both read explains the change);
 * - the same writer, with another value: that op was itself reordered, so its own causes (a
 *   client's earlier op corrected before this one, say), or the op itself if it has none known
 *   here.
 * `self`: the op's own entry (its own writes are no cause), or null for a read that is not ordered.
 * Empty when the difference left no version to blame (e.g. a key the shown execution saw that
 * is gone from the final state with no tombstone read).
 */
export function correctionCauses(
  self: Entry | null,
  shown: ShownReads,
  finalReads: readonly ReadRecord[],
): CorrectionCause[] {
  const causes: CorrectionCause[] = [];
  const named = new Set<string>();
  const add = (cause: CorrectionCause): void => {
    if (causes.length >= MAX_CAUSES || named.has(cause.id)) return;
    named.add(cause.id);
    causes.push(cause);
  };
  // First the keys both executions read: there a different version is what changed the answer.
  // A key only the final execution read follows from that change (the other branch of an `if`,
  // the next item of a queue): its writer is blamed only when nothing else is.
  let newKeys = false;
  const blame = (key: string, writer: Entry | null, value: JsonValue | undefined): void => {
    if (writer === null || writer === self) return;
    const before = shown.get(key);
    if (before === undefined && !newKeys) return;
    if (before !== undefined && before.writer === writer) {
      if (jsonEqual(before.value ?? null, value ?? null)) return;
      if (writer.causes !== undefined && writer.causes.length > 0) {
        for (const c of writer.causes) add(c);
        return;
      }
    }
    add({
      op: writer.req.op,
      id: formatOpId(writer.req.id),
      key: key.length > MAX_CAUSE_KEY ? `${key.slice(0, MAX_CAUSE_KEY - 1)}…` : key,
    });
  };
  const pass = (): void => {
    for (const r of finalReads)
      if (r.kind === 'key') blame(r.key, r.version?.writer ?? null, r.version?.value);
      else for (const v of r.versions) blame(v.key, v.writer, v.value);
  };
  pass();
  if (causes.length === 0) {
    newKeys = true;
    pass();
  }
  return causes;
}
