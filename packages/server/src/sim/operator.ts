import {
  CONFIG_DELAY,
  type ConfigEntry,
  type MembershipChange,
  type ReconfigOutcome,
} from '@creek/replica/cab/configuration.js';
import type { SimClientSide } from './client-side.js';
import { TICK_MS, type SimCluster } from './cluster.js';
import type { SimProcess } from './process.js';
import type { ReconfigScenario } from './reconfiguration.js';
import type { RunState } from './run-state.js';

/**
 * The operator of the simulated cluster, as far as its membership goes: the run's reconfiguration
 * scenario (sim/reconfiguration.ts), carried out as `creek member` does, each change asked at a
 * live replica and asked again until it is decided; and the replicas it adds, started empty.
 */
export class SimOperator {
  /** Membership changes an operator asked for that are not decided yet (the run is not quiet). */
  changesPending = 0;
  private nonces = 0;
  /** The next replica id: ids are never reused (cab/configuration.ts). */
  private nextId: number;

  constructor(
    private readonly run: RunState,
    private readonly cluster: SimCluster,
    private readonly clients: SimClientSide,
  ) {
    this.nextId = run.config.replicas;
  }

  /** Processes that run and have not been lost or removed. */
  private alive(): SimProcess[] {
    return this.run.procs.filter((p) => p.up && !this.run.record.lost.includes(p.id));
  }

  /**
   * What became of a change at a replica: its outcome if it remembers one, or, for a change it
   * applied before a restart, the configuration the change made.
   */
  private outcomeAt(p: SimProcess, nonce: string): ReconfigOutcome | undefined {
    const o = p.host.reconfigOutcome(nonce);
    if (o !== undefined) return o;
    const entry = p.host.membership().entries.find((e) => e.nonce === nonce);
    return entry === undefined
      ? undefined
      : { applied: true, entry, decidedAt: entry.from - CONFIG_DELAY };
  }

  /**
   * As `creek member` does: asks a live replica for the change, and again every 100 ms (another
   * replica, if that one is gone) until some replica has it decided; then `then(outcome)`. The
   * membership timeline (RunRecord.memberships) marks the change in progress until every live
   * member has it in force.
   */
  private ask(change: MembershipChange, then: (o: ReconfigOutcome) => void): void {
    const run = this.run;
    const request = { change, nonce: `op-${++this.nonces}` };
    run.trace(
      `the operator asks: ${change.op === 'add' ? `add replica ${change.member.id}` : `remove replica ${change.id}`}`,
    );
    this.changesPending++;
    run.record.memberships.push({ at: run.now, members: null });
    const attempt = (): void => {
      for (const p of this.alive()) {
        const o = this.outcomeAt(p, request.nonce);
        if (o === undefined) continue;
        run.counts.reconfigurations++;
        run.trace(
          `replica ${p.id} tells the operator: decided at instance ${o.decidedAt}, ${o.applied ? `members from instance ${o.entry.from}: ${o.entry.members.map((m) => m.id).join(', ')}` : `not applied (${o.reason})`}`,
        );
        if (o.applied) {
          // What the change made, for the partition checker: replicas apply it one by one.
          run.record.memberships.push({
            at: run.now,
            members: null,
            decided: o.entry.members.map((m) => m.id),
          });
          this.inForceEverywhere(o.entry);
        } else {
          this.changesPending--;
          run.record.memberships.push({ at: run.now, members: this.settledMembers() });
        }
        then(o);
        return;
      }
      const askable = this.alive().filter((p) => p.host.halted === null && !p.host.rebuilding);
      if (askable.length > 0) {
        const p = run.prngs.reconfig.pick(askable);
        this.cluster.step(p, { kind: 'reconfigure', now: run.physical(p.id), request });
      }
      run.events.push(run.now + 100, attempt);
    };
    attempt();
  }

  /**
   * The members once a change is done: null (still changing) while another change is in progress,
   * which the partition checker reads as "no configuration fixed" (seed 11044 with 3 replicas: an
   * addition done while a removal was under way marked the old members fixed, and a split during
   * the removal was judged against them).
   */
  private settledMembers(): readonly number[] | null {
    return this.changesPending > 0 ? null : this.currentMembers();
  }

  /** The members of the configuration in force at the live replicas, when they agree. */
  private currentMembers(): readonly number[] | null {
    const views = this.alive()
      .filter((p) => p.host.halted === null && !p.host.rebuilding)
      .map((p) => p.host.status().membership.members.join());
    return views.length > 0 && views.every((v) => v === views[0])
      ? views[0]!.split(',').map(Number)
      : null;
  }

  /**
   * Waits until every live member of `entry` has it (or a later configuration) in force, then
   * marks the change done.
   */
  private inForceEverywhere(entry: ConfigEntry): void {
    const run = this.run;
    const members = entry.members.map((m) => m.id);
    const check = (): void => {
      const live = this.alive().filter((p) => members.includes(p.id));
      if (
        live.length > 0 &&
        live.every((p) => !p.host.rebuilding && p.host.membership().decidedBelow >= entry.from)
      ) {
        this.changesPending--;
        run.record.memberships.push({ at: run.now, members: this.settledMembers() });
        return;
      }
      run.events.push(run.now + 20, check);
    };
    check();
  }

  /** The live member a scenario aims at: the leader, a replica by id, or the one it added. */
  private member(which: 'leader' | 'new' | number, added: number | null): SimProcess | undefined {
    const members = new Set(this.currentMembers() ?? []);
    const candidates = this.alive().filter((p) => members.has(p.id));
    if (which === 'leader')
      return candidates.find((p) => p.host.status().role === 'leader') ?? candidates[0];
    const id = which === 'new' ? added : which;
    return candidates.find((p) => p.id === id) ?? candidates[0];
  }

  /** Starts a replica added to the cluster, empty: it rebuilds itself from a peer's checkpoint. */
  private startJoiner(id: number, members: readonly number[], s: ReconfigScenario): void {
    const run = this.run;
    const cluster = this.cluster;
    run.counts.added++;
    run.skewMs[id] = run.prngs.reconfig.float(-20, 20);
    run.record.commits[id] = [];
    run.record.replicas = Math.max(run.record.replicas, id + 1);
    const p = cluster.spawn(
      id,
      members.filter((m) => m !== id),
    );
    // A split's cut links are between its groups, and it is in none: the groups reach each other
    // through it from now on.
    for (const split of run.record.splits)
      if (split.end === Number.POSITIVE_INFINITY) split.bridgedAt ??= run.now;
    cluster.startTicks(p, run.now + run.prngs.reconfig.float(0, TICK_MS));
    if (run.now < run.workloadMs)
      this.clients.start(p, run.now + run.prngs.client.exponential(this.clients.meanGap));
    if (s.crashJoiner !== null) {
      const { afterMs, downMs } = s.crashJoiner;
      run.events.push(run.now + afterMs, () => {
        if (!p.up || run.record.lost.includes(p.id)) return;
        cluster.crash(p);
        run.events.push(run.now + downMs, () => cluster.restart(p));
      });
    }
  }

  private addNew(s: ReconfigScenario, started: (id: number) => void): void {
    const id = this.nextId++;
    this.ask({ op: 'add', member: { id, address: `sim://${id}` } }, (o) => {
      if (!o.applied) return;
      this.startJoiner(
        id,
        o.entry.members.map((m) => m.id),
        s,
      );
      started(id);
    });
  }

  /** Carries out the run's membership scenario, from its first change on. */
  runScenario(s: ReconfigScenario): void {
    const run = this.run;
    let added: number | null = null;
    if (s.kind === 'replace') {
      const victim = this.member(s.victim, null);
      if (victim === undefined) return;
      // A lost machine is removed first: a new member takes part only once it has heard every
      // member (it may have voted before and forgotten), so a dead one would hold it back.
      if (s.dead) this.cluster.loseForGood(victim);
      this.ask({ op: 'remove', id: victim.id }, () => this.addNew(s, () => undefined));
    } else {
      this.addNew(s, (id) => (added = id));
      run.events.push(s.shrinkAt, () => {
        const victim = this.member(s.victim, added);
        if (victim !== undefined) this.ask({ op: 'remove', id: victim.id }, () => undefined);
      });
    }
    if (s.crashLeaderMs !== null) {
      // Another leader must finish the change.
      const leader = this.member('leader', null);
      if (leader !== undefined && leader.host.status().role === 'leader') {
        this.cluster.crash(leader);
        run.events.push(run.now + s.crashLeaderMs, () => this.cluster.restart(leader));
      }
    }
  }
}
