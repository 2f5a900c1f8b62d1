import { ballotLeader, type PaxosMessage } from './messages.js';
import type { PaxosContext } from './context.js';
import type { Election } from './election.js';
import type { PaxosOptions } from './paxos-types.js';

/** Most ordering a pipeline keeps open (Proposer's `maxInFlight` default). */
const DEFAULT_MAX_IN_FLIGHT = 8;

/**
 * Leader placement: the operator names a preferred leader (PaxosOptions.preferredLeader), because
 * a strong op's stable answer costs its origin's round trip to the leader plus the leader's round,
 * and a leader placed near a majority of the others makes that cost close to the physical bound
 * (a round trip to the nearest majority).
 *
 * The transfer is Raft's leadership transfer in Paxos terms: the leader, once the preferred member
 * is heard, hears a majority and is caught up, sends it `handOver`, and it runs for leader at
 * once with a higher ballot. Safety is the ballots' as in any election: acceptors that promise
 * the new ballot refuse the old leader's accepts, and phase 1 recovers whatever it had in flight.
 * The old leader keeps leading until a higher ballot deposes it, so a lost `handOver` leaves no
 * gap without a leader; it is sent again one election timeout later.
 *
 * No flapping, in three rules:
 * - A leader deposed by the ballot of the member it handed over to, and every replica that
 *   promised that ballot, does not run for leader for an election timeout (election.ts, `holdOff`):
 *   Ω would pick the lowest-numbered of them at once, and it would depose the member it handed
 *   over to (the planted bug `run-when-deposed`).
 * - A member takes over only if its own setting names itself: where replicas were given
 *   different values, leadership moves at most once per election, to a member that names itself,
 *   which then never hands over; it never goes round a cycle of disagreeing settings.
 * - Only a healthy member is handed leadership: heard within the election timeout, hearing a
 *   majority itself, not rejoining (its heartbeat says `quorate`), and within one pipeline of the
 *   leader's decided prefix. A member that returns from a crash or a partition gets leadership
 *   back once it has caught up, and not before.
 */
export class LeaderTransfer {
  /** The member the operator wants to lead; null when unset. */
  readonly preferred: number | null;
  private readonly maxLag: number;
  private lastHandOverAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: PaxosContext,
    private readonly election: Election,
    options: PaxosOptions,
  ) {
    this.preferred = options.preferredLeader ?? null;
    this.maxLag = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  }

  /**
   * As the leader, at a tick: hands leadership to the preferred member if it is someone else and
   * healthy, at most once per election timeout.
   */
  handOverIfDue(): void {
    const { ctx, election } = this;
    const target = this.preferred;
    if (election.role !== 'leader' || target === null || target === ctx.self) return;
    if (ctx.now - this.lastHandOverAt < ctx.electionTimeoutMs) return;
    if (!this.healthy(target)) return;
    this.lastHandOverAt = ctx.now;
    ctx.counters.handOvers++;
    ctx.send(target, { type: 'handOver', ballot: election.ballot });
  }

  /**
   * `target` is a member of the configuration in force, heard within the election timeout, says
   * it hears a majority (a rejoining replica says it does not), and has decided all but at most a
   * pipeline's worth of what this leader decided.
   */
  private healthy(target: number): boolean {
    const { ctx, election } = this;
    if (!ctx.history.isMember(ctx.decidedBelow, target)) return false;
    if (!election.heardRecently(target)) return false;
    const hb = election.heartbeatOf(target);
    return hb !== undefined && hb.quorate && hb.decidedBelow + this.maxLag >= ctx.decidedBelow;
  }

  /**
   * The leader `from` hands over to this replica: it runs for leader now, if its own setting names
   * itself, it may lead (a member, hearing a majority, not rejoining or removed) and the hand-over
   * is not stale (no higher ballot than the sender's seen since).
   */
  onHandOver(from: number, msg: Extract<PaxosMessage, { type: 'handOver' }>): void {
    const { ctx, election } = this;
    if (this.preferred !== ctx.self || election.role !== 'follower') return;
    if (ballotLeader(msg.ballot) !== from || msg.ballot < election.highestSeenBallot) return;
    if (!ctx.history.isMember(ctx.decidedBelow, ctx.self)) return;
    if (ctx.roles.rejoin.rejoining || ctx.roles.reconfiguration.retired) return;
    if (!election.hearsMajority()) return;
    election.seeBallot(msg.ballot);
    election.startElection();
  }
}
