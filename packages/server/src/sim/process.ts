import type { OpId } from '@creek/replica/core/op-id.js';
import type { ClientConnections } from '@creek/replica/host/client-connections.js';
import type { LiveQueries } from '@creek/replica/host/live-queries.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import type { HostInput } from '@creek/replica/host/ready.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import type { ReplicaHost } from '@creek/replica/host/replica-host.js';
import type { SimDisk } from './disk.js';
import { closableOrigins, type Invocation, type RunRecord } from './run-record.js';

/** One simulated replica process: the host and the disk that outlives it. */
export interface SimProcess {
  readonly id: number;
  up: boolean;
  /** A 'lose' fault waits for this replica's next strong invocation, then crashes it for good. */
  loseAfterStrong: boolean;
  /** Storage fault 'torn': the power goes at its next disk write (SimCluster.damage). */
  tearNextWrite: boolean;
  incarnation: number;
  /**
   * How many times its disk was lost ('wipe'). Messages carry the count their sender had: those of
   * a wiped process still in flight are dropped, as its TCP connections died with it (a restarted
   * process speaks on new connections, after whatever the old ones had delivered).
   */
  wipes: number;
  /** Its deferred executions are scheduled (SimParameters.execution.deferTurnMs). */
  runScheduled: boolean;
  /**
   * After its disk was lost: crashes again this long after its restart, while it may still be
   * learning from its peers, and is down for `downMs` (null: it does not).
   */
  crashAfterRestart: { readonly afterMs: number; readonly downMs: number } | null;
  /** Keys of its ops from lost disks that other replicas held: no crash of its own loses them. */
  readonly opsOfLostDisks: Set<string>;
  /**
   * A replica added to the running cluster: the members it asks for a checkpoint when its disk is
   * empty (HostOptions.join). Null for a member of the genesis configuration.
   */
  readonly seeds: readonly number[] | null;
  host: ReplicaHost;
  /**
   * When the host's records become durable, by sequence number (Ready.firstSeq): those written by
   * its last step, and the last one before it (what later outputs can wait for).
   */
  readonly durableAt: Map<number, number>;
  disk: SimDisk<HostRecord>;
  /** Its live queries (SimConfig.liveQueries), made anew with each host; null when off. */
  live: LiveQueries<number> | null;
  /** It was removed and takes no client op (ReplicaHost.leaving): its clients have left it. */
  clientsLeft: boolean;
  /**
   * The replica's side of its client connections (SimConfig.clients 'sdk'), made anew with each
   * host as the runtime's is with each process; null when off, or while it is down.
   */
  endpoint: SimEndpoint | null;
}

/** A process's client endpoint (SimProcess.endpoint): the connections, for the host it serves. */
export interface SimEndpoint {
  readonly connections: ClientConnections<number>;
  readonly host: ReplicaHost;
  /** The clients' invocations it handed to the host, by its tag (live queries' reads are not). */
  readonly ops: Map<number, Invocation>;
}

/**
 * A peer message on the simulated network, with the count of disk losses its sender had when it
 * sent it (SimProcess.wipes).
 */
export interface SimMessage {
  readonly msg: PeerMessage;
  readonly wipes: number;
}

/**
 * Whether a client's op reaches the replica: it is up, has not halted, is not still learning
 * from its peers, and serves stable answers (the server answers `unavailable` otherwise:
 * ReplicaHost.learningFromPeers, .diverged).
 */
export function takesOps(h: SimProcess): boolean {
  return (
    h.up &&
    h.host.halted === null &&
    !h.host.learningFromPeers &&
    !h.host.leaving &&
    h.host.diverged === null
  );
}

/**
 * The tentative ops at `p` of dead origins (replicas lost for good, incarnations whose disk was
 * lost) that follow an op of their origin `p` never received: program order keeps them waiting
 * for it, and it died with its origin.
 */
export function stranded(p: SimProcess, record: RunRecord, closable: Set<number>): OpId[] {
  if (record.deadOrigins.length === 0) return [];
  const dead = record.deadOrigins.filter((o) => !closable.has(o));
  const prefix = p.host.clients.receivedPrefix(dead);
  return p.host
    .tentativeIds()
    .filter((id) => id.eventNo > (prefix.get(id.replica) ?? Number.POSITIVE_INFINITY));
}

/** The dead origins the cluster knows are dead (RunRecord `closableOrigins`), as of now. */
export function closable(
  procs: readonly SimProcess[],
  record: RunRecord,
  closesOff = false,
): Set<number> {
  if (record.deadOrigins.length === 0 || closesOff) return new Set();
  const current = procs
    .filter((p) => p.up && p.host.halted === null && !record.lost.includes(p.id))
    .map((p) => p.host.origin);
  return closableOrigins(record, current);
}

/**
 * The tentative ops at `p` of origins the cluster knows are dead (`closableOrigins`): each must end
 * committed, or dropped by its origin's close.
 */
export function unclosed(p: SimProcess, record: RunRecord, closable: Set<number>): OpId[] {
  if (record.deadOrigins.length === 0) return [];
  return closable.size === 0 ? [] : p.host.tentativeIds().filter((id) => closable.has(id.replica));
}

/**
 * One step of a process's host, with what its Ready asks for done (SimCluster.step): the way every
 * part of the simulator gives a replica an input.
 */
export type StepHost = (p: SimProcess, input: HostInput) => void;
