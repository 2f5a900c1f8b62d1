import type { ReplicaHost } from '@creek/replica/host/replica-host.js';

/**
 * A run's story as text (SimConfig.trace, `npm run sim -- --seed S --trace`): the faults and the
 * operator's membership changes as they happen, and every `everyMs` of simulated time a line per
 * replica with its Paxos role, ballot, decided and truncated positions, configuration and
 * condition. What a failing seed's verdict ("not quiescent", a halt) leaves out: which replica
 * stopped where, and what it was waiting for. Observing changes nothing in the run.
 */
export interface SimTrace {
  /** Simulated ms between two status lines (at least 1). */
  readonly everyMs: number;
  line(text: string): void;
}

/** A process as the trace sees it. */
export interface TracedProcess {
  readonly id: number;
  readonly up: boolean;
  readonly host: ReplicaHost;
}

/** `text` at simulated time `now`, as the trace prints it. */
export function traceEvent(now: number, text: string): string {
  return `${now.toFixed(1).padStart(8)} ms  ${text}`;
}

/** One replica's state in a status line: `2 leader b769 d71 t9 [1,2,3] rejoining`. */
export function replicaState(p: TracedProcess): string {
  if (!p.up) return `${p.id} down`;
  const s = p.host.status();
  const flags: string[] = [];
  if (s.paxos.rejoining) flags.push('rejoining');
  if (s.learning && !s.paxos.rejoining) flags.push('learning');
  if (s.leaving) flags.push('leaving');
  if (s.halted !== null) flags.push('halted');
  if (s.transfers.rebuilding)
    flags.push(
      `rebuilding (attempt ${s.transfers.attempts}, ${s.transfers.chunksReceived} chunks in)`,
    );
  const role = s.role === 'leader' ? 'leader' : s.role === 'candidate' ? 'candidate' : 'follower';
  return `${p.id} ${role} b${s.ballot} d${s.paxos.decidedBelow} t${s.paxos.truncatedBelow} [${s.membership.members.join(',')}]${flags.length > 0 ? ` ${flags.join(' ')}` : ''}`;
}

/** The status line of every replica at `now`. */
export function statusLine(now: number, procs: readonly TracedProcess[]): string {
  return traceEvent(now, procs.map(replicaState).join(' | '));
}
