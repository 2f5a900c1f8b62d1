import { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type { AcceptorRecord, PaxosMessage } from '../cab/messages.js';
import { MultiPaxos, type PaxosOutput } from '../cab/multi-paxos.js';
import type { App } from '../core/app.js';
import { opKey, type OpId } from '../core/op-id.js';
import { Replica, type ReplicaOptions } from '../core/replica.js';
import type { DurableRecord, ExecutionResult, Output } from '../core/types.js';
import { Gossip, type GossipMessage, type GossipOutput } from '../gossip/index.js';
import { InlineExecutor } from '../exec/inline-executor.js';
import { checkRun } from './checkers.js';
import { SimDisk } from './disk.js';
import { EventQueue } from './event-queue.js';
import { SimNetwork, type NetworkConfig } from './network.js';
import { Prng } from './prng.js';
import type { Invocation, RecordedResponse, RunRecord } from './run-record.js';
import { generateOp, simApp, type WorkloadShape } from './workload.js';

export const FAULT_MODES = ['none', 'partition', 'crash', 'all'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface SimConfig {
  readonly seed: number;
  readonly replicas: number;
  /** none: a benign network (delays and reordering only); partition / crash: those faults too; all: everything. */
  readonly faults?: FaultMode;
  /** Simulated time during which clients invoke ops. */
  readonly workloadMs?: number;
  /** Simulated time allowed, after the workload and all faults end, to reach quiescence. */
  readonly settleMs?: number;
  /**
   * A deliberately broken driver that sends messages (Paxos promises and accepts among them) before
   * the writes they depend on are durable. Exists so a test can show the checkers catch it.
   */
  readonly unsafeSendBeforeDurable?: boolean;
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
  crashes: number;
  elections: number;
  simulatedMs: number;
}

type Msg =
  | { readonly kind: 'gossip'; readonly msg: GossipMessage }
  | { readonly kind: 'paxos'; readonly msg: PaxosMessage };

type DiskRecord =
  | { readonly layer: 'core'; readonly record: DurableRecord }
  | { readonly layer: 'cab'; readonly record: AcceptorRecord };

/** One replica process: the Creek core, its gossip, its Multi-Paxos CAB, its delivery queue and its disk. */
interface Host {
  readonly id: number;
  up: boolean;
  incarnation: number;
  replica: Replica;
  gossip: Gossip;
  /** Since when the head of the delivery stream has been blocked on checkDep (for `want`). */
  blockedSince: number | null;
  paxos: MultiPaxos;
  delivery: ConditionalDelivery;
  readonly disk: SimDisk<DiskRecord>;
}

/** Simulated wall clock starts at a realistic epoch so HLC timestamps look like real ones. */
const EPOCH_MS = 1_700_000_000_000;
const TICK_MS = 5;

/**
 * One deterministic run: replicas driven by simulated time, a lossy reordering network, clock skew,
 * partitions (symmetric, leader-isolating and one-way) and crashes that heal, simulated disks, and
 * clients mixing weak and strong, read-only and updating, single- and multi-key ops over a hot key
 * set. Everything random comes from `seed`, so a run replays exactly.
 */
export function runSimulation(config: SimConfig, app: App = simApp): SimResult {
  const prng = new Prng(config.seed);
  const n = config.replicas;
  if (!Number.isInteger(n) || n < 1) throw new Error('replicas must be a positive integer');
  const faults = config.faults ?? 'all';
  const workloadMs = config.workloadMs ?? 1500;
  const settleMs = config.settleMs ?? 20_000;
  const params = drawParameters(prng.fork(), n, faults);
  const netPrng = prng.fork();
  const clientPrng = prng.fork();
  const faultPrng = prng.fork();
  const diskPrng = prng.fork();
  const ids = Array.from({ length: n }, (_, i) => i);

  const events = new EventQueue<() => void>();
  let now = 0;
  const hosts: Host[] = [];
  const network = new SimNetwork<Msg>(
    netPrng,
    params.network,
    (at, run) => events.push(at, run),
    (t) => receive(hosts[t.to]!, t.from, t.msg),
    (node) => node,
    (node) => hosts[node]!.up,
  );
  const executor = new InlineExecutor(app);
  const physical = (r: number): number => EPOCH_MS + now + params.skewMs[r]!;
  const replicaOptions = (id: number): ReplicaOptions => ({
    id,
    app,
    noopIntervalMs: params.noopIntervalMs,
    traceOrder: true,
  });
  const paxosOptions = (id: number) => ({
    self: id,
    replicas: ids,
    isOrdered: (x: OpId) => hosts[id]!.delivery.hasOrdered(x),
  });

  const record: RunRecord = {
    replicas: n,
    reqs: new Map(),
    commits: ids.map(() => []),
    crashedCommits: [],
    invocations: [],
    splits: [],
    finals: [],
  };
  const byTag = new Map<number, Invocation>();
  let nextTag = 1;
  let partitions = 0;
  let crashes = 0;

  for (const id of ids) {
    hosts.push({
      id,
      up: true,
      incarnation: 0,
      replica: new Replica(replicaOptions(id)),
      gossip: new Gossip({ self: id, peers: ids }),
      blockedSince: null,
      paxos: new MultiPaxos(paxosOptions(id)),
      delivery: new ConditionalDelivery(),
      disk: new SimDisk(),
    });
  }

  /** Runs `fn` once the host's earlier writes are durable, unless it crashes first. */
  function afterDurable(h: Host, fn: () => void): void {
    const at = h.disk.durableAt();
    if (at <= now || config.unsafeSendBeforeDurable) {
      fn();
      return;
    }
    const incarnation = h.incarnation;
    events.push(at, () => {
      if (h.up && h.incarnation === incarnation) fn();
    });
  }

  function persist(h: Host, rec: DiskRecord): void {
    h.disk.write(now, diskPrng.float(0, params.diskLatencyMs), rec);
    if (rec.layer === 'core' && rec.record.kind === 'commit')
      record.commits[h.id]!.push([...rec.record.ids]);
  }

  function transmit(h: Host, to: number, msg: Msg, reliable: boolean): void {
    afterDurable(h, () => network.send(now, h.id, to, msg, reliable));
  }

  /** Applies a replica's outputs: runs executions inline, CAB-casts, delivers what became ready. */
  function applyCore(h: Host, first: Output[]): void {
    const queue = first;
    for (let i = 0; ; i++) {
      if (i === queue.length) {
        const id = h.delivery.next((x) => h.replica.checkDep(x));
        if (id === null) break;
        h.delivery.markDelivered(id);
        h.paxos.delivered(id);
        queue.push(...h.replica.deliverStrong(id));
        if (i === queue.length) continue;
      }
      const o = queue[i]!;
      switch (o.type) {
        case 'execute':
          queue.push(...h.replica.executed(executor.execute(o.job) as ExecutionResult));
          break;
        case 'rbCast':
          record.reqs.set(opKey(o.req.id), o.req);
          applyGossip(h, h.gossip.cast(o.req));
          break;
        case 'cabCast':
          applyPaxos(h, h.paxos.cast({ id: o.id, prevStrong: o.prevStrong }));
          break;
        case 'persist':
          persist(h, { layer: 'core', record: o.record });
          break;
        case 'respond': {
          const inv = byTag.get(o.tag);
          if (inv === undefined) throw new Error(`response for unknown tag ${o.tag}`);
          const resp: RecordedResponse =
            o.trace === undefined
              ? { at: 0, level: o.level, outcome: o.outcome }
              : { at: 0, level: o.level, outcome: o.outcome, trace: o.trace };
          afterDurable(h, () => {
            inv.id ??= o.id;
            inv.responses.push({ ...resp, at: now });
          });
          break;
        }
      }
    }
  }

  function applyPaxos(h: Host, outputs: PaxosOutput[]): void {
    let decided = false;
    for (const o of outputs) {
      if (o.type === 'send') transmit(h, o.to, { kind: 'paxos', msg: o.msg }, false);
      else if (o.type === 'persist') persist(h, { layer: 'cab', record: o.record });
      else if (o.type === 'skip') {
        h.delivery.skipTo(o.below);
        decided = true;
      } else {
        h.delivery.decide(o.instance, o.value);
        decided = true;
      }
    }
    if (decided) applyCore(h, []);
  }

  function applyGossip(h: Host, outputs: GossipOutput[]): void {
    for (const o of outputs) {
      if (o.type === 'send') transmit(h, o.to, { kind: 'gossip', msg: o.msg }, false);
      else applyCore(h, h.replica.deliverReq(o.req));
    }
  }

  /** If the head of the delivery stream has waited a while for its dependencies, pull them. */
  function pullMissing(h: Host): void {
    let blocked: OpId | null = null;
    h.delivery.next((id) => {
      blocked = id;
      return false;
    });
    if (blocked === null || h.replica.checkDep(blocked)) {
      h.blockedSince = null;
      return;
    }
    h.blockedSince ??= now;
    if (now - h.blockedSince < 20) return;
    const missing = h.replica.missingDeps(blocked);
    if (missing.length > 0) applyGossip(h, h.gossip.want(missing));
  }

  function receive(h: Host, from: number, msg: Msg): void {
    if (!h.up) return;
    if (msg.kind === 'gossip') applyGossip(h, h.gossip.receive(from, msg.msg));
    else applyPaxos(h, h.paxos.receive(from, msg.msg));
  }

  function crash(h: Host): void {
    if (!h.up) return;
    crashes++;
    record.crashedCommits.push({ replica: h.id, list: record.commits[h.id]!.flat() });
    h.up = false;
    h.incarnation++;
    h.disk.crash(now);
    // Ops whose Req write the crash lost were never sent anywhere: they do not exist (and their
    // ids will be reused).
    const survived = new Set(
      h.disk
        .read()
        .flatMap((r) =>
          r.layer === 'core' && r.record.kind === 'req' ? [opKey(r.record.req.id)] : [],
        ),
    );
    for (const [key, req] of record.reqs)
      if (req.id.replica === h.id && !survived.has(key)) record.reqs.delete(key);
    // What survives is what the disk holds.
    record.commits[h.id] = h.disk
      .read()
      .flatMap((r) =>
        r.layer === 'core' && r.record.kind === 'commit' ? [[...r.record.ids]] : [],
      );
    for (const inv of record.invocations) {
      if (inv.replica === h.id && !complete(inv)) inv.abandoned = true;
    }
  }

  function restart(h: Host): void {
    if (h.up) return;
    const records = h.disk.read();
    const core = records.flatMap((r) => (r.layer === 'core' ? [r.record] : []));
    const cab = records.flatMap((r) => (r.layer === 'cab' ? [r.record] : []));
    const delivered: OpId[] = core.flatMap((r) =>
      r.kind === 'commit' ? [r.ids[r.ids.length - 1]!] : [],
    );
    const truncatedBelow = cab.reduce(
      (m, r) => (r.kind === 'truncate' ? Math.max(m, r.below) : m),
      0,
    );
    const recovered = Replica.recover(replicaOptions(h.id), core, physical(h.id));
    h.replica = recovered.replica;
    h.gossip = new Gossip({ self: h.id, peers: ids });
    h.gossip.recover(core.flatMap((r) => (r.kind === 'req' ? [r.req] : [])));
    h.blockedSince = null;
    h.paxos = new MultiPaxos(paxosOptions(h.id), { records: cab });
    h.delivery = new ConditionalDelivery(truncatedBelow, delivered);
    h.up = true;
    applyCore(h, recovered.outputs);
  }

  // Ticks.
  for (const h of hosts) {
    const tick = (): void => {
      if (h.up) {
        applyCore(h, h.replica.tick(physical(h.id)));
        applyGossip(h, h.gossip.tick(now));
        // Heartbeats leave only after earlier writes (the commit records) are durable.
        h.paxos.setDeliveredBelow(h.delivery.deliveredBelow());
        applyPaxos(h, h.paxos.tick(now));
        pullMissing(h);
      }
      events.push(now + TICK_MS, tick);
    };
    events.push(faultPrng.float(0, TICK_MS), tick);
  }

  // Clients: open-loop arrivals at each replica during the workload phase.
  const meanGap = 1000 / params.opsPerSecondPerReplica;
  for (const h of hosts) {
    const client = (): void => {
      if (now >= workloadMs) return;
      events.push(now + clientPrng.exponential(meanGap), client);
      if (!h.up) return; // nobody can reach a replica that is down
      const g = generateOp(clientPrng, params.workload);
      const tag = nextTag++;
      const inv: Invocation = {
        replica: h.id,
        tag,
        op: g.op,
        args: g.args,
        strong: g.strong,
        invokedAt: now,
        id: null,
        responses: [],
        abandoned: false,
      };
      record.invocations.push(inv);
      byTag.set(tag, inv);
      applyCore(
        h,
        h.replica.invoke(physical(h.id), { op: g.op, args: g.args, strong: g.strong, tag }),
      );
    };
    events.push(clientPrng.exponential(meanGap), client);
  }

  scheduleFaults(faultPrng, faults, n, workloadMs, {
    at: (t, fn) => events.push(t, fn),
    partition: (groups) => {
      partitions++;
      network.partition(groups);
      record.splits.push({ start: now, end: Number.POSITIVE_INFINITY, groups });
    },
    isolateLeader: () => {
      const leader = hosts.find((x) => x.up && x.paxos.status().role === 'leader');
      if (leader === undefined) return;
      partitions++;
      const groups = [[leader.id], ids.filter((i) => i !== leader.id)];
      network.partition(groups);
      record.splits.push({ start: now, end: Number.POSITIVE_INFINITY, groups });
    },
    oneWay: (from, to) => {
      partitions++;
      network.block(from, to);
    },
    heal: () => {
      network.heal();
      for (const s of record.splits) if (s.end === Number.POSITIVE_INFINITY) s.end = now;
    },
    crash: (which) => {
      const target =
        which === 'leader'
          ? hosts.find((x) => x.up && x.paxos.status().role === 'leader')
          : hosts[which];
      if (target !== undefined) crash(target);
    },
    restartAll: () => hosts.forEach(restart),
  });

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

  function complete(inv: Invocation): boolean {
    if (inv.responses.length === 0) return false;
    return !inv.strong || inv.responses.some((x) => x.level === 'stable');
  }

  function isQuiescent(): boolean {
    if (network.inFlight() > 0 || network.isPartitioned()) return false;
    const committed = hosts[0]!.replica.stats().committed;
    for (const h of hosts) {
      if (!h.up) return false;
      const s = h.replica.stats();
      if (s.tentative !== 0 || s.unvalidated !== 0 || s.committed !== committed) return false;
      if (h.paxos.status().pendingCasts !== 0 || h.delivery.backlog() !== 0) return false;
    }
    return record.invocations.every((inv) => inv.abandoned || complete(inv));
  }

  for (const h of hosts) {
    const s = h.replica.stats();
    record.finals.push({
      digest: h.replica.stateDigest(),
      tentative: s.tentative,
      unvalidated: s.unvalidated,
    });
  }

  const violations = checkRun(record, app, { quiescent });
  if (!quiescent) {
    const waiting = record.invocations.filter((inv) => !inv.abandoned && !complete(inv));
    violations.unshift(
      `liveness: not quiescent ${settleMs} ms after faults ended (${waiting.length} invocations waiting; tentative ${hosts.map((x) => x.replica.stats().tentative).join('/')}; paxos ${JSON.stringify(hosts.map((x) => x.paxos.status()))})`,
    );
  }

  const sum = (f: (h: Host) => number): number => hosts.reduce((s, h) => s + f(h), 0);
  const stats: SimStats = {
    ops: record.invocations.length,
    strongOps: record.invocations.filter((i) => i.strong).length,
    committed: record.commits[0]!.flat().length,
    executions: sum((h) => h.replica.metrics.executions),
    rollbacks: sum((h) => h.replica.metrics.rollbacks),
    reorderingCommits: sum((h) => h.replica.metrics.reorderingCommits),
    executionRatio:
      sum((h) => h.replica.metrics.executionsOfFinalized) /
      Math.max(
        1,
        sum((h) => h.replica.metrics.finalized),
      ),
    speculated: sum((h) => h.replica.metrics.speculated),
    speculatedCorrectly: sum((h) => h.replica.metrics.speculatedCorrectly),
    messages: network.sent,
    partitions,
    crashes,
    elections: sum((h) => h.paxos.counters.elections),
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

interface FaultActions {
  at(t: number, fn: () => void): void;
  partition(groups: number[][]): void;
  isolateLeader(): void;
  oneWay(from: number[], to: number[]): void;
  heal(): void;
  crash(which: number | 'leader'): void;
  restartAll(): void;
}

/** Faults during the workload, one at a time; all healed and restarted by its end. */
function scheduleFaults(
  prng: Prng,
  mode: FaultMode,
  n: number,
  workloadMs: number,
  act: FaultActions,
): void {
  if (mode === 'none' || n < 2) return;
  const kinds: string[] = [];
  if (mode === 'partition' || mode === 'all') kinds.push('split', 'isolate-leader', 'one-way');
  if (mode === 'crash' || mode === 'all') kinds.push('crash', 'crash-leader');
  let t = prng.float(50, workloadMs / 3);
  while (t < workloadMs - 50) {
    const kind = prng.pick(kinds);
    const end = Math.min(t + prng.float(40, 400), workloadMs);
    const ids = Array.from({ length: n }, (_, i) => i);
    switch (kind) {
      case 'split':
        act.at(t, () => act.partition(splitReplicas(prng, n)));
        act.at(end, () => act.heal());
        break;
      case 'isolate-leader':
        act.at(t, () => act.isolateLeader());
        act.at(end, () => act.heal());
        break;
      case 'one-way': {
        const from = prng.pick(ids);
        const to = ids.filter((i) => i !== from && prng.chance(0.5));
        act.at(t, () => act.oneWay([from], to));
        act.at(end, () => act.heal());
        break;
      }
      case 'crash':
      case 'crash-leader': {
        const victims =
          kind === 'crash-leader' ? ['leader' as const] : ids.filter(() => prng.chance(1 / n));
        act.at(t, () => victims.forEach((v) => act.crash(v)));
        act.at(end, () => act.restartAll());
        break;
      }
    }
    t = end + prng.float(30, 300);
  }
  act.at(workloadMs, () => {
    act.heal();
    act.restartAll();
  });
}

function drawParameters(prng: Prng, n: number, faults: FaultMode): SimParameters {
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
