import type { App } from '@creek/app';
import type { SimClientSide } from './client-side.js';
import { complete, SimClients } from './clients.js';
import { SimCluster, TICK_MS } from './cluster.js';
import type { SimConfig } from './config.js';
import { scheduleFaults, SimFaults } from './faults.js';
import { frame, opLife } from './frames.js';
import { drawPreferredLeader, LeadershipTrack, PLACEMENT_GRACE_MS } from './leader-placement.js';
import { SimHostOptions } from './host-options.js';
import { SimOperator } from './operator.js';
import {
  PLANTED_GRACE_MS,
  plantedApp,
  schedulePlanted,
  stuckByDivergence,
} from './nondeterminism.js';
import { overdrawApp } from './invariant-reports.js';
import { drawRun, type PreferredLeaderSetting } from './parameters.js';
import { closable, stranded, type StepHost } from './process.js';
import { simResult, type SimResult } from './result.js';
import { RunState } from './run-state.js';
import { SimSdkClients } from './sdk-clients.js';
import { drawSessionParameters } from './session-parameters.js';
import { statusLine } from './trace.js';
import type { RunRecord } from './run-record.js';
import { WAN_WORKLOAD_MS, wanOf } from './wan.js';
import { SimWatches } from './watches.js';
import { simApp } from './workload.js';

export {
  CLIENT_MODES,
  FAULT_MODES,
  type ClientMode,
  STORAGE_FAULTS,
  type FaultMode,
  type SimConfig,
  type StorageFault,
} from './config.js';
export {
  FRAME_LIST,
  FRAME_MESSAGES,
  FRAME_OPS,
  type FrameMessage,
  type FrameOp,
  type FrameOpLife,
  type SimFrame,
  type SimReplicaFrame,
} from './frames.js';
export type { SimParameters } from './parameters.js';
export type { SimResult, SimStats } from './result.js';
export type { SessionStats } from './client-side.js';
export type { SessionParameters } from './session-parameters.js';

/**
 * One deterministic run: replicas driven by simulated time, a lossy reordering network, clock skew,
 * partitions (symmetric, leader-isolating, one-way, and a replica that hears nobody) and crashes
 * that heal, simulated disks, and clients mixing weak and strong, read-only and updating, single-
 * and multi-key ops over a hot key set. Everything random comes from `seed`, so a run replays
 * exactly.
 *
 * The parts of a run share its state (RunState): the cluster (sim/cluster.ts), its clients
 * (sim/clients.ts) and their live queries (sim/watches.ts), the operator's membership changes
 * (sim/operator.ts) and the faults (sim/faults.ts). This wires them, starts them in the order
 * every seed depends on, and runs the events until the run is quiescent or out of time.
 */
export function runSimulation(config: SimConfig, app: App = simApp): SimResult {
  // With the planted op, the app that has it (each process loads its own: host-options.ts).
  // With the planted overdraft, the app whose transfer overdraws.
  const runApp =
    config.nondeterministic === true
      ? plantedApp()
      : config.unsafeOverdraw === true
        ? overdrawApp()
        : app;
  if (
    (config.invariants === true || config.unsafeOverdraw === true) &&
    Object.keys(runApp.invariants).length === 0
  )
    throw new Error(
      'SimConfig.invariants: the app has no invariants to check (AppOptions.invariants)',
    );
  const n = config.replicas;
  if (!Number.isInteger(n) || n < 1) throw new Error('replicas must be a positive integer');
  const faults = config.faults ?? 'all';
  // On a WAN profile (one seed in five), longer: the first leader takes an election timeout.
  const wan = wanOf(config.seed, config.network ?? 'uniform');
  const workloadMs = config.workloadMs ?? (wan === null ? 1500 : WAN_WORKLOAD_MS);
  const settleMs = config.settleMs ?? 20_000;
  const frames = config.frames;
  if (frames !== undefined && !(frames.everyMs > 0))
    throw new Error(`frames.everyMs must be a positive number of ms, not ${frames.everyMs}`);
  const drawn = drawRun(config, n, faults, workloadMs, wan);
  const prngs = drawn.prngs;
  // Client sessions draw how they behave from a stream of their own: no other draw moves. With
  // the planted op, no membership change: a member added while the replicas disagree has nobody
  // to learn from until an operator chooses a state, and removing a replica of the majority can
  // leave none (docs/operations.md: an operator replaces the minority).
  const withSessions =
    config.clients === 'sdk'
      ? {
          ...drawn.params,
          sessions: drawSessionParameters(prngs.named('sessions'), faults === 'none'),
        }
      : drawn.params;
  // Leader placement, from a stream of its own: no other draw moves. Not with the planted op,
  // whose replicas stop taking part once they diverge.
  const preferredLeader: PreferredLeaderSetting | null =
    config.preferredLeader !== undefined
      ? { member: config.preferredLeader, perReplica: null }
      : config.nondeterministic === true || config.leaderPlacement !== true
        ? null
        : drawPreferredLeader(prngs.named('preferred-leader'), n);
  const withLeader = { ...withSessions, preferredLeader };
  const params =
    config.nondeterministic === true ? { ...withLeader, reconfiguration: null } : withLeader;
  const run = new RunState(config, runApp, params, prngs, workloadMs, settleMs);
  const { events, procs, record } = run;

  // The parts built before the cluster give replicas their inputs through it, once the run starts.
  const step: StepHost = (p, input) => cluster.step(p, input);
  const watches = new SimWatches(run, step);
  const clients: SimClientSide =
    config.clients === 'sdk'
      ? new SimSdkClients(
          run,
          watches,
          step,
          (p) => cluster.loseForGood(p),
          (from, to) => cluster.network.isBlocked(from, to),
        )
      : new SimClients(run, (p) => cluster.loseForGood(p), step);
  const cluster = new SimCluster(run, new SimHostOptions(run, step), clients, watches);
  const operator = new SimOperator(run, cluster, clients);
  const faultActions = new SimFaults(run, cluster);

  for (const id of run.ids) cluster.spawn(id, null);
  // Ticks.
  for (const p of procs) cluster.startTicks(p, prngs.fault.float(0, TICK_MS));
  // Clients: open-loop arrivals at each replica during the workload phase.
  for (const h of procs) clients.start(h, prngs.client.exponential(clients.meanGap));
  // The planted op is invoked by the model's clients (a run of SDK sessions has none).
  if (config.nondeterministic === true && !(clients instanceof SimClients))
    throw new Error('SimConfig.nondeterministic runs with the model of clients, not clients: sdk');
  const planted =
    config.nondeterministic === true && clients instanceof SimClients
      ? schedulePlanted(run, (h, g, session) => clients.invokeAt(h, g, session))
      : null;
  const scenario = params.reconfiguration;
  if (scenario !== null) events.push(scenario.at, () => operator.runScenario(scenario));
  // A run that changes its membership loses no replica for good but to that change: the operator
  // replaces the dead, and a new member waits for every member it has not heard.
  scheduleFaults(
    prngs.fault,
    faults === 'reconfig' ? 'all' : faults,
    n,
    workloadMs,
    scenario !== null,
    faultActions,
    config.storageFaults,
  );

  const leadership =
    preferredLeader === null
      ? null
      : new LeadershipTrack(run, preferredLeader, () => calmNow(run, cluster, operator));
  const isQuiescent = (): boolean =>
    (planted === null || planted.pending === 0) && quiescentNow(run, cluster, operator, clients);
  const frameNow = () => frame(run.now, procs, record, cluster.network.flying());
  // Run: the workload, then settle until quiescent. A run whose clients are still being answered
  // at the deadline goes on while they are (sessions that queued ops through a long outage drain
  // them a few at a time, at WAN round trips): liveness asks for progress, not for speed. A run
  // whose callers stop being answered for a quarter of the settle time ends as before, and none
  // runs past DRAIN_LIMIT settle times.
  let deadline = workloadMs + settleMs;
  const drain = { at: Number.NEGATIVE_INFINITY, answered: -1, lastAt: workloadMs };
  let quiescent = false;
  // With the planted op, the replicas go on comparing their states a while after they are
  // quiescent, so that the checkers judge what they made of the last ops too.
  // With a preferred leader, they go on a while too, so that the leadership checker judges a
  // calm stretch long enough for the preferred member to lead (sim/leader-placement.ts).
  const grace =
    config.nondeterministic === true
      ? PLANTED_GRACE_MS
      : leadership !== null
        ? PLACEMENT_GRACE_MS
        : 0;
  let quiescentAt: number | null = null;
  while (run.now <= deadline) {
    const at = events.peekTime();
    if (at === undefined) break;
    if (at > deadline - settleMs && at - drain.at >= DRAIN_SAMPLE_MS) {
      drain.at = at;
      const answered = answeredCallers(record);
      if (answered > drain.answered) {
        if (drain.answered >= 0) drain.lastAt = at;
        drain.answered = answered;
      }
      deadline = Math.max(
        workloadMs + settleMs,
        Math.min(drain.lastAt + settleMs / 4, workloadMs + settleMs * DRAIN_LIMIT),
      );
      run.settledWithin = deadline - workloadMs;
      if (at > deadline) break;
    }
    if (
      at > workloadMs &&
      run.now >= workloadMs &&
      Math.floor(at / 20) !== Math.floor(run.now / 20) &&
      isQuiescent()
    ) {
      quiescentAt ??= run.now;
      if (run.now - quiescentAt >= grace) {
        quiescent = true;
        break;
      }
    } else if (grace > 0 && Math.floor(at / 20) !== Math.floor(run.now / 20)) quiescentAt = null;
    const ev = events.pop()!;
    const before = run.now;
    run.now = ev.at;
    if (config.trace !== undefined) {
      const every = Math.max(1, config.trace.everyMs);
      if (Math.floor(run.now / every) !== Math.floor(before / every))
        config.trace.line(statusLine(run.now, procs));
    }
    ev.event();
    watches.afterEvent();
    clients.afterEvent();
    leadership?.observe();
    cluster.scheduleDeferredRuns();
    cluster.trackHolds();
    run.leadership.afterEvent(faultInForce(run, cluster, operator));
    if (
      frames !== undefined &&
      Math.floor(run.now / frames.everyMs) !== Math.floor(before / frames.everyMs)
    )
      frames.onFrame(frameNow());
  }
  if (frames !== undefined) {
    frames.onFrame(frameNow());
    frames.onOps?.(record.invocations.map(opLife));
  }
  if (!quiescent) quiescent = isQuiescent();
  if (config.nondeterministic === true)
    for (const p of procs)
      if (!record.lost.includes(p.id) && stuckByDivergence(p, procs)) {
        run.trace(`replica ${p.id} cannot learn: every member it could learn from diverged`);
        record.lost.push(p.id);
      }

  return simResult(run, {
    cluster,
    watches,
    clients,
    catchUpFrom: faultActions.catchUpFrom,
    quiescent,
    leadership,
  });
}

/** How often a run past its settle time looks whether its clients are still being answered. */
const DRAIN_SAMPLE_MS = 1_000;
/**
 * No run settles for longer than this many settle times, however steadily it drains. Sixteen:
 * with shared contexts (two strong ops more per op in the context) on the 'global' profile, a
 * session with a window of two that queued 900 ops in the workload drains them at about five a
 * second from a replica far from the leader, answered every second throughout: about 170 s
 * (seed 1125 with 5 replicas), past eight.
 */
const DRAIN_LIMIT = 16;

/**
 * How many callers have their answer: the model's invocations complete, and the SDK sessions'
 * callers with a final view, an error or a time-out. It only grows; a run that drains raises it.
 */
function answeredCallers(record: RunRecord): number {
  let n = 0;
  for (const inv of record.invocations) if (complete(inv)) n++;
  for (const r of record.clientOps ?? [])
    if (r.error !== null || r.timedOutAt !== null || r.views.some((v) => v.final)) n++;
  return n;
}

/** A link is cut, a replica not lost for good is down, or a membership change is under way. */
function faultInForce(run: RunState, cluster: SimCluster, operator: SimOperator): boolean {
  return (
    cluster.network.isPartitioned() ||
    operator.changesPending > 0 ||
    run.procs.some((p) => !p.up && !run.record.lost.includes(p.id))
  );
}

/**
 * No fault now: the network is whole, no membership change is under way, and every member of the
 * configuration last in force is up, but those lost for good (a fault that never ends: the
 * others go on without them).
 */
function calmNow(run: RunState, cluster: SimCluster, operator: SimOperator): boolean {
  const { record, procs } = run;
  if (cluster.network.isPartitioned() || operator.changesPending > 0) return false;
  const members =
    [...record.memberships].reverse().find((m) => m.members !== null)?.members ?? run.ids;
  return members.every((id) => record.lost.includes(id) || procs[id]?.up === true);
}

/**
 * Nothing is left to happen: the network is whole, every replica not lost is up, settled and at
 * the same committed position, no membership change is under way, and every client has its answer
 * (or has left).
 */
function quiescentNow(
  run: RunState,
  cluster: SimCluster,
  operator: SimOperator,
  clients: SimClientSide,
): boolean {
  const { procs, record } = run;
  if (cluster.network.isPartitioned()) return false;
  const live = procs.filter(
    (p) =>
      !record.lost.includes(p.id) &&
      !(run.config.nondeterministic === true && stuckByDivergence(p, procs)),
  );
  // Every replica lost for good (a planted bug can halt them all): nothing is left to happen.
  if (live.length === 0) return true;
  const committed = live[0]!.host.status().committed;
  const dead = closable(procs, record, run.config.closesOff === true);
  for (const p of live) {
    if (
      !p.up ||
      // A new or wiped member that never finishes learning from its peers fails the run too,
      // unless a member it must hear (to rejoin) died for good: removing that member is what
      // would let it go on (README, "Adding, removing and replacing replicas").
      (p.host.learningFromPeers &&
        !p.host.status().membership.members.some((m) => record.lost.includes(m))) ||
      // Reads of live queries still on their way (the run ending would lose their answers).
      (p.live !== null && p.live.reading > 0) ||
      !p.host.settled(stranded(p, record, dead).length) ||
      p.host.status().committed !== committed
    )
      return false;
  }
  if (operator.changesPending > 0) return false;
  return record.invocations.every((inv) => inv.abandoned || complete(inv)) && clients.settled();
}
