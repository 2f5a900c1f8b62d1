import {
  PLANTED_BUGS,
  runSimulation,
  type FaultMode,
  type FrameOpLife,
  type PlantedBug,
  type SimFrame,
  type SimResult,
} from '@creek/server/sim';
import type { Sample } from './samples.js';
import { simSamples } from './sim-samples.js';
import type { OpTimeline } from './workload.js';

/** What the page asks the simulator for: a seed names a whole run. */
export interface RunRequest {
  readonly seed: number;
  readonly replicas: number;
  readonly faults: FaultMode;
  /** A bug planted on purpose, to watch the checkers catch it; null: the real replica. */
  readonly bug: PlantedBug | null;
}

/** A finished run and its frames, to step through. */
export interface Replay {
  readonly request: RunRequest;
  readonly result: SimResult;
  readonly frames: readonly SimFrame[];
  /** The charts' points, each with the frame it was taken at. */
  readonly samples: readonly { readonly frame: number; readonly sample: Sample }[];
}

/** Simulated ms between two frames: fine enough to see a partition come and go. */
export const FRAME_MS = 10;

/**
 * Runs the seed here, in the page (the simulator is pure: the same seed gives the same run as
 * `npm run sim`), recording a frame every FRAME_MS.
 */
export function replay(request: RunRequest): Replay {
  const frames: SimFrame[] = [];
  let ops: readonly FrameOpLife[] = [];
  const result = runSimulation({
    seed: request.seed,
    replicas: request.replicas,
    faults: request.faults,
    ...(request.bug === null ? {} : PLANTED_BUGS[request.bug].config),
    frames: { everyMs: FRAME_MS, onFrame: (f) => frames.push(f), onOps: (o) => (ops = o) },
  });
  return { request, result, frames, samples: simSamples(frames, ops) };
}

/** A frame's recent ops as the timeline draws them, newest last; times from the invocation. */
export function simTimelines(f: SimFrame): OpTimeline[] {
  return f.recentOps.map((o) => ({
    label: o.id ?? `replica ${o.replica}, no id yet`,
    replica: o.replica,
    op: o.op,
    level: o.strong ? 'strong' : 'weak',
    tentativeMs: o.tentativeAt === null ? null : o.tentativeAt - o.invokedAt,
    stableMs: o.stableAt === null ? null : o.stableAt - o.invokedAt,
    failed: o.failure ?? (o.failedAt === null ? null : 'failed'),
  }));
}

/**
 * The op ids a checker's violation names (`r1#120`), so the page can mark them wherever they
 * appear.
 */
export function opIdsIn(violations: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const v of violations) for (const m of v.matchAll(/\br\d+#\d+\b/g)) ids.add(m[0]);
  return ids;
}
