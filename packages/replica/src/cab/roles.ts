import type { ReconfigRequest } from './configuration.js';
import type { Batch, CastId, PaxosMessage } from './messages.js';
import type { Role } from './paxos-types.js';
import type { Awaited } from './req-waits.js';

// The parts of one MultiPaxos (multi-paxos.ts), each as the others see it: what one role asks of
// another goes through these methods, and each role's state stays its own.

export type PromiseMsg = Extract<PaxosMessage, { type: 'promise' }>;

/**
 * What a peer's last heartbeat said: whether it hears a majority (a heartbeat without the field
 * says it does); one past the highest instance it knew decided, and delivered; one past the
 * highest it accepted a value for or knew decided; and the ballot it had promised.
 */
export interface PeerHeartbeat {
  readonly quorate: boolean;
  readonly decidedBelow: number;
  readonly deliveredBelow: number;
  readonly knownBelow: number;
  readonly promised: number;
}

/** acceptor.ts */
export interface AcceptorRole {
  readonly promised: number;
  readonly truncatedBelow: number;
  onAccept(from: number, ballot: number, instance: number, value: Batch): void;
  promise(ballot: number): void;
  acceptedAt(instance: number): { readonly ballot: number; readonly value: Batch } | undefined;
  acceptedBelow(below: number): number;
  truncate(below: number): void;
  skipTo(below: number): void;
}

/** learner.ts */
export interface LearnerRole {
  readonly localDeliveredBelow: number;
  onAccepted(from: number, ballot: number, instance: number): void;
  decide(instance: number, value: Batch): void;
  skipTo(below: number, from: number): void;
  maybeCatchup(): void;
  isDecided(instance: number): boolean;
  holdsDecision(instance: number): boolean;
  decisionsFrom(instance: number): { instance: number; value: Batch }[];
  highestDecided(): number;
  knownBelow(): number;
}

/** election.ts */
export interface ElectionRole {
  readonly role: Role;
  readonly ballot: number;
  seeBallot(b: number): void;
  standDownFor(ballot: number): void;
  promisedTo(ballot: number): void;
  currentLeader(): number | null;
  heartbeatOf(id: number): PeerHeartbeat | undefined;
  mostAdvancedPeer(below: number): number | null;
  promisedByQuorumOf(j: number): boolean;
  askForPromises(j: number): void;
}

/** rejoin.ts */
export interface RejoinRole {
  readonly noDurableVotes: boolean;
  readonly rejoining: boolean;
  readonly rejoined: boolean;
  heard(from: number, msg: Extract<PaxosMessage, { type: 'heartbeat' }>): void;
  lostState(from: number, reason: string): void;
}

/** proposer.ts */
export interface ProposerRole {
  readonly nextInstance: number;
  readonly recoveredTop: number;
  lead(prepareFrom: number, promises: Iterable<PromiseMsg>): void;
  stop(): void;
  mergePromise(p: PromiseMsg): void;
  decided(instance: number, value: Batch): void;
  skipTo(below: number): void;
  enqueue(casts: readonly CastId[]): void;
  enqueueReconfig(request: ReconfigRequest): void;
  tryPropose(): void;
}

/** waiting-for-reqs.ts */
export interface WaitingRole {
  firstLacking(value: Batch, from?: number): { lacking: Awaited | null; at: number };
  castWaits(c: CastId, key: string): boolean;
  holdAccept(
    from: number,
    ballot: number,
    instance: number,
    value: Batch,
    lacking: Awaited,
    at: number,
  ): void;
  acceptWaits(instance: number, ballot: number): boolean;
  dropCasts(): void;
}

/** reads.ts */
export interface ReadsRole {
  readonly waiting: boolean;
  forwardTo(leader: number): void;
  dropRounds(): void;
}

/** reconfiguration.ts */
export interface ReconfigurationRole {
  readonly retired: boolean;
  readonly waiting: boolean;
  forwardTo(leader: number): void;
  hasOutcome(nonce: string): boolean;
  applyConfigOf(instance: number, value: Batch): void;
  noteOwnRemoval(): boolean;
  tellPassed(from: number, fromInstance: number): boolean;
}

/** origin.ts */
export interface OriginRole {
  forwardPending(): void;
}

/** The parts of one MultiPaxos, set once by it when it builds them. */
export class Roles {
  acceptor!: AcceptorRole;
  learner!: LearnerRole;
  election!: ElectionRole;
  rejoin!: RejoinRole;
  proposer!: ProposerRole;
  waiting!: WaitingRole;
  reads!: ReadsRole;
  reconfiguration!: ReconfigurationRole;
  origin!: OriginRole;
}
