import type { ReplicaHost } from '@creek/replica/host/replica-host.js';
import type { SimCluster } from './cluster.js';
import type { FaultMode, StorageFault } from './config.js';
import type { SimProcess } from './process.js';
import type { Prng } from './prng.js';
import type { RunState } from './run-state.js';

/** What a scheduled fault does to the cluster (SimFaults), at the times scheduleFaults draws. */
export interface FaultActions {
  at(t: number, fn: () => void): void;
  partition(groups: number[][]): void;
  isolateLeader(): void;
  oneWay(from: number[], to: number[]): void;
  /** Cuts every link into one replica (the leader at that time, or a given one): it hears nobody. */
  deafen(which: number | 'leader'): void;
  heal(): void;
  crash(which: number | 'leader'): void;
  /** Crashes the replica for good, right after its next strong invocation. */
  lose(which: number | 'leader'): void;
  /**
   * Crashes the replica and loses its disk: it restarts empty (restartAll), and may crash again
   * soon after, while it still learns from its peers.
   */
  wipe(
    which: number | 'leader',
    crashAfterRestart: { readonly afterMs: number; readonly downMs: number } | null,
  ): void;
  /**
   * Storage faults: the replica crashes and its disk is damaged (SimCluster.damage); it restarts
   * with the others (restartAll).
   */
  damage(which: number | 'leader', fault: 'torn' | 'corrupt' | 'stale'): void;
  /** Storage fault 'power-loss': the replica's machine loses power (SimCluster.powerLoss). */
  powerLoss(which: number | 'leader'): void;
  restartAll(): void;
  /** Faults 'lag': the replica was cut off until now; its catch-up is measured from here. */
  lagging(replica: number): void;
}

/**
 * Faults during the workload, one at a time; all healed and restarted by its end, but for replicas
 * lost for good ('lose': as many per run as a majority survives, so two of five). A 'wipe' loses a
 * replica's disk; it counts as all of those losses, since the replica may halt (lost state). So
 * does a storage fault that damages a disk (`storage`: torn, corrupt, stale), which costs its
 * replica the disk once it finds the damage.
 */
export function scheduleFaults(
  prng: Prng,
  mode: FaultMode,
  n: number,
  workloadMs: number,
  noLosses: boolean,
  act: FaultActions,
  storage: readonly StorageFault[] = [],
): void {
  if (mode === 'none' || n < 2) return;
  if (mode === 'lag' || mode === 'lag-cut') {
    // Cut off for most of the workload; healed, it starts to catch up and holds speculation
    // (measured from then: SimStats.catchUp). lag-cut: cut off again 20 ms into that for 200 ms,
    // when the hold must end (checkMinorityPartitions).
    const who = prng.int(0, n - 1);
    const others = Array.from({ length: n }, (_, i) => i).filter((i) => i !== who);
    // lag-cut leaves room for the second cut before the workload ends.
    const healAt = workloadMs * (mode === 'lag' ? 0.95 : 0.8);
    act.at(workloadMs * 0.05, () => act.partition([[who], others]));
    act.at(healAt, () => {
      act.heal();
      act.lagging(who);
    });
    if (mode === 'lag-cut') {
      act.at(healAt + 20, () => act.partition([[who], others]));
      act.at(Math.min(healAt + 220, workloadMs), () => act.heal());
    }
    return;
  }
  const kinds: string[] = [];
  if (mode === 'partition' || mode === 'all')
    kinds.push('split', 'isolate-leader', 'one-way', 'deaf');
  if (mode === 'crash' || mode === 'all') kinds.push('crash', 'crash-leader');
  // Replicas die for good, as many as a majority survives (a second loss of five is what leaves a
  // value that a new leader must re-propose with its Reqs nowhere alive).
  const mayLose = noLosses ? 0 : Math.floor((n - 1) / 2);
  if ((mode === 'crash' || mode === 'all') && mayLose > 0) kinds.push('lose', 'wipe');
  // Added only when asked for, so that a run without them draws what it always did.
  if (mode === 'crash' || mode === 'all') {
    if (storage.includes('power-loss')) kinds.push('power-loss');
    if (mayLose > 0) kinds.push(...storage.filter((f) => f !== 'power-loss'));
  }
  let lost = 0;
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
      case 'deaf': {
        // One replica hears nobody while everyone hears it (Multi-Paxos: it must neither depose
        // the leader again and again nor, leading, hold the others back).
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.deafen(who));
        act.at(end, () => act.heal());
        break;
      }
      case 'lose': {
        if (lost >= mayLose) break;
        lost++;
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.lose(who));
        break;
      }
      case 'wipe': {
        // It rejoins only once it has heard every peer, and it halts if it finds it lost state
        // that mattered: it takes the whole budget of replicas lost, so that no replica is lost for
        // good while it waits for them all.
        if (lost > 0) break;
        lost = mayLose;
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        const again = prng.chance(0.5)
          ? { afterMs: prng.float(0, 40), downMs: prng.float(20, 200) }
          : null;
        act.at(t, () => act.wipe(who, again));
        act.at(end, () => act.restartAll());
        break;
      }
      case 'torn':
      case 'corrupt':
      case 'stale': {
        // Found when the replica restarts, the damage costs it its disk: as a 'wipe', it takes
        // the whole budget of replicas lost.
        if (lost > 0) break;
        lost = mayLose;
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.damage(who, kind));
        act.at(end, () => act.restartAll());
        break;
      }
      case 'power-loss': {
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.powerLoss(who));
        act.at(end, () => act.restartAll());
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

/** Faults 'lag': the lagging replica's counts when it was healed (its host is not restarted). */
export interface CatchUpStart {
  readonly replica: number;
  readonly host: ReplicaHost;
  readonly committed: number;
  readonly executions: number;
  readonly lackChecks: number;
  readonly messages: number;
}

/**
 * The faults of a run as they strike the simulated cluster: partitions and cut links on its
 * network, crashes, losses and lost disks of its processes (scheduleFaults draws when and which).
 */
export class SimFaults implements FaultActions {
  /** Faults 'lag': the lagging replica's counts when it was healed, or null. */
  catchUpFrom: CatchUpStart | null = null;

  constructor(
    private readonly run: RunState,
    private readonly cluster: SimCluster,
  ) {}

  /** The replica a fault aimed at 'leader' hits: one that is up and leads now, if any. */
  private pick(which: number | 'leader'): SimProcess | undefined {
    const procs = this.run.procs;
    return which === 'leader'
      ? procs.find((x) => x.up && x.host.status().role === 'leader')
      : procs[which];
  }

  /** Every process that is not lost (a partition places each of them in a group). */
  private placed(groups: readonly (readonly number[])[]): number[][] {
    const out = groups.map((g) => [...g]);
    for (const p of this.run.procs)
      if (!out.some((g) => g.includes(p.id)))
        out[this.run.prngs.reconfig.int(0, out.length - 1)]!.push(p.id);
    return out;
  }

  private allIds(): number[] {
    return this.run.procs.map((p) => p.id);
  }

  at(t: number, fn: () => void): void {
    this.run.events.push(t, fn);
  }

  partition(drawn: number[][]): void {
    const run = this.run;
    run.counts.partitions++;
    const groups = this.placed(drawn);
    this.cluster.network.partition(groups);
    run.trace(`partition ${groups.map((g) => `[${g.join(',')}]`).join(' ')}`);
    run.record.splits.push({ start: run.now, end: Number.POSITIVE_INFINITY, groups });
  }

  isolateLeader(): void {
    const run = this.run;
    const leader = this.pick('leader');
    if (leader === undefined) return;
    run.counts.partitions++;
    const groups = [[leader.id], this.allIds().filter((i) => i !== leader.id)];
    this.cluster.network.partition(groups);
    run.trace(`the leader, replica ${leader.id}, is cut off`);
    run.record.splits.push({ start: run.now, end: Number.POSITIVE_INFINITY, groups });
  }

  oneWay(from: number[], to: number[]): void {
    this.run.counts.partitions++;
    this.cluster.network.block(from, to);
    this.run.trace(`links cut one way: [${from.join(',')}] to [${to.join(',')}]`);
  }

  deafen(which: number | 'leader'): void {
    const target = this.pick(which);
    if (target === undefined) return;
    this.run.counts.partitions++;
    this.cluster.network.block(
      this.allIds().filter((i) => i !== target.id),
      [target.id],
    );
    this.run.trace(`replica ${target.id} hears nobody`);
  }

  heal(): void {
    const run = this.run;
    this.cluster.network.heal();
    run.trace('the network heals');
    for (const s of run.record.splits) if (s.end === Number.POSITIVE_INFINITY) s.end = run.now;
  }

  crash(which: number | 'leader'): void {
    const target = this.pick(which);
    if (target !== undefined) this.cluster.crash(target);
  }

  lose(which: number | 'leader'): void {
    const target = this.pick(which);
    if (target !== undefined) target.loseAfterStrong = true;
  }

  wipe(
    which: number | 'leader',
    crashAfterRestart: { readonly afterMs: number; readonly downMs: number } | null,
  ): void {
    const target = this.pick(which);
    if (target === undefined) return;
    this.cluster.wipe(target);
    target.crashAfterRestart = crashAfterRestart;
  }

  damage(which: number | 'leader', fault: 'torn' | 'corrupt' | 'stale'): void {
    const target = this.pick(which);
    if (target !== undefined) this.cluster.damage(target, fault);
  }

  powerLoss(which: number | 'leader'): void {
    const target = this.pick(which);
    if (target !== undefined) this.cluster.powerLoss(target);
  }

  restartAll(): void {
    // A 'torn' fault lapses if its replica wrote nothing since: it may strike only while it lasts.
    for (const p of this.run.procs) p.tearNextWrite = false;
    this.run.procs.forEach((p) => this.cluster.restart(p));
  }

  lagging(replica: number): void {
    const host = this.run.procs[replica]!.host;
    // The work the lagging replica does from here: measured inside it (SimStats.catchUp).
    const h = host.inspect();
    this.catchUpFrom = {
      replica,
      host,
      committed: h.replica.stats().committed,
      executions: h.replica.metrics.executions,
      lackChecks: h.paxos.status().lackChecks,
      messages: this.cluster.received[replica] ?? 0,
    };
  }
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
