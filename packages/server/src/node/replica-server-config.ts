import type { App } from '@creek/app';
import type { ClientVersions, PeerVersions } from '@creek/protocol';
import type { PaxosTimers, TransferPacingSettings } from '../geo/index.js';
import type { EdgeLimits } from './edge-limits.js';
import type { PeerAddress } from './peer-address.js';
import type { TlsConfig } from './tls.js';
import type { UserTokenVerifier } from './user-tokens.js';

/** What a replica process is started with (ReplicaServer; `creek start` builds it from settings). */
export interface ReplicaServerConfig {
  readonly id: number;
  readonly host: string;
  readonly port: number;
  /**
   * Every replica of the cluster's genesis configuration, this one included; with `join`, the
   * replicas to ask for the cluster's state. The configuration on disk wins over it (membership
   * changes: cab/configuration.ts).
   */
  readonly peers: readonly PeerAddress[];
  /**
   * A replica added to a running cluster (`creek member add`, then `creek start --join`): with an
   * empty data directory it takes a peer's checkpoint, and the cluster's configuration, first.
   */
  readonly join?: boolean;
  readonly dataDir: string;
  readonly app: App;
  /** The cluster secret peers prove they hold. */
  readonly secret: string;
  /** Client tokens; null lets any client in. */
  readonly tokens: ReadonlySet<string> | null;
  /**
   * Verifies users' tokens (`--auth-jwks`, `--auth-secret-file`): ops then run as their caller
   * (`tx.user`) and are denied by default (the app's `public` and `access` open them). Absent or
   * null: no user signs in, and every op is open to every client.
   */
  readonly userTokens?: UserTokenVerifier | null;
  /** Needed for /admin; null disables it. */
  readonly adminToken: string | null;
  /** Sync every commit to disk (power loss), not just to the OS (process crash). */
  readonly fsync: boolean;
  readonly tickMs?: number;
  readonly noopIntervalMs?: number;
  /** Finalized ops between two checkpoints (older records are then deleted); 0: never. */
  readonly checkpointEvery?: number;
  /**
   * How long a frame nothing waits for (lazy gossip pushes and Paxos copies) may wait to travel
   * with more (PeerOutbox).
   */
  readonly peerLingerMs?: number;
  /**
   * A name the operator (or `creek dev`, which generates one) gives the cluster. /health and /ready
   * report it, so a readiness probe can tell its own replicas from another cluster's on the port.
   */
  readonly clusterId?: string | null;
  /** Read-only token for /status and /metrics (the admin token reads them too); null: admin only. */
  readonly monitorToken?: string | null;
  /** PEM text; null or absent: plain ws:// and http://. */
  readonly tls?: TlsConfig | null;
  /** Overrides of the limits before authentication (DEFAULT_EDGE_LIMITS). */
  readonly edgeLimits?: Partial<EdgeLimits>;
  /**
   * The peer protocol versions this replica claims to speak; absent: this build's. Only tests of
   * upgrades set it (peer-versions-env.ts), to play the next release.
   */
  readonly peerVersions?: PeerVersions;
  /** The client protocol versions it claims, as `peerVersions` (absent: this build's). */
  readonly clientVersions?: ClientVersions;
  /**
   * Worker threads that execute ops (exec/worker-pool-executor.ts); 0 or absent: every op runs
   * on the main thread. Each worker loads the app from `appPath`.
   */
  readonly workers?: number | 'auto';
  /**
   * False: ops execute only once committed and every answer is stable (state machine replication,
   * the baseline `bench:tpcc` compares with; ReplicaOptions.speculative). Default true.
   */
  readonly speculative?: boolean;
  /**
   * Strong reads take their index from a majority's frontiers instead of the leader's read index
   * (`creek start --reads quorum`; PaxosOptions.quorumReads). Default false.
   */
  readonly quorumReads?: boolean;
  /**
   * Check the app's invariants on the finalized state after each committed op
   * (`creek start --check-invariants`; ReplicaOptions.checkInvariants): each one broken is logged
   * as an error and counted in /status `invariants`. Default false.
   */
  readonly checkInvariants?: boolean;
  /**
   * Heartbeat, election timeout and retransmit interval (`creek start --network`,
   * `--heartbeat-ms`, `--election-timeout-ms`); absent: the LAN ones (geo/timers.ts).
   */
  readonly paxosTimers?: PaxosTimers;
  /**
   * How this replica paces a state transfer it pulls (`creek start --network`,
   * HostOptions.transferPacing); absent: the LAN pacing (geo/timers.ts).
   */
  readonly transferPacing?: TransferPacingSettings;
  /**
   * The replica that should lead (`--preferred-leader`, PaxosOptions.preferredLeader): leadership
   * is handed to it once it is up and caught up. Absent: the lowest-numbered replica up leads.
   */
  readonly preferredLeader?: number;
  /** The app's module (`--app`); absent: the built-in ops. */
  readonly appPath?: string;
}

/**
 * Default `tickMs`: how often the protocols' timers are looked at. Every timer they keep is at
 * least this long (heartbeats 25 ms, retransmissions 50 ms, elections 250 ms, no-ops 100 ms), and
 * nothing an op waits for is left to a periodic tick: a strong read that waits for a no-op makes
 * the replica tick at once (ReplicaHost.tickWanted). So a shorter period buys nothing but wakes:
 * at 5 ms each idle replica spent about 9 % of a core on a 2-core machine (README, "Where the tail
 * goes"). 25 ms was first tried when a client's failover resubmitted more ops at once than a
 * replica takes in flight; the client now keeps to that limit (CreekBinding `maxInFlight`).
 */
export const DEFAULT_TICK_MS = 25;

/** Default `peerLingerMs`: about ten times a weak op's round trip on one machine. */
export const DEFAULT_PEER_LINGER_MS = 2;
