import type { App } from '../core/app.js';
import { opKey, type OpId } from '../core/op-id.js';
import { Replica } from '../core/replica.js';
import type { ExecutionResult, Output, Req } from '../core/types.js';
import { InlineExecutor } from '../exec/inline-executor.js';
import { checkRun } from './checkers.js';
import { ConditionalDeliveryQueue } from './conditional-delivery.js';
import { EventQueue } from './event-queue.js';
import { SimNetwork, type NetworkConfig } from './network.js';
import { Prng } from './prng.js';
import type { Invocation, RunRecord } from './run-record.js';
import { TestSequencer } from './test-sequencer.js';
import { generateOp, simApp, type WorkloadShape } from './workload.js';

export interface SimConfig {
  readonly seed: number;
  readonly replicas: number;
  /** Simulated time during which clients invoke ops. */
  readonly workloadMs?: number;
  /** Simulated time allowed, after the workload and all faults end, to reach quiescence. */
  readonly settleMs?: number;
}

/** The parameters a seed draws, printed when a run fails so the failure can be understood. */
export interface SimParameters {
  readonly network: NetworkConfig;
  readonly workload: WorkloadShape;
  readonly opsPerSecondPerReplica: number;
  readonly skewMs: number[];
  readonly noopIntervalMs: number;
  readonly partitions: boolean;
}

export interface SimResult {
  readonly seed: number;
  readonly replicas: number;
  readonly ok: boolean;
  readonly violations: string[];
  readonly parameters: SimParameters;
  readonly stats: SimStats;
}

export interface SimStats {
  ops: number;
  strongOps: number;
  committed: number;
  executions: number;
  rollbacks: number;
  reorderingCommits: number;
  executionRatio: number;
  speculated: number;
  speculatedCorrectly: number;
  messages: number;
  partitions: number;
  simulatedMs: number;
}

type Msg =
  | { readonly kind: 'req'; readonly req: Req }
  | { readonly kind: 'cabCast'; readonly id: OpId; readonly prevStrong: number }
  | { readonly kind: 'decided'; readonly seq: number; readonly id: OpId };

/** Simulated wall clock starts at a realistic epoch so HLC timestamps look like real ones. */
const EPOCH_MS = 1_700_000_000_000;
const TICK_MS = 5;

/**
 * One deterministic run: replicas driven by simulated time, a lossy reordering network, clock skew,
 * partitions that heal, and clients mixing weak and strong, read-only and updating, single- and
 * multi-key ops over a hot key set. Everything random comes from `seed`, so a run replays exactly.
 */
export function runSimulation(config: SimConfig, app: App = simApp): SimResult {
  const prng = new Prng(config.seed);
  const n = config.replicas;
  if (!Number.isInteger(n) || n < 1) throw new Error('replicas must be a positive integer');
  const workloadMs = config.workloadMs ?? 1500;
  const settleMs = config.settleMs ?? 20_000;
  const params = drawParameters(prng.fork(), n);
  const netPrng = prng.fork();
  const clientPrng = prng.fork();
  const faultPrng = prng.fork();

  // The sequencer runs on replica 0's host: a partition that cuts a replica off from replica 0
  // cuts it off from strong-op ordering too, as losing the Paxos majority would.
  const SEQUENCER = n;
  const hostOf = (node: number): number => (node === SEQUENCER ? 0 : node);

  const events = new EventQueue<() => void>();
  let now = 0;
  const network = new SimNetwork<Msg>(
    netPrng,
    params.network,
    (at, run) => events.push(at, run),
    (t) => receive(t.to, t.msg),
    hostOf,
  );
  const send = (from: number, to: number, msg: Msg): void => network.send(now, from, to, msg);

  const replicas = Array.from(
    { length: n },
    (_, id) => new Replica({ id, app, noopIntervalMs: params.noopIntervalMs, traceOrder: true }),
  );
  const executor = new InlineExecutor(app);
  const cab = Array.from({ length: n }, () => new ConditionalDeliveryQueue());
  const sequencer = new TestSequencer();
  const physical = (r: number): number => EPOCH_MS + now + params.skewMs[r]!;

  const record: RunRecord = {
    replicas: n,
    reqs: new Map(),
    commits: Array.from({ length: n }, () => []),
    invocations: [],
    finals: [],
  };
  const byTag = new Map<number, Invocation>();
  let nextTag = 1;
  let partitionsDone = 0;

  /** Applies a replica's outputs, running executions inline and CAB-delivering what became ready. */
  function process(r: number, first: Output[]): void {
    const replica = replicas[r]!;
    const queue = first;
    for (let i = 0; ; i++) {
      if (i === queue.length) {
        const id = cab[r]!.ready((x) => replica.checkDep(x));
        if (id === null) break;
        cab[r]!.advance();
        queue.push(...replica.deliverStrong(id));
        if (i === queue.length) continue;
      }
      const o = queue[i]!;
      switch (o.type) {
        case 'execute':
          queue.push(...replica.executed(executor.execute(o.job) as ExecutionResult));
          break;
        case 'rbCast':
          record.reqs.set(opKey(o.req.id), o.req);
          for (let to = 0; to < n; to++) if (to !== r) send(r, to, { kind: 'req', req: o.req });
          break;
        case 'cabCast':
          send(r, SEQUENCER, { kind: 'cabCast', id: o.id, prevStrong: o.prevStrong });
          break;
        case 'persist':
          if (o.record.kind === 'commit') record.commits[r]!.push([...o.record.ids]);
          break;
        case 'respond': {
          const inv = byTag.get(o.tag);
          if (inv === undefined) throw new Error(`response for unknown tag ${o.tag}`);
          inv.id ??= o.id;
          inv.responses.push(
            o.trace === undefined
              ? { at: now, level: o.level, outcome: o.outcome }
              : { at: now, level: o.level, outcome: o.outcome, trace: o.trace },
          );
          break;
        }
      }
    }
  }

  function receive(node: number, msg: Msg): void {
    if (node === SEQUENCER) {
      if (msg.kind !== 'cabCast') return;
      for (const d of sequencer.receive(msg.id, msg.prevStrong)) {
        for (let to = 0; to < n; to++)
          send(SEQUENCER, to, { kind: 'decided', seq: d.seq, id: d.id });
      }
      return;
    }
    if (msg.kind === 'req') process(node, replicas[node]!.deliverReq(msg.req));
    else if (msg.kind === 'decided') {
      cab[node]!.add(msg.seq, msg.id);
      process(node, []);
    }
  }

  // Ticks.
  for (let r = 0; r < n; r++) {
    const tick = (): void => {
      process(r, replicas[r]!.tick(physical(r)));
      events.push(now + TICK_MS, tick);
    };
    events.push(faultPrng.float(0, TICK_MS), tick);
  }

  // Clients: open-loop arrivals at each replica during the workload phase.
  const meanGap = 1000 / params.opsPerSecondPerReplica;
  for (let r = 0; r < n; r++) {
    const client = (): void => {
      if (now >= workloadMs) return;
      const g = generateOp(clientPrng, params.workload);
      const tag = nextTag++;
      const inv: Invocation = {
        replica: r,
        tag,
        op: g.op,
        args: g.args,
        strong: g.strong,
        invokedAt: now,
        id: null,
        responses: [],
      };
      record.invocations.push(inv);
      byTag.set(tag, inv);
      process(
        r,
        replicas[r]!.invoke(physical(r), { op: g.op, args: g.args, strong: g.strong, tag }),
      );
      events.push(now + clientPrng.exponential(meanGap), client);
    };
    events.push(clientPrng.exponential(meanGap), client);
  }

  // Partitions during the workload; all healed by its end.
  if (params.partitions && n > 1) {
    let at = faultPrng.float(50, workloadMs / 2);
    while (at < workloadMs) {
      const duration = faultPrng.float(50, 400);
      const groups = splitReplicas(faultPrng, n);
      const start = at;
      events.push(start, () => {
        network.partition(groups);
        partitionsDone++;
      });
      const end = Math.min(start + duration, workloadMs);
      events.push(end, () => network.heal());
      at = end + faultPrng.float(50, 500);
    }
  }

  // Run: the workload, then settle until quiescent.
  const deadline = workloadMs + settleMs;
  let quiescent = false;
  while (now <= deadline) {
    const at = events.peekTime();
    if (at === undefined) break;
    if (
      at > workloadMs &&
      now >= workloadMs &&
      Math.floor(at / 20) !== Math.floor(now / 20) &&
      isQuiescent()
    ) {
      quiescent = true;
      break;
    }
    const ev = events.pop()!;
    now = ev.at;
    ev.event();
  }
  if (!quiescent) quiescent = isQuiescent();

  function isQuiescent(): boolean {
    if (network.inFlight() > 0 || network.isPartitioned()) return false;
    for (const rep of replicas) {
      const s = rep.stats();
      if (s.tentative !== 0 || s.unvalidated !== 0) return false;
    }
    for (const inv of record.invocations) {
      const needs = inv.strong ? 'stable' : null;
      if (inv.responses.length === 0) return false;
      if (needs !== null && !inv.responses.some((x) => x.level === 'stable')) return false;
    }
    return true;
  }

  for (const rep of replicas) {
    const s = rep.stats();
    record.finals.push({
      digest: rep.stateDigest(),
      tentative: s.tentative,
      unvalidated: s.unvalidated,
    });
  }

  const violations = checkRun(record, app, { quiescent });
  if (!quiescent) {
    const waiting = record.invocations.filter(
      (inv) =>
        inv.responses.length === 0 ||
        (inv.strong && !inv.responses.some((x) => x.level === 'stable')),
    );
    violations.unshift(
      `liveness: not quiescent ${settleMs} ms after faults ended (${waiting.length} invocations still waiting; tentative sizes ${replicas.map((x) => x.stats().tentative).join('/')})`,
    );
  }

  const stats: SimStats = {
    ops: record.invocations.length,
    strongOps: record.invocations.filter((i) => i.strong).length,
    committed: record.commits[0]!.flat().length,
    executions: sum(replicas.map((x) => x.metrics.executions)),
    rollbacks: sum(replicas.map((x) => x.metrics.rollbacks)),
    reorderingCommits: sum(replicas.map((x) => x.metrics.reorderingCommits)),
    executionRatio:
      sum(replicas.map((x) => x.metrics.executionsOfFinalized)) /
      Math.max(1, sum(replicas.map((x) => x.metrics.finalized))),
    speculated: sum(replicas.map((x) => x.metrics.speculated)),
    speculatedCorrectly: sum(replicas.map((x) => x.metrics.speculatedCorrectly)),
    messages: network.sent,
    partitions: partitionsDone,
    simulatedMs: now,
  };
  return {
    seed: config.seed,
    replicas: n,
    ok: violations.length === 0,
    violations,
    parameters: params,
    stats,
  };
}

function drawParameters(prng: Prng, n: number): SimParameters {
  const maxDelay = prng.pick([1, 5, 20, 50]);
  return {
    network: {
      minDelayMs: prng.float(0.1, maxDelay / 4),
      maxDelayMs: maxDelay,
      lossRate: prng.pick([0, 0, 0.02, 0.1]),
      duplicateRate: prng.pick([0, 0.02, 0.1]),
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
    partitions: prng.chance(0.5),
  };
}

/** Two non-empty groups, at random. */
function splitReplicas(prng: Prng, n: number): number[][] {
  const ids = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const cut = prng.int(1, n - 1);
  return [ids.slice(0, cut), ids.slice(cut)];
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
