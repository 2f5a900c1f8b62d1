import { canonicalJson, type App, type JsonValue, type User } from '@creek/app';
import type { OpId } from '@creek/replica/core/op-id.js';
import type { Model } from './linearizability.js';
import { ReferenceInterpreter } from './reference-interpreter.js';

/** The state of the keys of one history: a map no step changes (each makes a new one). */
export type AppState = ReadonlyMap<string, JsonValue>;

/** What an op reads besides its arguments (HistoryOp.ctx): its Req's timestamp, id and caller. */
export interface OpContext {
  readonly ts: number;
  readonly id: OpId | null;
  readonly user?: User;
}

/**
 * The sequential specification of an app, for the linearizability checker: the reference
 * interpreter's serial execution (sim/reference-interpreter.ts) of each op on the keys of one
 * history. Ops run outside client sessions: the checker hands it each op once, however many
 * copies of it replicas took.
 */
export function appModel(app: App): Model<AppState> {
  return {
    init: new Map(),
    step(state, op, args, ctx) {
      const c = (ctx ?? null) as OpContext | null;
      const data = new Map(state);
      const outcome = new ReferenceInterpreter(app, data).apply({
        op,
        args,
        ts: c?.ts ?? 0,
        id: c?.id ?? null,
        ...(c?.user === undefined ? {} : { user: c.user }),
      });
      return { outcome, next: data };
    },
    key: (state) => canonicalJson(Object.fromEntries(state)),
  };
}
