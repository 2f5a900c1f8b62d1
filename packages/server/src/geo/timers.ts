/**
 * The replica's Paxos timers (heartbeat, election timeout, retransmit) for the kind of network it
 * runs on. One definition serves the runtime (`creek start --network`) and the simulator's seeds
 * on a WAN profile, so that what the simulator judges is what an operator gets.
 */

/** How often Ω announces itself, how long a silence deposes, and when unanswered sends repeat. */
export interface PaxosTimers {
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
  readonly retransmitMs: number;
}

export const NETWORK_KINDS = ['lan', 'wan'] as const;
export type NetworkKind = (typeof NETWORK_KINDS)[number];

/**
 * lan: one data centre, sub-millisecond round trips; the values the runtime always had.
 *
 * wan: round trips up to 300 ms (the `global` profile's longest link is 330 ms).
 * - heartbeat 100 ms: a third of the longest round trip, so followers learn of a new leader, and a
 *   leader of its quorum, well within one round trip's worth of extra wait; sending more often
 *   buys nothing a round trip does not already cost.
 * - election timeout 1500 ms: 15 heartbeats and 5 of the longest round trips. A silence that
 *   long is a dead or cut-off leader, not a slow link: TCP resends a lost segment only after its
 *   retransmission timeout (at least 200 ms on Linux, plus the round trip), and a WAN link's tail
 *   latency is several times its median; etcd's guidance is the same ratio (10 heartbeats).
 * - retransmit 500 ms: above the longest round trip with its jitter, so a reply that is merely on
 *   its way is not asked for again (a shorter one doubles every accept and forward on a slow
 *   link); the replicas' links are TCP, so it only covers messages lost to a reconnection.
 */
export const TIMERS: Readonly<Record<NetworkKind, PaxosTimers>> = {
  lan: { heartbeatMs: 25, electionTimeoutMs: 250, retransmitMs: 50 },
  wan: { heartbeatMs: 100, electionTimeoutMs: 1500, retransmitMs: 500 },
};

/** An election timeout shorter than this many heartbeats deposes leaders between heartbeats. */
export const MIN_HEARTBEATS_PER_ELECTION_TIMEOUT = 4;

/** How a replica paces a state transfer it pulls (the replica's HostOptions.transferPacing). */
export interface TransferPacingSettings {
  readonly window: number;
  readonly retryMs: number;
  readonly selective?: boolean;
  readonly burstGapMs?: number;
}

/**
 * lan: the replica's defaults, a window of 8 chunks asked again whole from the first one missing
 * after a 250 ms silence; on one data centre a round trip costs nothing either way.
 *
 * wan: a round trip of up to 330 ms carries a window, so the window is what bounds a transfer.
 * - window 64 chunks: about a round trip's worth on a fast link (a sender serves at most 20 of the
 *   real runtime's full-size chunks per ask, within the peer link's backpressure bound, and a
 *   replica asks for no more than that).
 * - selective: only the chunks missing are asked again, beside new ones; asking a whole window
 *   again from the first one missing moves on by about the chunks before the first loss.
 * - burst gap 100 ms: an answer's chunks leave together, so once some came in, a silence this
 *   long means the rest were lost; waiting a whole retry for them would idle the link.
 * - retry 500 ms, the WAN retransmit interval: above the longest round trip with its jitter, so
 *   an answer that is merely on its way is not asked for again.
 */
export const TRANSFER_PACING: Readonly<Record<NetworkKind, TransferPacingSettings>> = {
  lan: { window: 8, retryMs: 250 },
  wan: { window: 64, retryMs: TIMERS.wan.retransmitMs, selective: true, burstGapMs: 100 },
};
