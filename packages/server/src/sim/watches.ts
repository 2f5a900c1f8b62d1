import { canonicalJson, type App, type JsonValue } from '@creek/app';
import { opKey } from '@creek/replica/core/op-id.js';
import type { Outcome } from '@creek/replica/core/types.js';
import { LiveQueries } from '@creek/replica/host/live-queries.js';
import { takesOps, type SimProcess, type StepHost } from './process.js';
import { ReferenceInterpreter } from './reference-interpreter.js';
import { committedList, liveReplicas, type RunRecord } from './run-record.js';
import type { RunState } from './run-state.js';
import { LINEARIZABLE_QUEUE } from './workload.js';

/** Tags of live queries' reads start here, apart from the workload's. */
export const WATCH_TAG_BASE = 1_000_000_000;
/**
 * The live queries each replica runs (SimConfig.liveQueries), and each client session runs in an
 * 'sdk' run: a key each, and a queue's size.
 */
export const SIM_WATCHES: readonly (readonly [string, string, JsonValue])[] = [
  ['k0', 'kv.get', { key: 'k/0' }],
  ['k1', 'kv.get', { key: 'k/1' }],
  ['q', 'queue.size', { queue: LINEARIZABLE_QUEUE }],
];

/**
 * The clients' live queries (SimConfig.liveQueries), driven as the runtime drives the node layer's
 * LiveQueries, and their checks: every stable push against the committed state it names, as it
 * comes, and at the end of a quiescent run every watch's last results against the final state.
 */
export class SimWatches {
  /** What each replica's live queries last pushed, by watch id and level (SimConfig.liveQueries). */
  private readonly watched: Map<string, { tentative?: Outcome; stable?: Outcome }>[] = [];
  private nextWatchTag = WATCH_TAG_BASE;
  /**
   * A stable result must be the read on the committed state it names: the first `position` ops of
   * the replica's committed order, replayed by the reference interpreter (per replica, forward as
   * positions grow, anew when one goes back, as after a restart).
   */
  private readonly replays: { interp: ReferenceInterpreter; applied: number }[] = [];
  /** Stable pushes that did not read the committed state they named. */
  readonly violations: string[] = [];

  constructor(
    private readonly run: RunState,
    private readonly step: StepHost,
  ) {}

  /** These live queries run (SimConfig.liveQueries; an 'sdk' run's are the sessions'). */
  private get on(): boolean {
    return this.run.config.liveQueries === true && this.run.config.clients !== 'sdk';
  }

  /**
   * Live queries at the end of a quiescent run: each replica's last tentative result of every
   * watch equals the read on its final state, and its last stable result the read on its final
   * committed state (what a client watching would show). The two states differ where ops stay
   * tentative for good (FinalReplicaState.stranded): the final state holds them (checkConvergence),
   * the committed state never will, so a stable result must not see them.
   */
  checkFinal(): string[] {
    const { app, procs, record } = this.run;
    const out: string[] = [];
    for (const r of liveReplicas(record)) {
      if (procs[r]!.live === null) continue; // never watched since it took ops
      const states = finalStates(record, app, r);
      for (const [watchId, op, args] of SIM_WATCHES) {
        const last = this.watched[r]?.get(watchId);
        for (const level of ['tentative', 'stable'] as const) {
          const expected = readOnFinal(states[level], op, args);
          const got = last?.[level];
          if (got === undefined || !got.ok || canonicalJson(got.value) !== canonicalJson(expected))
            out.push(
              `live query: replica ${r}'s ${op} ${JSON.stringify(args)} last pushed ${got === undefined ? 'nothing' : JSON.stringify(got)} at ${level}, but reads ${JSON.stringify(expected)} on the final ${level === 'stable' ? 'committed ' : ''}state`,
            );
        }
      }
    }
    return out;
  }

  private checkStablePush(p: SimProcess, watchId: string, got: Outcome, position: number): void {
    const [, op, args] = SIM_WATCHES.find(([w]) => w === watchId)!;
    this.checkStable(p, op, args, got, position);
  }

  /**
   * A stable result `p` pushed for the live query `op(args)`, read at committed position
   * `position`, against the reference interpreter's read there (SimWatches.violations).
   */
  checkStable(p: SimProcess, op: string, args: JsonValue, got: Outcome, position: number): void {
    const record = this.run.record;
    const order = record.commits[p.id]!.flat();
    if (order.length < position) return; // its commit records are not all written yet
    let r = this.replays[p.id];
    if (r === undefined || r.applied > position) {
      r = { interp: new ReferenceInterpreter(this.run.app), applied: 0 };
      this.replays[p.id] = r;
    }
    for (; r.applied < position; r.applied++) {
      const id = order[r.applied]!;
      const req = record.reqs.get(opKey(id));
      if (req === undefined) return; // its Req went with a lost disk: nothing to replay it from
      r.interp.apply({
        op: req.op,
        args: req.args,
        ts: req.ts,
        id: req.id,
        ...(req.session === undefined ? {} : { session: req.session }),
      });
    }
    const expected = r.interp.apply({ op, args, ts: 0, id: null }, true);
    if (
      canonicalJson(expected as unknown as JsonValue) !== canonicalJson(got as unknown as JsonValue)
    )
      this.violations.push(
        `live query: at ${this.run.now.toFixed(1)} ms replica ${p.id} pushed ${op} ${JSON.stringify(args)} = ${JSON.stringify(got)} as stable at position ${position}, but the committed state there reads ${JSON.stringify(expected)}`,
      );
  }

  /** No live query runs at `p` until it takes ops again (and the checks skip it meanwhile). */
  forget(p: SimProcess): void {
    p.live = null;
    this.watched[p.id]?.clear();
  }

  /** Starts the live queries on the process's current host (at start, and after each restart). */
  watchOn(p: SimProcess): void {
    if (!this.on) return;
    const host = p.host;
    const last = (this.watched[p.id] ??= new Map());
    last.clear();
    p.live = new LiveQueries<number>(
      (request) => {
        if (p.up && p.host === host && host.halted === null)
          this.step(p, { kind: 'invoke', now: this.run.physical(p.id), request });
      },
      (_conn, frame) => {
        if (frame.t !== 'watched') return;
        const seen = last.get(frame.watchId) ?? {};
        seen[frame.level] = frame.outcome as Outcome;
        last.set(frame.watchId, seen);
        if (frame.level === 'stable' && frame.position !== undefined)
          this.checkStablePush(p, frame.watchId, frame.outcome as Outcome, frame.position);
      },
      () => this.nextWatchTag++,
    );
    p.host.takeChangedKeys(); // from now on the replica records them
    for (const [watchId, op, args] of SIM_WATCHES) p.live.watch(0, { watchId, op, args });
  }

  /**
   * After each event: a replica added during the run, or rebuilt from a checkpoint, is watched
   * once it takes ops; every watched replica re-runs the watches whose keys changed.
   */
  afterEvent(): void {
    if (!this.on) return;
    for (const p of this.run.procs) {
      if (p.up && p.live === null && takesOps(p)) this.watchOn(p);
      if (p.up && p.live !== null && p.host.halted === null)
        p.live.changed(p.host.takeChangedKeys());
    }
  }
}

/**
 * What a live query must end on at replica `r`, by level: its final state for the tentative
 * result, its final committed state for the stable one. The two differ where ops stay tentative
 * for good (FinalReplicaState.stranded): the final state holds them (checkConvergence), the
 * committed state never will, so a stable result must not see them.
 */
export function finalStates(
  record: RunRecord,
  app: App,
  r: number,
): Record<'tentative' | 'stable', Record<string, JsonValue>> {
  const committed = new ReferenceInterpreter(app);
  for (const id of committedList(record, r)) {
    const req = record.reqs.get(opKey(id));
    // checkConvergence reports a committed op without its Req; this replays what it has.
    if (req !== undefined) committed.apply(req);
  }
  return {
    tentative: JSON.parse(record.finals[r]!.digest) as Record<string, JsonValue>,
    stable: JSON.parse(committed.digest()) as Record<string, JsonValue>,
  };
}

/** What the live query `op(args)` of SIM_WATCHES reads on a state of a replica (its JSON). */
export function readOnFinal(
  state: Record<string, JsonValue>,
  op: string,
  args: JsonValue,
): JsonValue {
  const num = (k: string): number => (typeof state[k] === 'number' ? (state[k] as number) : 0);
  const a = args as { key?: string; queue?: string };
  return op === 'kv.get'
    ? (state[a.key!] ?? null)
    : num(`~queue/${a.queue!}/tail`) - num(`~queue/${a.queue!}/head`);
}
