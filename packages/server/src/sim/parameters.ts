import type { FaultMode, SimConfig } from './config.js';
import type { NetworkConfig } from './network.js';
import { Prng } from './prng.js';
import { drawReconfiguration, type ReconfigScenario } from './reconfiguration.js';
import type { SessionParameters } from './session-parameters.js';
import { longestOneWayMs, type SimWan } from './wan.js';
import type { WorkloadShape } from './workload.js';

/**
 * The preferred leader a run's replicas are given (SimParameters.preferredLeader; drawn and checked
 * in sim/leader-placement.ts).
 */
export interface PreferredLeaderSetting {
  /** The member the replicas prefer; replicas added during the run are given it too. */
  readonly member: number;
  /**
   * Null: every replica is given `member`. Otherwise each genesis replica's own setting, by id:
   * operators that gave them different values, which must not make leadership go round.
   */
  readonly perReplica: readonly number[] | null;
}

/** The parameters a seed draws, printed when a run fails so the failure can be understood. */
export interface SimParameters {
  readonly faults: FaultMode;
  readonly network: NetworkConfig;
  readonly workload: WorkloadShape;
  readonly opsPerSecondPerReplica: number;
  readonly skewMs: number[];
  readonly noopIntervalMs: number;
  readonly diskLatencyMs: number;
  /** How long another origin's strong op waits before a replica casts it on its behalf. */
  readonly adoptAfterMs: number;
  /** Finalized ops between two checkpoints, after which a replica's disk drops older records. */
  readonly checkpointEvery: number;
  /** The operator's membership changes in this run (sim/reconfiguration.ts), or null. */
  readonly reconfiguration: ReconfigScenario | null;
  /**
   * Concurrent execution (§4.4): how many executions a replica runs at once, and the longest an
   * execution takes. Each runs on the snapshot of its start and finishes after a seeded delay, so
   * executions complete out of order and conflicts, discarded results and cascades happen.
   */
  readonly execution: {
    readonly slots: number;
    readonly maxMs: number;
    /**
     * First executions read a mirror of the store fed with its changes (exec/mirror-store.ts),
     * as the worker-thread executor's workers do, instead of the store itself; re-executions read
     * the store.
     */
    readonly mirror: boolean;
    /**
     * False in one run of eight: no replica speculates (ReplicaOptions.speculative), the SMR
     * baseline of `bench:tpcc`; every op executes once committed and every response is stable.
     */
    readonly speculative: boolean;
    /**
     * Null, or a replica runs executions only this long after an input (ReplicaOptions.
     * deferExecution), once for every input in between: as the runtime does once per event-loop
     * turn, so reorders land in batches.
     */
    readonly deferTurnMs: number | null;
  };
  /** Strong reads by quorum (PaxosOptions.quorumReads) rather than by the leader's read index. */
  readonly quorumReads: boolean;
  /**
   * The preferred leader the replicas are given (cab/leader-transfer.ts), or null: drawn from a
   * stream of its own on a share of seeds with SimConfig.leaderPlacement (sim/leader-placement.ts),
   * or set by SimConfig.preferredLeader.
   */
  readonly preferredLeader?: PreferredLeaderSetting | null;
  /** How the client sessions behave (SimConfig.clients 'sdk' only; drawn from their own stream). */
  readonly sessions?: SessionParameters;
}

/**
 * The random streams of a run, by name. Those below were forked from the seed's own in a fixed
 * order (drawRun), each added one after the others so that it left their draws, and so every seed,
 * as they were; they stay so that a seed replays the run it always did. A stream added from now on
 * is a named one (`named`): its draws depend on the seed and its name only, so adding it, or
 * drawing more from it, moves no other stream's draws.
 */
export interface SimPrngs {
  /** The network's delays, losses and duplicates (SimNetwork). */
  readonly net: Prng;
  /** The clients' arrivals and ops. */
  readonly client: Prng;
  /** The fault schedule, the genesis replicas' first ticks, and when a 'lose' fault strikes. */
  readonly fault: Prng;
  /** How long each disk write takes to become durable. */
  readonly disk: Prng;
  /** Which clients resubmit, when and where, and the exactly-once probes. */
  readonly retry: Prng;
  /** How long each execution takes. */
  readonly exec: Prng;
  /** Which clients abandon an op rather than resubmit it, and where. */
  readonly abandon: Prng;
  /**
   * The operator's membership changes and the replicas it adds (their skew and first tick), and
   * the group a partition places each replica added in.
   */
  readonly reconfig: Prng;
  /**
   * The run's stream named `name` (Prng.named), the same generator each time it is asked for: a
   * part of the simulator that draws something new takes a name of its own.
   */
  named(name: string): Prng;
}

/** Names the forked streams hold: a named stream may not take one of them. */
const FORKED = ['net', 'client', 'fault', 'disk', 'retry', 'exec', 'abandon', 'reconfig'];

/** The run's named streams (SimPrngs.named), each made once. */
function namedStreams(seed: number): (name: string) => Prng {
  const made = new Map<string, Prng>();
  return (name) => {
    if (FORKED.includes(name))
      throw new Error(`the stream ${name} is a forked one: name a new stream after what it draws`);
    let prng = made.get(name);
    if (prng === undefined) {
      prng = Prng.named(seed, name);
      made.set(name, prng);
    }
    return prng;
  };
}

/**
 * What the seed draws before the run starts: the run's parameters, its membership scenario among
 * them, and its random streams. The order of the forks and draws here is part of every seed.
 */
export function drawRun(
  config: SimConfig,
  n: number,
  faults: FaultMode,
  workloadMs: number,
  /** The run's WAN profile (sim/wan.ts: drawn from a stream of its own), or null. */
  wan: SimWan | null = null,
): { readonly params: SimParameters; readonly prngs: SimPrngs } {
  const prng = new Prng(config.seed);
  const drawn = onWan(drawParameters(prng.fork(), n, faults), wan, n);
  const netPrng = prng.fork();
  const clientPrng = prng.fork();
  const faultPrng = prng.fork();
  const diskPrng = prng.fork();
  // Drawn last, so that adding sessions left every other stream of a seed as it was.
  const retryPrng = prng.fork();
  // Drawn after every other stream, so that checkpoints left each seed's other draws as they were.
  const params: Omit<SimParameters, 'quorumReads'> & { reconfiguration: ReconfigScenario | null } =
    {
      ...drawn,
      ...(config.diskLatencyMs === undefined ? {} : { diskLatencyMs: config.diskLatencyMs }),
      checkpointEvery: prng.fork().pick(CHECKPOINT_EVERY),
      execution: smrIfAsked(config, drawExecution(prng.fork())),
      reconfiguration: null,
    };
  // Drawn last too: how long each execution takes.
  const execPrng = prng.fork();
  /** Which clients abandon an op rather than resubmit it: forked last, so no other draw moves. */
  const abandonPrng = prng.fork();
  /** The operator's membership changes: forked last, so runs without one keep every draw. */
  const reconfigPrng = prng.fork();
  const scenario =
    faults === 'all' || faults === 'reconfig'
      ? drawReconfiguration(reconfigPrng, n, workloadMs, faults === 'reconfig')
      : null;
  params.reconfiguration = scenario;
  const named = namedStreams(config.seed);
  // A named stream: drawing it moves no other draw of the seed.
  // Off unless asked for: drawing it would change the runs of the suite's pinned seeds. The
  // soak's rotation runs seeds with it (soak.ts).
  const quorumReads = config.unsafeQuorumReadSingleAnswer === true || config.quorumReads === true;
  return {
    params: { ...params, quorumReads },
    prngs: {
      net: netPrng,
      client: clientPrng,
      fault: faultPrng,
      disk: diskPrng,
      retry: retryPrng,
      exec: execPrng,
      abandon: abandonPrng,
      reconfig: reconfigPrng,
      named,
    },
  };
}

/** The network, workload, clocks, disks and timers of a run, as the seed draws them. */
function drawParameters(
  prng: Prng,
  n: number,
  faults: FaultMode,
): Omit<SimParameters, 'checkpointEvery' | 'execution' | 'reconfiguration' | 'quorumReads'> {
  const maxDelay = prng.pick([1, 5, 20, 50]);
  const benign = faults === 'none';
  return {
    faults,
    network: {
      minDelayMs: prng.float(0.1, maxDelay / 4),
      maxDelayMs: maxDelay,
      lossRate: benign ? 0 : prng.pick([0, 0, 0.02, 0.1]),
      duplicateRate: benign ? 0 : prng.pick([0, 0.02, 0.1]),
      retransmitMs: prng.pick([10, 30, 100]),
    },
    workload: {
      keys: prng.pick([2, 4, 8, 16]),
      strongRatio: prng.pick([0.05, 0.15, 0.3, 0.6]),
      readRatio: prng.pick([0, 0.2, 0.4]),
    },
    opsPerSecondPerReplica: prng.pick([20, 60, 150]),
    skewMs: Array.from({ length: n }, () =>
      prng.float(-prng.pick([0, 2, 20]), prng.pick([0, 2, 20])),
    ),
    noopIntervalMs: prng.pick([20, 60, 150]),
    diskLatencyMs: prng.pick([0.1, 1, 5]),
    // Short ones make replicas cast others' strong ops during partitions (duplicate decisions).
    adoptAfterMs: prng.pick([40, 200, 1000]),
  };
}

/**
 * A run on a WAN profile: its links' delays are the profile's (SimNetwork), and a lost message is
 * sent again no sooner than a round trip of its longest link, as TCP's retransmission timeout
 * would (it is at least the round trip). Loss and duplication stay as drawn.
 */
function onWan<P extends { readonly network: NetworkConfig }>(
  drawn: P,
  wan: SimWan | null,
  n: number,
): P {
  if (wan === null) return drawn;
  const rtt = Math.ceil(2 * longestOneWayMs(wan, n));
  return {
    ...drawn,
    network: { ...drawn.network, wan, retransmitMs: Math.max(drawn.network.retransmitMs, rtt) },
  };
}

const CHECKPOINT_EVERY = [3, 10, 30, 100] as const;

/**
 * SimConfig.smr turns speculation off whatever the seed drew (its other draws stay as they are);
 * SimConfig.unsafeTrustMirrorReads puts every seed's executions on mirrors.
 */
function smrIfAsked(config: SimConfig, e: SimParameters['execution']): SimParameters['execution'] {
  const mirrored = config.unsafeTrustMirrorReads === true ? { ...e, mirror: true } : e;
  return config.smr === true ? { ...mirrored, speculative: false } : mirrored;
}

/**
 * Execution slots per replica and the longest execution (ms): always concurrent (§4.4). Every
 * replica executes every op, up to twice over under contention, one at a time at the frontier: at
 * the highest load drawn (5 replicas × 150 ops/s) executions must average well under 0.7 ms, or
 * the replica falls behind for good and a minority partition's ops wait past its end (seed 396
 * with 5 replicas did, at up to 2 ms). A longest execution of at most 0.5 ms keeps it ahead.
 */
function drawExecution(prng: Prng): SimParameters['execution'] {
  return {
    slots: prng.pick([2, 3, 4, 8]),
    maxMs: prng.pick([0.05, 0.2, 0.5]),
    mirror: prng.pick([false, true]),
    speculative: !prng.chance(1 / 8),
    deferTurnMs: prng.pick([null, 0, 0.1, 1]),
  };
}
