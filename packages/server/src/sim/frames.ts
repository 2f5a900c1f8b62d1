import { formatOpId, opKey, type OpId } from '@creek/replica/core/op-id.js';
import { speculationCountsOf, type SpeculationCounts, type Waiting } from '@creek/protocol';
import type { ResponseLevel } from '@creek/replica/core/types.js';
import type { Flight } from './network.js';
import type { SimMessage, SimProcess } from './process.js';
import type { Invocation, RunRecord } from './run-record.js';

/** A replica at one moment of a simulated run (SimConfig.frames). */
export interface SimReplicaFrame {
  readonly id: number;
  readonly up: boolean;
  readonly role: 'follower' | 'candidate' | 'leader';
  readonly committed: number;
  readonly tentative: number;
  /** Its last committed ops (at most FRAME_LIST), oldest first. */
  readonly committedTail: readonly FrameOp[];
  /** The first ops of its tentative list (at most FRAME_LIST), in its speculative order. */
  readonly tentativeHead: readonly FrameOp[];
  /** It holds speculation while it catches up. */
  readonly holding: boolean;
  /**
   * Its counters since it (last) started: ops finalized and the executions they took, ops answered
   * tentatively and those whose tentative answer was the stable one, rollbacks.
   */
  readonly counts: SpeculationCounts;
  /**
   * What it waits for while it cannot make progress by itself (HostStatus.waiting), or null;
   * absent where the frame's maker does not know it (the visualizer's live page).
   */
  readonly waiting?: { readonly for: Waiting['for']; readonly peers: readonly number[] } | null;
}

/** A message on its way from one replica to another (SimFrame.messages). */
export interface FrameMessage {
  readonly from: number;
  readonly to: number;
  /** Its layer and kind: `gossip push`, `paxos accept`, … */
  readonly kind: string;
  readonly sentAt: number;
  readonly arriveAt: number;
}

/** An op's life as its client saw it up to a frame (SimFrame.recentOps); times in simulated ms. */
export interface FrameOpLife {
  /** `r<replica>#<eventNo>` once its replica gave it one. */
  readonly id: string | null;
  readonly replica: number;
  readonly op: string;
  readonly strong: boolean;
  readonly invokedAt: number;
  /** Its first tentative and its stable answer, or its failure (and why), once they came. */
  readonly tentativeAt: number | null;
  readonly stableAt: number | null;
  readonly failedAt: number | null;
  readonly failure: string | null;
}

/** An op in a frame's list: its id as `r<replica>#<eventNo>`, and whether it is strong. */
export interface FrameOp {
  readonly id: string;
  readonly strong: boolean;
}

/** A simulated run at one moment (SimConfig.frames). */
export interface SimFrame {
  /** Simulated ms since the run began. */
  readonly at: number;
  readonly replicas: readonly SimReplicaFrame[];
  /** The groups of a partition in force, or null. */
  readonly partition: readonly (readonly number[])[] | null;
  /** Ops invoked so far, and how many of those were strong. */
  readonly invoked: number;
  readonly strongInvoked: number;
  /** Messages on their way between replicas (the last FRAME_MESSAGES sent), and how many in all. */
  readonly messages: readonly FrameMessage[];
  readonly messagesInFlight: number;
  /** The last FRAME_OPS ops invoked, oldest first. */
  readonly recentOps: readonly FrameOpLife[];
}

/** How many ops of each list a frame shows. */
export const FRAME_LIST = 8;
/** How many messages in flight, and how many recent ops, a frame shows. */
export const FRAME_MESSAGES = 64;
export const FRAME_OPS = 16;

/**
 * What each replica looks like at `now` (SimConfig.frames), with the messages on their way
 * (`flying`: the network's, tracked when frames are asked for) and the recent ops. It reads the
 * run and changes nothing in it: it draws no random number and schedules nothing.
 */
export function frame(
  now: number,
  procs: readonly SimProcess[],
  record: RunRecord,
  flying: readonly Flight<SimMessage>[],
): SimFrame {
  const frameOp = (id: OpId): FrameOp => ({
    id: formatOpId(id),
    strong: record.reqs.get(opKey(id))?.strong === true,
  });
  const open = record.splits.find((s) => s.end === Number.POSITIVE_INFINITY);
  return {
    at: now,
    replicas: procs.map((p) => {
      const s = p.host.status();
      const m = s.metrics;
      const commits = record.commits[p.id]!;
      const tail: OpId[] = [];
      for (let g = commits.length - 1; g >= 0 && tail.length < FRAME_LIST; g--)
        for (let k = commits[g]!.length - 1; k >= 0 && tail.length < FRAME_LIST; k--)
          tail.unshift(commits[g]![k]!);
      return {
        id: p.id,
        up: p.up,
        role: s.role,
        committed: s.committed,
        tentative: s.tentative,
        committedTail: tail.map(frameOp),
        tentativeHead: p.host.tentativeIds().slice(0, FRAME_LIST).map(frameOp),
        holding: s.catchUp.holding,
        counts: speculationCountsOf(m),
        waiting: s.waiting === null ? null : { for: s.waiting.for, peers: s.waiting.peers },
      };
    }),
    partition: open === undefined ? null : open.groups,
    invoked: record.invocations.length,
    strongInvoked: record.invocations.filter((i) => i.strong).length,
    messages: flying.slice(-FRAME_MESSAGES).map((f) => ({
      from: f.from,
      to: f.to,
      kind:
        f.msg.msg.kind === 'gossip'
          ? `gossip ${f.msg.msg.msg.kind}`
          : f.msg.msg.kind === 'divergence'
            ? `divergence ${f.msg.msg.msg.type}`
            : `paxos ${f.msg.msg.msg.type}`,
      sentAt: f.sentAt,
      arriveAt: f.arriveAt,
    })),
    messagesInFlight: flying.length,
    recentOps: record.invocations.slice(-FRAME_OPS).map(opLife),
  };
}

/** An op's life as its client saw it so far (SimFrame.recentOps, SimConfig.frames.onOps). */
export function opLife(i: Invocation): FrameOpLife {
  const first = (level: ResponseLevel) => i.responses.find((r) => r.level === level);
  const failed = first('failed');
  return {
    id: i.id === null ? null : formatOpId(i.id),
    replica: i.replica,
    op: i.op,
    strong: i.strong,
    invokedAt: i.invokedAt,
    tentativeAt: first('tentative')?.at ?? null,
    stableAt: first('stable')?.at ?? null,
    failedAt: failed?.at ?? null,
    failure: failed === undefined || failed.outcome.ok ? null : failed.outcome.error,
  };
}
