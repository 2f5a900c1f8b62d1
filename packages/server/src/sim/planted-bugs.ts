import type { SimConfig } from './simulation.js';

/**
 * Bugs the simulator can plant on purpose, to see its checkers catch them: `npm run sim --
 * --plant NAME` and the visualizer's `?bug=NAME` replay a run with one. Each is a SimConfig switch
 * that exists for a test which shows the checkers fail when the replica is wrong.
 */
export const PLANTED_BUGS = {
  'send-before-durable': {
    config: { unsafeSendBeforeDurable: true },
    what: 'replicas send messages before what they wrote is on disk, so a crash forgets promises and votes others acted on',
  },
  'speculate-while-behind': {
    config: { unsafeSpeculateWhileBehind: true },
    what: 'a replica far behind re-executes its tentative ops with every batch it catches up on',
  },
  'hold-while-cut-off': {
    config: { unsafeHoldWhileCutOff: true },
    what: 'a replica cut off in the middle of a catch-up keeps holding its answers',
  },
  'install-incomplete-transfer': {
    config: { unsafeInstallIncomplete: true },
    what: 'a replica rebuilt from a peer installs the checkpoint once its last chunk is in, without the chunks still on their way',
  },
  'genesis-quorum': {
    config: { unsafeGenesisQuorum: true },
    what: 'every quorum is a majority of the first configuration, counted over any replicas, whatever membership changes made of the cluster since',
  },
  'drop-gossiped-users': {
    config: { unsafeDropGossipedUsers: true },
    what: "replicas drop the caller from the ops gossip brings them, and run other replicas' ops as anonymous",
  },
  'read-without-quorum': {
    config: { unsafeReadWithoutQuorum: true },
    what: 'the leader answers a strong read with its read index without confirming that no other leader took over, so a deposed leader serves stale reads',
  },
  'quorum-read-single-answer': {
    config: { unsafeQuorumReadSingleAnswer: true },
    what: "a replica reading by quorum takes the first member's frontier for a majority's, so a replica cut off in a minority serves stale strong reads",
  },
  'skip-divergence-check': {
    config: { unsafeSkipDivergenceCheck: true, nondeterministic: true },
    what: 'replicas never compare digests of their state, so a nondeterministic op (planted in the run) leaves them serving different answers unnoticed',
  },
  'stable-claims-own-ops': {
    config: { unsafeStableOwnOps: true, clients: 'sdk', faults: 'all' },
    what: "a replica tells a session that its live queries' stable results hold the session's ops that only their tentative results hold, so the user's write vanishes from the view",
  },
  'ignore-context-token': {
    config: { unsafeIgnoreAfter: true, contexts: true, clients: 'sdk', faults: 'all' },
    what: "a replica welcomes a client that starts after another's context token without waiting for the ops the token covers, so the client reads without the other's writes",
  },
  'answer-context-unheld': {
    config: { unsafeAnswerUnheld: true, contexts: true, clients: 'sdk', faults: 'all' },
    what: "a replica answers a running client's after(token) at once, without the ops the token covers, so the client's ops run without the other client's writes",
  },
  'weak-context-merge': {
    config: { unsafeWeakContextMerge: true, sharedContexts: true, clients: 'sdk', faults: 'lag' },
    what: "clients merge their ops into a shared context with a weak op, so an op is acknowledged before its place in the context's frontier is ordered, and another member's op runs without it",
  },
  'ignore-checksums': {
    config: {
      unsafeIgnoreChecksums: true,
      storageFaults: ['torn', 'corrupt', 'stale'],
      faults: 'crash',
    },
    what: "replicas load their disks without checking the records' checksums, and go on from what a torn write, a flipped bit or a stale record left there",
  },
  'election-below-rtt': {
    config: { unsafeElectionBelowRtt: true, network: 'global' },
    what: 'the election timeout is half the shortest round trip between two regions (the run is on the global profile), below the heartbeat period, so followers give up on a leader that is alive and connected',
  },
  'run-when-deposed': {
    config: { unsafeRunWhenDeposed: true, preferredLeader: 1, faults: 'crash' },
    what: 'a leader deposed by a higher ballot runs for leader again at once, so it takes back leadership it handed to the preferred leader',
  },
  'leave-only-in-force': {
    config: { unsafeLeaveOnlyInForce: true, faults: 'reconfig' },
    what: 'a removed replica turns clients away only while its removal is in force at its decided prefix, which a restart sets back, so after a restart it takes client ops that only adoption orders',
  },
  'adopt-unchained': {
    config: { unsafeUnchainedAdoption: true, faults: 'crash' },
    what: "replicas that adopt a dead origin's strong ops behind one another cast each without naming its predecessor, so CAB takes the origin's last delivered op for it and orders the chain out of its origin's order",
  },
  'trust-mirror-reads': {
    config: { unsafeTrustMirrorReads: true },
    what: "an execution on a worker's store mirror is checked against the versions its position sees when its result comes back, not those the worker read, so a result computed from a version a later installation superseded is accepted without validation",
  },
  overdraw: {
    config: { unsafeOverdraw: true, invariants: true },
    what: "the app's transfer moves money whatever the balance, so an account goes below zero, which the app's 'no-overdraft' invariant forbids",
  },
} as const satisfies Record<string, { config: Partial<SimConfig>; what: string }>;

export type PlantedBug = keyof typeof PLANTED_BUGS;
export const PLANTED_BUG_NAMES = Object.keys(PLANTED_BUGS) as PlantedBug[];
