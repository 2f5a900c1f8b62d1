import type { ReplicaEvent } from '@creek/protocol';
import type { FrameOp, SimReplicaFrame } from '@creek/server/sim';

/**
 * The network profile a cluster the visualizer runs emulates (`--profile`), as the server hands it
 * to the page.
 */
export interface LiveProfile {
  readonly name: string;
  /** One line: its regions and round trips. */
  readonly description: string;
  /** Each replica's region, by replica id (0, 1, …). */
  readonly regions: readonly string[];
  /** The one-way delay (ms) each replica adds to its messages to each other one ("Heal" restores it). */
  readonly delays: readonly { readonly from: number; readonly to: number; readonly ms: number }[];
}

/** How many ops of each list a card shows (as in simulation mode). */
const LIST = 8;

/** What the page knows of one live replica, from its event stream. */
export interface LiveReplica {
  readonly id: number;
  /** Its stream: connecting, open (hello received), or closed (and why). */
  connection: 'connecting' | 'open' | 'closed';
  problem: string | null;
  role: 'follower' | 'candidate' | 'leader';
  leader: number | null;
  quorate: boolean;
  committed: number;
  tentative: number;
  digest: string;
  paused: boolean;
  halted: string | null;
  holding: boolean;
  /** Its last committed ops, oldest first. */
  committedTail: FrameOp[];
  /** Ops it received and has not committed, by HLC timestamp (its speculative order). */
  readonly pending: Map<string, FrameOp & { readonly ts: number }>;
  /** Whether each op it saw is strong, by id (to colour commits). */
  readonly strong: Map<string, boolean>;
  /** Its links as it last reported them; `delayMs`: the delay it adds to its messages on one. */
  links: {
    id: number;
    state: string;
    blockedIn: boolean;
    blockedOut: boolean;
    delayMs?: number | undefined;
  }[];
  /** Events the replica did not send this page (sampled), in all. */
  dropped: number;
  /** Multi-Paxos as it last reported it: ballot, instances decided here, proposed, elections. */
  paxos: { ballot: number; decidedBelow: number; proposed: number; elections: number } | null;
  /** Checkpoints it wrote since it started. */
  checkpoints: number;
  /** Gossip messages it sent each peer since the page connected. */
  readonly gossipSent: Map<number, number>;
  /** Its counters as its last status gave them (execution ratio, accuracy, rollbacks). */
  counts: {
    finalized: number;
    executionsOfFinalized: number;
    speculated: number;
    speculatedCorrectly: number;
    rollbacks: number;
  } | null;
  /** Per op name, its tentative answers that are final and those that held (the status's byOp). */
  byOp: Record<string, { speculated: number; speculatedCorrectly: number }>;
}

export function newLiveReplica(id: number): LiveReplica {
  return {
    id,
    connection: 'connecting',
    problem: null,
    role: 'follower',
    leader: null,
    quorate: false,
    committed: 0,
    tentative: 0,
    digest: '',
    paused: false,
    halted: null,
    holding: false,
    committedTail: [],
    pending: new Map(),
    strong: new Map(),
    links: [],
    dropped: 0,
    gossipSent: new Map(),
    counts: null,
    byOp: {},
    paxos: null,
    checkpoints: 0,
  };
}

/** Applies one event of the replica's stream. */
export function apply(r: LiveReplica, e: ReplicaEvent): void {
  switch (e.e) {
    case 'op':
      r.strong.set(e.id, e.level === 'strong');
      r.pending.set(e.id, { id: e.id, strong: e.level === 'strong', ts: e.ts });
      break;
    case 'commit':
      for (const id of e.ids) {
        r.pending.delete(id);
        r.committedTail.push({ id, strong: r.strong.get(id) === true });
        r.strong.delete(id);
      }
      if (r.committedTail.length > LIST) r.committedTail = r.committedTail.slice(-LIST);
      r.committed = Math.max(r.committed, e.position + e.ids.length);
      break;
    case 'paxos':
      r.role = e.role;
      r.leader = e.leader;
      r.quorate = e.quorate;
      r.paxos = {
        ballot: e.ballot,
        decidedBelow: e.decidedBelow,
        proposed: e.proposed,
        elections: e.elections,
      };
      break;
    case 'checkpoint':
      r.checkpoints = e.count;
      break;
    case 'status':
      r.committed = e.committed;
      r.tentative = e.tentative;
      r.digest = e.digest;
      r.paused = e.paused;
      r.halted = e.halted;
      r.holding = e.holding;
      r.counts = e.counts ?? null;
      r.byOp = e.byOp ?? {};
      break;
    case 'links':
      r.links = e.peers;
      break;
    case 'dropped':
      r.dropped += e.count;
      break;
    case 'gossip':
      r.gossipSent.set(e.peer, (r.gossipSent.get(e.peer) ?? 0) + e.pushes + e.pulls + e.summaries);
      break;
    default:
      break;
  }
  // Ops seen before the page connected, or whose commit was sampled out, would stay pending for
  // good: keep the list to about what the replica says it holds.
  if (r.pending.size > Math.max(r.tentative, 0) + 4 * LIST) {
    const sorted = [...r.pending.values()].sort((a, b) => a.ts - b.ts);
    for (const o of sorted.slice(0, r.pending.size - r.tentative)) r.pending.delete(o.id);
  }
}

/** The replica as a card draws it (the simulation mode's frame of one replica). */
export function asFrame(r: LiveReplica): SimReplicaFrame {
  const head = [...r.pending.values()].sort((a, b) => a.ts - b.ts).slice(0, LIST);
  return {
    id: r.id,
    up: r.connection === 'open' && r.halted === null,
    role: r.role,
    committed: r.committed,
    tentative: Math.max(r.tentative, r.pending.size),
    committedTail: r.committedTail,
    tentativeHead: head.map(({ id, strong }) => ({ id, strong })),
    holding: r.holding,
    counts: r.counts ?? {
      finalized: 0,
      executionsOfFinalized: 0,
      speculated: 0,
      speculatedCorrectly: 0,
      rollbacks: 0,
    },
  };
}

/** Every replica streams, none holds anything tentative, and all have the same state digest. */
export function converged(rs: readonly LiveReplica[]): boolean {
  return (
    rs.length > 0 &&
    rs.every((r) => r.connection === 'open' && r.tentative === 0 && r.digest !== '') &&
    rs.every((r) => r.digest === rs[0]!.digest && r.committed === rs[0]!.committed)
  );
}

/**
 * What a live replica is doing, in words a user understands: its stream tells more than a
 * simulated frame (connecting, halted and why, paused by an operator).
 */
export function liveStateOf(r: LiveReplica): { label: string; key: string } {
  if (r.connection === 'connecting') return { label: 'Connecting', key: 'down' };
  if (r.connection === 'closed') return { label: 'Down', key: 'down' };
  if (r.halted !== null) return { label: 'Halted', key: 'halted' };
  if (r.paused) return { label: 'Paused', key: 'paused' };
  if (r.holding) return { label: 'Catching up', key: 'catching-up' };
  if (r.role === 'leader') return { label: 'Leader', key: 'leader' };
  if (r.role === 'candidate' || (r.leader === null && !r.quorate))
    return { label: r.quorate ? 'Electing' : 'No leader', key: 'candidate' };
  return { label: 'Follower', key: 'follower' };
}
