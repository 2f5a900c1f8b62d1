import type { MultiPaxos } from '@creek/replica/cab/multi-paxos.js';
import type { ReplicaHost } from '@creek/replica/host/replica-host.js';

/**
 * What the liveness checker (sim/liveness-checker.ts) reads of a run, as it happened: when each
 * election started and by whom, each replica's terms as leader, and the stretches during which a
 * fault was in force. Observing draws nothing and changes nothing in the run.
 */
export interface LeadershipRecord {
  /** Elections started (a new ballot's phase 1), in order. */
  readonly elections: { readonly at: number; readonly replica: number }[];
  /** Terms as leader: from when a replica led until it stopped (Infinity: it still leads). */
  readonly terms: { readonly replica: number; readonly start: number; end: number }[];
  /**
   * Stretches with a fault in force: a cut link, a replica down (not lost for good), a membership
   * change under way; and the instant a replica was lost for good (start = end).
   */
  readonly faults: { readonly start: number; end: number }[];
}

/** Records the run's LeadershipRecord: each replica after its ticks, the faults after each event. */
export class LeadershipLog {
  readonly record: LeadershipRecord = { elections: [], terms: [], faults: [] };
  private readonly openTerm: (LeadershipRecord['terms'][number] | undefined)[] = [];
  /** The election counter of each Paxos instance when last looked at (a restart makes a new one). */
  private readonly counted = new WeakMap<MultiPaxos, number>();
  private openFault: LeadershipRecord['faults'][number] | null = null;
  private lostCount = 0;

  constructor(
    /** The run's simulated time, and its replicas lost for good (RunRecord.lost). */
    private readonly run: {
      readonly now: number;
      readonly record: { readonly lost: readonly number[] };
    },
  ) {}

  /**
   * After `p`'s tick: elections start only in a tick (Election.elect, and a leader's re-election),
   * so the count's growth dates each one exactly; a role is seen a tick late at most.
   */
  ticked(p: { readonly id: number; readonly up: boolean; readonly host: ReplicaHost }): void {
    const now = this.run.now;
    const leads = p.up && p.host.inspect().paxos.status().role === 'leader';
    if (p.up) {
      const paxos = p.host.inspect().paxos;
      const before = this.counted.get(paxos) ?? 0;
      for (let k = before; k < paxos.counters.elections; k++)
        this.record.elections.push({ at: now, replica: p.id });
      this.counted.set(paxos, paxos.counters.elections);
    }
    const open = this.openTerm[p.id];
    if (leads && open === undefined) {
      const term = { replica: p.id, start: now, end: Number.POSITIVE_INFINITY };
      this.record.terms.push(term);
      this.openTerm[p.id] = term;
    } else if (!leads && open !== undefined) {
      open.end = now;
      this.openTerm[p.id] = undefined;
    }
  }

  /** After each event: whether a fault is in force now (`faulty`), and replicas lost since. */
  afterEvent(faulty: boolean): void {
    const now = this.run.now;
    const lost = this.run.record.lost.length;
    if (lost !== this.lostCount) {
      this.lostCount = lost;
      this.record.faults.push({ start: now, end: now });
    }
    if (faulty && this.openFault === null) {
      this.openFault = { start: now, end: Number.POSITIVE_INFINITY };
      this.record.faults.push(this.openFault);
    } else if (!faulty && this.openFault !== null) {
      this.openFault.end = now;
      this.openFault = null;
    }
  }
}
