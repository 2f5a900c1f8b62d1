import { DEFAULT_ELECTION_TIMEOUT_MS, DEFAULT_HEARTBEAT_MS } from '@creek/replica/cab/context.js';
import type { PreferredLeaderSetting } from './parameters.js';
import type { Prng } from './prng.js';
import type { RunState } from './run-state.js';

/**
 * Leader placement in the simulator (cab/leader-transfer.ts): the preferred leader a run's
 * replicas are given, and the checker of what leadership did with it.
 */

/** Share of seeds whose replicas are given a preferred leader. */
const PREFERRED_SHARE = 1 / 3;
/** Share of those whose replicas are given different values. */
const DISAGREEING_SHARE = 1 / 6;
/** How often who leads is sampled: every replica tick. */
export const LEADERSHIP_SAMPLE_MS = 5;
/**
 * A run with a preferred leader goes on this long after it is quiescent, so that its last calm
 * stretch is long enough to judge where leadership ends up: at quiescence every member is up and
 * caught up, and a transfer takes about one heartbeat and an election (tens of ms in the
 * simulator's timers).
 */
export const PLACEMENT_GRACE_MS = 1_000;

/**
 * The seed's setting, from a stream of its own (so no other draw moves): none in two runs of
 * three; otherwise a member every replica is given, and in one such run of six, a different value
 * for each replica.
 */
export function drawPreferredLeader(prng: Prng, n: number): PreferredLeaderSetting | null {
  if (n < 2 || !prng.chance(PREFERRED_SHARE)) return null;
  const member = prng.int(0, n - 1);
  const perReplica = prng.chance(DISAGREEING_SHARE)
    ? Array.from({ length: n }, () => prng.int(0, n - 1))
    : null;
  return { member, perReplica };
}

/** The preferred leader replica `id` is given (its own value where the run's disagree). */
export function preferredLeaderOf(setting: PreferredLeaderSetting, id: number): number {
  return setting.perReplica?.[id] ?? setting.member;
}

/** Who led at one sample, and whether the run was calm then. */
interface Sample {
  readonly at: number;
  /** Every member up (but those lost for good), the network whole, no membership change under way. */
  readonly calm: boolean;
  /** The replica up that leads with the highest ballot; null when none leads. */
  readonly leader: number | null;
  /** Which processes are up (their ids, joined): a change ends a calm stretch. */
  readonly up: string;
}

/** What leadership did in a run with a preferred leader, for SimStats. */
export interface LeadershipStats {
  readonly preferred: number;
  readonly agreed: boolean;
  /** Times the sampled leader changed (a new leader after none counts too). */
  readonly changes: number;
  /** Who led at the end. */
  readonly finalLeader: number | null;
  /** The checker judged the run (LeadershipTrack.judged). */
  readonly judged: boolean;
}

/**
 * Leadership changes a calm stretch may see: a member back from a partition may run before it
 * hears the leader (Ω: it is the lowest-numbered member it hears) and depose it, and the leader
 * it made of itself then hands leadership to the preferred member.
 */
const MAX_CALM_CHANGES = 2;

/**
 * Samples who leads through a run with a preferred leader, and checks at its end that in every
 * calm stretch (no fault: every member up but those lost for good, the network whole, no membership
 * change under way) leadership does not go back and forth: it changes at most MAX_CALM_CHANGES times,
 * and comes back to a member that lost it only if that member is the preferred one (named by its
 * own setting). And, where every replica was given the same member, that this member leads at the
 * end of the run's last calm stretch, once every member is up and caught up.
 */
export class LeadershipTrack {
  private readonly samples: Sample[] = [];
  private lastSlot = -1;
  /**
   * Whether the run's timers promise a stable leader at all: a heartbeat, sent each period and
   * delayed up to the network's longest delay, arrives within the election timeout even after the
   * longest delay on the way out and back. Where it may not (the seeds that draw 50 ms delays
   * against the simulator's 60 ms election timeout), followers presume a live leader dead and Ω
   * elects again whatever the placement, and the checker judges nothing; timers derived from the
   * measured round trips are what makes leadership stable there.
   */
  readonly judged: boolean;

  constructor(
    private readonly run: RunState,
    readonly setting: PreferredLeaderSetting,
    private readonly calmNow: () => boolean,
  ) {
    this.judged =
      2 * run.params.network.maxDelayMs + DEFAULT_HEARTBEAT_MS < DEFAULT_ELECTION_TIMEOUT_MS;
  }

  /** After each event: a sample once per LEADERSHIP_SAMPLE_MS of simulated time. */
  observe(): void {
    const slot = Math.floor(this.run.now / LEADERSHIP_SAMPLE_MS);
    if (slot === this.lastSlot) return;
    this.lastSlot = slot;
    this.samples.push({
      at: this.run.now,
      calm: this.calmNow(),
      leader: this.leaderNow(),
      up: this.run.procs
        .filter((p) => p.up)
        .map((p) => p.id)
        .join(','),
    });
  }

  private leaderNow(): number | null {
    let leader: number | null = null;
    let ballot = -1;
    for (const p of this.run.procs) {
      if (!p.up) continue;
      const s = p.host.inspect().paxos.status();
      if (s.role === 'leader' && s.ballot > ballot) {
        leader = p.id;
        ballot = s.ballot;
      }
    }
    return leader;
  }

  /**
   * The calm stretches, each as its samples, in order: a process that goes down or comes back
   * ends one (a replica lost for good leaves the run calm, but its loss is a fault of its own).
   */
  private stretches(): Sample[][] {
    const out: Sample[][] = [];
    let cur: Sample[] | null = null;
    for (const s of this.samples) {
      if (!s.calm) cur = null;
      else if (cur === null || cur[0]!.up !== s.up) out.push((cur = [s]));
      else cur.push(s);
    }
    return out;
  }

  /** The violations, each starting with `leadership:`. */
  check(members: readonly number[]): string[] {
    const out: string[] = [];
    if (!this.judged) return out;
    const stretches = this.stretches();
    for (const st of stretches) {
      const seq = leadersIn(st);
      const back = seq.find((l, i) => seq.indexOf(l) < i && !this.namesItself(l));
      if (seq.length - 1 > MAX_CALM_CHANGES || back !== undefined)
        out.push(
          `leadership: went back and forth in a calm stretch (${st[0]!.at.toFixed(0)}–${st.at(-1)!.at.toFixed(0)} ms): ${seq.slice(0, 12).join(' → ')}${seq.length > 12 ? ' …' : ''}`,
        );
    }
    const last = stretches.at(-1);
    const { member, perReplica } = this.setting;
    const lastSample = this.samples.at(-1);
    // Judged only when the run ended calm, after a calm stretch the grace made long enough.
    if (
      perReplica === null &&
      members.includes(member) &&
      !this.run.record.lost.includes(member) &&
      last !== undefined &&
      lastSample !== undefined &&
      last.at(-1) === lastSample &&
      lastSample.at - last[0]!.at >= PLACEMENT_GRACE_MS
    ) {
      const leader = lastSample.leader;
      if (leader !== member)
        out.push(
          `leadership: preferred leader ${member} does not lead at the end of a calm stretch of ${(lastSample.at - last[0]!.at).toFixed(0)} ms (${leader === null ? 'nobody leads' : `${leader} leads`}; leaders in it: ${leadersIn(last).join(' → ')})`,
        );
    }
    return out;
  }

  /** Replica `id` was given itself as the preferred leader. */
  private namesItself(id: number): boolean {
    return preferredLeaderOf(this.setting, id) === id;
  }

  stats(): LeadershipStats {
    let changes = 0;
    let prev: number | null = null;
    for (const s of this.samples) {
      if (s.leader !== null && s.leader !== prev) changes++;
      prev = s.leader;
    }
    return {
      preferred: this.setting.member,
      agreed: this.setting.perReplica === null,
      changes,
      finalLeader: this.samples.at(-1)?.leader ?? null,
      judged: this.judged,
    };
  }
}

/** The leaders of a stretch in the order they led, each run of samples once, gaps skipped. */
function leadersIn(stretch: readonly Sample[]): number[] {
  const seq: number[] = [];
  for (const s of stretch) if (s.leader !== null && seq.at(-1) !== s.leader) seq.push(s.leader);
  return seq;
}
