import type { App } from '@creek/app';
import { appModel } from './app-model.js';
import type { Planted } from './checked-ops.js';
import { checkLinearizable, type HistoryOp } from './linearizability.js';
import { objectHistories } from './object-histories.js';
import type { RunRecord } from './run-record.js';

/**
 * Configurations the searches of one run may explore, all objects together, once the committed
 * order failed to explain an object (below). A correct run never needs one; a broken one can
 * spend minutes on a large object before its search gives up, and its violation is as well shown
 * by the limit.
 */
const SEARCH_BUDGET = 100_000;

/**
 * Strong ops are linearizable (Creek §4.3, Theorem 1): the stable answers come from a sequential
 * execution of all ops in one total order that keeps the real-time order of strong ops. Checked
 * over every op of the run, object by object (sim/object-histories.ts): each object's history
 * (invocation times, stable answer times and values from the clients' side, the weak ops that
 * changed it) must have a legal sequential order under the app's own semantics (the reference
 * interpreter, sim/app-model.ts).
 *
 * Each object is first tried in the committed order alone (every op with a place there kept in
 * it): that is the order the proof of Theorem 1 gives, so it explains every correct run at once.
 * Only where it does not is the history searched for any order that does (Wing & Gong), within
 * SEARCH_BUDGET: a violation is reported only when none is found. Smaller objects first, so that a
 * violation is named in the smallest history that shows it.
 */
export function checkLinearizability(
  record: RunRecord,
  app: App,
  planted: Planted | null = null,
): string[] {
  const out: string[] = [];
  const model = appModel(app);
  const objects = objectHistories(record, app, planted).sort((a, b) => a.ops.length - b.ops.length);
  const explored = { states: 0 };
  for (const object of objects) {
    const inOrder = checkLinearizable(inCommittedOrder(object.ops), model);
    if (inOrder.ok) continue;
    const name = `(linearizability) ${object.name}, ${object.ops.length} ops`;
    const left = SEARCH_BUDGET - explored.states;
    if (left <= 0) {
      out.push(
        `${name}: the committed order does not explain it (${inOrder.reason}), and the run's search budget is spent`,
      );
      continue;
    }
    const result = checkLinearizable(object.ops, model, { maxStates: left, explored });
    if (!result.ok) out.push(`${name}: ${result.reason}`);
  }
  return out;
}

/** The ops with a place in the committed order (HistoryOp.order) kept in it. */
function inCommittedOrder(ops: readonly HistoryOp[]): HistoryOp[] {
  return ops.map((h) => (h.order === undefined ? h : { ...h, sequence: h.order }));
}
