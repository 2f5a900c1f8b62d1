import type { Waiting } from '@creek/protocol';

/**
 * What a replica says to probes: /health (liveness) and /ready (readiness), and to clients whose
 * ops it cannot take. Kept apart from the server so each condition's answer is tested directly,
 * a halted replica's included (it exits within moments, too soon to catch over HTTP reliably).
 */
export interface ReplicaCondition {
  /** Why it stopped for good (it lost durable state), or null. */
  readonly halted: string | null;
  /** SIGTERM: draining the ops in flight before it exits. */
  readonly stopping: boolean;
  /** By the admin API. */
  readonly paused: boolean;
  /** It has no op of its own on disk and still learns from its peers (ReplicaHost.learningFromPeers). */
  readonly learning: boolean;
  /** It rebuilds itself from a peer's checkpoint (ReplicaHost.rebuilding); absent: false. */
  readonly rebuilding?: boolean;
  /** It was removed and only finishes its part in consensus (ReplicaHost.leaving); absent: false. */
  readonly leaving?: boolean;
  /**
   * Why it serves no stable answer: its state diverged from its peers' and no majority is known
   * to share it (ReplicaHost.diverged); absent or null while it serves.
   */
  readonly diverged?: string | null;
  /**
   * What it waits for while it cannot make progress by itself (ReplicaHost.waiting); absent or
   * null while it does. A learning or rebuilding replica's answer says it.
   */
  readonly waiting?: Waiting | null;
}

/** Why the replica cannot serve at all (restart or replace it), or null while it can. */
export function notLive(c: ReplicaCondition): string | null {
  if (c.halted !== null) return `halted: ${c.halted}`;
  if (c.stopping) return 'shutting down';
  return null;
}

/** Why the replica takes no client ops now (a message for the client), or null when it does. */
export function notReady(c: ReplicaCondition): string | null {
  if (c.halted !== null)
    return 'this replica halted: it lost its durable state (see its log); try another replica';
  if (c.paused || c.stopping) return 'this replica is paused or shutting down: try another replica';
  if (c.diverged !== undefined && c.diverged !== null)
    return `this replica serves no stable answer: its state diverged from its peers' (${c.diverged}): try another replica`;
  if (c.leaving === true)
    return 'this replica was removed from the cluster and only finishes its part in consensus before it stops: try another replica';
  // A new cluster passes once all its replicas have started (it could not order anything
  // before: PaxosOptions.noDurableVotes).
  if (c.rebuilding === true)
    return `this replica is rebuilding itself from a peer (state transfer: it lacked what its peers had compacted) and is still learning from its peers: try another replica${waitingLine(c)}`;
  if (c.learning)
    return `this replica started with an empty data directory (or none of its own ops in it) and is still learning from its peers: it has not yet heard from every peer (one that is down may hold ops of its past) and rejoined consensus: start the missing replicas, or try another replica${waitingLine(c)}`;
  return null;
}

/** What a learning replica waits for, as the end of its answer (empty when it says nothing). */
function waitingLine(c: ReplicaCondition): string {
  const w = c.waiting ?? null;
  if (w === null) return '';
  const from = w.peers.length === 0 ? '' : ` (replicas ${w.peers.join(', ')})`;
  return `. Waiting for ${w.for}${from}: ${w.reason}`;
}

/**
 * The answer to GET /health or /ready: 200, or 503 with the reason, so a load balancer or an
 * orchestrator needs no JSON parsing; the body names the replica and its cluster, so a probe can
 * tell its own replicas from another cluster's on the same port.
 */
export function probeAnswer(
  probe: 'health' | 'ready',
  c: ReplicaCondition,
  who: { readonly replica: number; readonly cluster: string | null },
): { status: 200 | 503; body: Record<string, unknown> } {
  const reason = probe === 'health' ? notLive(c) : notReady(c);
  return {
    status: reason === null ? 200 : 503,
    body: {
      ok: reason === null,
      ...who,
      ...(reason === null ? {} : { reason }),
      // A replica that cannot make progress says what it waits for, even while it serves (a
      // quorum lost: it takes ops that will not commit until a majority is back).
      ...(probe === 'ready' && (c.waiting ?? null) !== null ? { waiting: c.waiting } : {}),
    },
  };
}
