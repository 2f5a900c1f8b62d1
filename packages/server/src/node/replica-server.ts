import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Logger } from 'pino';
import {
  CLOSE_SINCE,
  EVENTS_PATH,
  MAX_FRAME_BYTES,
  speculationCountsOf,
  STATUS_EVENT_OPS,
  type ReplicaStatus,
  type ReplicaUrls,
} from '@creek/protocol';
import { WebSocketServer } from 'ws';
import { checkAccess, CLOSE_OP, NOOP_OP } from '@creek/app';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { startWorkers } from '../exec/start-workers.js';
import type { WorkerPoolExecutor } from '../exec/worker-pool-executor.js';
import { TIMERS } from '../geo/index.js';
import { MembershipAdmin } from './membership-admin.js';
import { ReplicaHttp } from './replica-http.js';
import type { Member, ReconfigOutcome } from '@creek/replica/cab/configuration.js';
import type { Response } from '@creek/replica/core/types.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import type { DivergenceReport } from '@creek/replica/host/divergence.js';
import type { HostEvent, HostInput, PeerSend, Ready } from '@creek/replica/host/ready.js';
import { ReplicaHost } from '@creek/replica/host/replica-host.js';
import { contextMac } from './context-key.js';
import { ClientEndpoint } from './client-endpoint.js';
import { clientUrls } from './client-urls.js';
import { ConnectionGuard, refuseUpgrade } from './connection-guard.js';
import { registerEdgeMetrics } from './edge-metrics.js';
import { edgeLimits } from './edge-limits.js';
import { EventStream } from './event-stream.js';
import { ReplicaMetricsExporter } from './metrics.js';
import { PeerMesh } from './peer-mesh.js';
import { GroupCommit } from './group-commit.js';
import { PeerOutbox } from './peer-outbox.js';
import { notReady, type ReplicaCondition } from './probes.js';
import { WaitingLog } from './waiting-log.js';
import type { SqliteStorage } from './storage.js';
import { openStorage, type StorageRepair } from './damaged-storage.js';
import { peerSchemeProblem } from './tls.js';

import {
  DEFAULT_PEER_LINGER_MS,
  DEFAULT_TICK_MS,
  type ReplicaServerConfig,
} from './replica-server-config.js';

export { DEFAULT_PEER_LINGER_MS, DEFAULT_TICK_MS, type ReplicaServerConfig };

/**
 * One Creek replica process: drives a ReplicaHost with real time, WebSocket peers and clients and a
 * SQLite disk. Each input is one host step; the records of a turn's steps commit in one transaction
 * (GroupCommit), after which the driver tells the host they are durable and the messages and
 * responses the host held for them leave (the host holds them: host/ready.ts, the durability
 * contract of the pure modules — a promise or accept is never answered before it is on disk; no
 * client hears of an op that a crash could lose). A turn that lets nothing leave holds its writes
 * for the next one that does.
 */
export class ReplicaServer {
  private host!: ReplicaHost;
  /** Execution workers (`workers` > 0), started before the host so that it observes recovery. */
  private pool: WorkerPoolExecutor | null = null;
  private storage!: SqliteStorage;
  /** Its data directory was damaged when it started, and set aside (openStorage); else null. */
  private storageRepair: StorageRepair | null = null;
  private readonly mesh: PeerMesh;
  private readonly clients: ClientEndpoint;
  /** What the replica does, for viewers (the visualizer) on /events. */
  private readonly events: EventStream;
  /** Says in the log what the replica waits for when it cannot make progress (waiting-log.ts). */
  private readonly waitingLog: WaitingLog;
  private readonly metrics: ReplicaMetricsExporter;
  private readonly guard: ConnectionGuard;
  private http: Server | null = null;
  private readonly sockets: WebSocketServer[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private paused = false;
  /** Invariants its finalized state broke since the process started (`checkInvariants`). */
  private invariantsBroken = 0;
  private stopping = false;
  /** `stop` closed the sockets and the disk: no turn runs any more. */
  private closed = false;
  /** The disk writes of the turn, and of earlier turns that let nothing leave (group-commit.ts). */
  private readonly writes = new GroupCommit((records) => {
    this.storage.append(records);
    this.durable += records.length;
    this.consume(this.host.step({ kind: 'durable', upTo: this.durable }));
    // Committed outside a turn (the hold's deadline): what the host released leaves now.
    if (!this.flushing) this.scheduleFlush();
  });
  /** Host records committed so far (Ready.firstSeq counts them from 1). */
  private durable = 0;
  /** Answers the host released this turn, delivered to clients at its end (`flush`). */
  private readonly answers: Response[] = [];
  private readonly outbox: PeerOutbox;
  private flushScheduled = false;
  /** Inside `flush`: what the turn's commits release leaves with the turn. */
  private flushing = false;
  /**
   * `seenVector` per session while a flush answers clients: the replica does not change then, and
   * a turn may answer dozens of one session's ops (null outside a flush: nothing is cached).
   */
  private seenThisTurn: Map<string | null, number[]> | null = null;
  /**
   * The replica ids `seenVector` covers, worked out again only when the members change (Paxos
   * keeps its list of members as long as they do not).
   */
  /** The members' client URLs, as welcomes list them: replaced when the members change. */
  private members: ReplicaUrls;
  private seenIds: {
    readonly members: readonly number[];
    readonly ids: readonly number[];
  } | null = null;
  /** When the replica started, on the monotonic clock: uptime never runs backwards with the wall clock. */
  private readonly startedAt = performance.now();
  private haltWith: (reason: string) => void = () => undefined;
  /**
   * Settles, with the reason, if the replica stops for good (Ready.halted: it found that it
   * lost durable state). It then refuses clients and ignores peers; its owner should `stop()` it.
   */
  readonly halted = new Promise<string>((resolve) => {
    this.haltWith = resolve;
  });
  private removedWith: (reason: string) => void = () => undefined;
  /**
   * Settles, with the reason, once a membership change removed this replica: it takes part in
   * nothing any more; its owner should `stop()` it (`creek start` exits 0).
   */
  readonly removed = new Promise<string>((resolve) => {
    this.removedWith = resolve;
  });
  /** `GET /members` and `POST /admin/members/*`. */
  private readonly membership: MembershipAdmin;
  /** Its HTTP endpoints: probes, status, metrics, members, admin actions (replica-http.ts). */
  private readonly endpoints: ReplicaHttp;

  constructor(
    private readonly config: ReplicaServerConfig,
    private readonly log: Logger,
  ) {
    const schemes = peerSchemeProblem(config.tls ?? null, config.id, config.peers);
    if (schemes !== null) throw new Error(schemes);
    this.guard = new ConnectionGuard(edgeLimits(config.edgeLimits), log);
    this.waitingLog = new WaitingLog(log);
    this.mesh = new PeerMesh(
      config.id,
      config.peers,
      config.secret,
      (from, msg) => this.onPeer(from, msg),
      log,
      this.guard,
      config.tls?.ca ?? null,
      config.peerVersions === undefined ? {} : { speaks: config.peerVersions },
    );
    this.members = clientUrls(config.peers.map((p) => ({ id: p.id, address: p.url })));
    this.clients = new ClientEndpoint(
      config.id,
      () => config.app.names().filter((n) => n !== NOOP_OP && n !== CLOSE_OP),
      config.tokens,
      (request) => this.call({ kind: 'invoke', now: Date.now(), request }),
      () => this.unavailable(),
      log,
      (level, seconds) => this.metrics.latency.observe({ level }, seconds),
      (session) => this.seenVector(session),
      (replica, eventNo) => this.host.clients.heldForClient({ replica, eventNo }),
      () => config.app.names().filter((n) => config.app.lookup(n)?.readOnly === true),
      () => this.host.takeChangedKeys(),
      config.userTokens === undefined || config.userTokens === null
        ? null
        : {
            verifier: config.userTokens,
            access: (op, user, args) => checkAccess(config.app, op, user, args),
          },
      () => this.members,
      config.clientVersions,
      contextMac(config.secret),
      (seen) => this.host.clients.readsSee(seen),
    );
    this.outbox = new PeerOutbox(
      (to, msgs) => this.mesh.sendMany(to, msgs),
      config.peerLingerMs ?? DEFAULT_PEER_LINGER_MS,
    );
    this.events = new EventStream(
      {
        replica: config.id,
        cluster: config.clusterId ?? null,
        replicas: config.peers.map((p) => p.id),
        executionCounts: () => this.host.executionCounts(),
        paxos: () => {
          const s = this.host.status();
          return {
            role: s.role,
            ballot: s.ballot,
            leader: s.leader,
            quorate: s.quorate,
            decidedBelow: s.paxos.decidedBelow,
            proposed: s.paxos.instancesProposed,
            decided: s.paxos.decided,
            elections: s.paxos.elections,
          };
        },
        links: () =>
          Object.entries(this.mesh.states()).map(([id, state]) => ({
            id: Number(id),
            state,
            blockedIn: this.mesh.blocked.in.has(Number(id)),
            blockedOut: this.mesh.blocked.out.has(Number(id)),
            delayMs: this.mesh.delays.get(Number(id)) ?? 0,
          })),
        status: () => {
          const s = this.host.status();
          return {
            committed: s.committed,
            tentative: s.tentative,
            digest: s.digest,
            paused: this.paused,
            learning: s.learning,
            halted: s.halted,
            behind: s.catchUp.behind,
            holding: s.catchUp.holding,
            counts: speculationCountsOf(s.metrics),
            byOp: Object.fromEntries(
              Object.entries(s.metrics.byOp)
                .sort(([, a], [, b]) => b.speculated - a.speculated)
                .slice(0, STATUS_EVENT_OPS),
            ),
          };
        },
      },
      config.adminToken,
      log,
      {
        eventsPerSecond: this.guard.limits.viewerEventsPerSecond,
        bufferBytes: this.guard.limits.viewerBufferBytes,
      },
    );
    this.membership = new MembershipAdmin(
      () => this.host,
      (request) => this.call({ kind: 'reconfigure', now: Date.now(), request }),
      (config.tls ?? null) !== null,
    );
    this.metrics = new ReplicaMetricsExporter(() => this.status(), config.id);
    this.endpoints = new ReplicaHttp(
      config,
      {
        condition: () => this.condition(),
        status: () => this.status(),
        peerIds: () => this.host.peerIds(),
        membership: this.membership,
        metrics: this.metrics,
        mesh: this.mesh,
        paused: () => this.paused,
        pause: (paused) => {
          this.paused = paused;
        },
        backup: () => {
          const why = this.host.halted ?? notReady(this.condition());
          return why === null ? this.host.backup() : `no backup from this replica now: ${why}`;
        },
      },
      log,
    );
    registerEdgeMetrics(this.metrics.registry, this.guard, [
      this.clients.edge,
      this.mesh.edge,
      this.events.edge,
    ]);
  }

  async start(): Promise<{ url: string }> {
    const c = this.config;
    const opened = openStorage(c.dataDir, { replicaId: c.id, fsync: c.fsync }, this.log);
    this.storage = opened.storage;
    this.storageRepair = opened.repair;
    const records = opened.records;
    this.pool = await startWorkers(c.workers ?? 0, c.appPath, c.app, this.log, (result) =>
      this.call({ kind: 'executed', result }),
    );
    const workers = this.pool?.choice().workers ?? 0;
    const options = {
      id: c.id,
      replicas: c.peers.map((p) => p.id),
      members: c.peers.map((p) => ({ id: p.id, address: p.url })),
      ...(c.join === true ? { join: true } : {}),
      replica: {
        app: c.app,
        noopIntervalMs: c.noopIntervalMs ?? 100,
        speculative: c.speculative ?? true,
        // Without speculation, the SMR baseline: every update ordered on arrival.
        orderOnArrival: true,
        // Executions run once per turn, after every message the turn brought (see flush).
        deferExecution: true,
        ...(c.checkInvariants === true ? { checkInvariants: true } : {}),
        // As many executions at once as the workers hold (the frontier's included).
        ...(this.pool === null
          ? {}
          : { executionSlots: workers * this.pool.pipeline, storeObserver: this.pool }),
      },
      // Real processes stall (GC, a busy core): a 60 ms election timeout, fine in the simulator,
      // made a loaded machine run needless elections; so even on a LAN the runtime's are longer
      // (geo/timers.ts), and across regions `creek start --network wan` sets them.
      paxos: {
        ...(c.paxosTimers ?? TIMERS.lan),
        ...(c.quorumReads === true ? { quorumReads: true } : {}),
      },
      executor: this.pool ?? new InlineExecutor(c.app),
      // Closes of dead origins only once every member applies them (a rolling upgrade).
      closesAllowed: () => this.mesh.clusterAllows(CLOSE_SINCE),
      ...(c.checkpointEvery === undefined ? {} : { checkpointEvery: c.checkpointEvery }),
      ...(c.transferPacing === undefined ? {} : { transferPacing: c.transferPacing }),
    };
    // The operator's preferred leader (--preferred-leader), beside the timers above.
    const hostOptions =
      c.preferredLeader === undefined
        ? options
        : { ...options, paxos: { ...options.paxos, preferredLeader: c.preferredLeader } };
    this.host =
      records.length === 0
        ? new ReplicaHost(hostOptions)
        : new ReplicaHost(hostOptions, { records, nowMs: Date.now() });
    this.call({ kind: 'start' });
    this.log.info(
      { records: records.length, dataDir: c.dataDir },
      records.length === 0 ? 'new replica' : 'recovered from disk',
    );

    const peerWss = new WebSocketServer({ noServer: true, maxPayload: 16 << 20 });
    // Above the protocol limit, so that an oversized frame gets an error frame; far beyond it the
    // connection is closed instead of buffering it.
    const clientWss = new WebSocketServer({ noServer: true, maxPayload: 4 * MAX_FRAME_BYTES });
    // Events are small; a viewer sends one frame (watch), which the guard holds to its limits.
    const eventsWss = new WebSocketServer({ noServer: true, maxPayload: 64 << 10 });
    this.mesh.attach(peerWss);
    this.clients.attach(clientWss, this.guard);
    this.events.attach(eventsWss, this.guard);
    this.sockets.push(peerWss, clientWss, eventsWss);
    const tls = c.tls ?? null;
    const onHttp = (req: IncomingMessage, res: ServerResponse): void =>
      this.endpoints.handle(req, res);
    // With TLS, the one port serves https:// and wss:// (clients, peers, probes, metrics alike).
    this.http =
      tls === null
        ? createServer(this.guard.httpServerOptions(), onHttp)
        : createTlsServer(
            { ...this.guard.httpServerOptions(), cert: tls.cert, key: tls.key },
            onHttp,
          );
    this.http.on('upgrade', (req, socket, head) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const wss =
        path === '/peer'
          ? peerWss
          : path === '/client'
            ? clientWss
            : path === EVENTS_PATH
              ? eventsWss
              : null;
      if (wss === null) {
        refuseUpgrade(
          socket,
          '404 Not Found',
          `no WebSocket endpoint at ${JSON.stringify(path.slice(0, 100))}: clients connect to /client (e.g. ws://host:7100/client), replicas to /peer, viewers to ${EVENTS_PATH}`,
        );
        return;
      }
      const edge =
        wss === peerWss ? this.mesh.edge : wss === clientWss ? this.clients.edge : this.events.edge;
      // Over the cap of unauthenticated connections: 503 before the handshake (ConnectionGuard).
      if (!this.guard.admit(req, socket, edge)) return;
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    });
    await new Promise<void>((resolve, reject) => {
      this.http!.once('error', reject);
      this.http!.listen(c.port, c.host, () => resolve());
    });
    this.mesh.start();
    this.ticker = setInterval(() => {
      // A paused replica takes no step, but its event stream goes on and says it is paused.
      if (!this.paused) {
        this.call({ kind: 'tick', now: Date.now() });
        this.waitingLog.observe(this.host.waiting, Date.now());
        this.clients.afterTurn();
      }
      this.events.tick(Date.now());
    }, this.config.tickMs ?? DEFAULT_TICK_MS);
    return { url: `${tls === null ? 'ws' : 'wss'}://${c.host}:${c.port}` };
  }

  /**
   * One host step. What it writes waits for the end of this turn of the event loop: then all
   * writes of the turn (and those earlier quiet turns held) commit in one transaction
   * (GroupCommit), and only then does the host release the turn's responses and messages (a frame
   * per peer, see PeerOutbox; two for a peer that gets a forward or a 2a before the turn's
   * executions and something from them after, see `flush`).
   */
  private call(input: HostInput): void {
    this.consume(this.host.step(input));
    // A strong read waits for a no-op that the next tick would cast: tick now, not up to tickMs
    // later.
    if (this.host.tickWanted) this.consume(this.host.step({ kind: 'tick', now: Date.now() }));
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (
      !this.closed &&
      !this.flushScheduled &&
      (this.host.executionDue ||
        this.writes.pending ||
        this.outbox.pending ||
        this.answers.length > 0)
    ) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * What a host step asks for: its records to the turn's transaction; the messages and answers it
   * released (their records are durable) to the outbox and the turn's answers; its events to the
   * log and viewers.
   */
  private consume(ready: Ready): void {
    for (const r of ready.records) this.writes.add(r);
    for (const o of ready.outputs) {
      if (o.kind === 'send') {
        this.outbox.add(o.to, o.msg, o.lazy);
        this.events.sent(o.to, o.msg);
      } else {
        this.answers.push(o.response);
        this.events.response(o.response);
      }
    }
    for (const e of ready.events) this.observe(e);
    if (ready.halted !== null) {
      this.log.fatal({ reason: ready.halted }, 'replica halted');
      this.haltWith(ready.halted);
    }
  }

  private observe(e: HostEvent): void {
    if (e.kind === 'op') this.events.op(e.req, e.local);
    else if (e.kind === 'commit') this.events.commit(e.ids, e.position);
    else if (e.kind === 'checkpoint') this.events.checkpoint(e.count);
    else if (e.kind === 'identity') this.log.info({ origin: e.origin }, 'replica identity');
    else if (e.kind === 'peers') this.onPeersChanged(e.peers);
    else if (e.kind === 'reconfigured') this.onReconfigured(e.outcome);
    else if (e.kind === 'removed') this.onRemoved(e.reason);
    else if (e.kind === 'divergence') this.onDivergence(e.report);
    else if (e.kind === 'invariantBroken') {
      this.invariantsBroken++;
      const { invariant, position, op, id, error } = e.violation;
      this.log.error(
        { invariant, position, op, id, error },
        `invariant '${invariant}' broken by the finalized state after ${op} at committed position ${position}`,
      );
    } else
      this.log.info(
        { finalized: e.finalized, keys: e.keys },
        'state transfer installed: rebuilt from a peer',
      );
  }

  private flush(): void {
    if (!this.flushScheduled) return; // already flushed by stop()
    this.flushScheduled = false;
    this.flushing = true;
    try {
      this.flushTurn();
    } finally {
      this.flushing = false;
    }
  }

  private flushTurn(): void {
    // A step that starts a round others wait on — a strong op's forward to the leader, the
    // leader's 2a — leaves as soon as what the turn's inputs wrote is durable, ahead of this turn's
    // executions: every stable answer waits for the round, while a strong op's tentative
    // execution serves only its preliminary view (invoke with both levels), one send later.
    // Measured on the path of a sequential strong put at a follower (fsync off): 30–70 µs less at
    // the origin before its forward, 30–70 µs less at the leader before its 2a.
    if (this.host.holdsMessage(startsRoundSend) || this.outbox.hasFirst(startsRound)) {
      this.writes.commit();
      this.outbox.flushFirst(startsRound);
    }
    // The turn's inputs are all in: validate and execute once for all of them. What the
    // executions answer and send goes out with the rest of the turn below.
    this.consume(this.host.step({ kind: 'run' }));
    // Before anything of the turn leaves; a turn that lets nothing leave may hold its writes.
    this.writes.endTurn(this.somethingLeaves());
    // Clients first: a weak op's answer is all its caller waits for, while peers' messages are a
    // step of protocols that take several anyway.
    this.seenThisTurn = new Map();
    try {
      for (const r of this.answers.splice(0)) this.clients.respond(r);
      this.clients.afterTurn();
    } finally {
      this.seenThisTurn = null;
    }
    this.outbox.flushTurn();
    this.events.flushTurn();
  }

  /**
   * Something of this turn leaves the process once its writes commit: a message or answer the host
   * holds for them, one it released already, a client frame or an event for a viewer. A new kind
   * of output must be added here, or it could leave before the writes that quiet turns held are on
   * disk.
   */
  private somethingLeaves(): boolean {
    return (
      this.host.holding > 0 ||
      this.answers.length > 0 ||
      this.outbox.pending ||
      this.events.watching ||
      this.clients.sendsThisTurn()
    );
  }

  /** The members changed: the mesh dials the new ones and drops those that left. */
  private onPeersChanged(peers: readonly Member[]): void {
    this.mesh.setPeers(peers.map((m) => ({ id: m.id, url: m.address })));
    // Clients hear of it at the end of the turn (ClientConnections tells the welcomed ones).
    this.members = clientUrls(peers);
    this.log.info({ peers: peers.map((m) => m.id) }, 'cluster members changed');
  }

  private onReconfigured(outcome: ReconfigOutcome): void {
    if (outcome.applied)
      this.log.info(
        {
          members: outcome.entry.members.map((m) => m.id),
          from: outcome.entry.from,
          decidedAt: outcome.decidedAt,
        },
        'membership change decided',
      );
    else this.log.warn({ reason: outcome.reason }, 'membership change decided with no effect');
  }

  /**
   * The replicas' finalized states differ (host/divergence.ts): logged with the op that made them
   * differ. A replica left without a majority's state turns its clients away, so that their
   * sessions resubmit what they had in flight at another replica (applied once).
   */
  private onDivergence(report: DivergenceReport | null): void {
    if (report === null) {
      this.log.warn('divergence over: every member agrees with this replica again');
      return;
    }
    const { position, exact, op, id, side, detectedAt, digests, reason } = report;
    this.log.error(
      { position, exact, op, id, side, detectedAt, digests },
      `replicas diverged: op ${op ?? '(unknown)'} ${id ?? ''} — ${reason}`,
    );
    if (!report.servesStable) this.clients.turnAway(notReady(this.condition()) ?? reason);
  }

  private onRemoved(reason: string): void {
    this.log.warn({ reason }, 'removed from the cluster');
    this.removedWith(reason);
  }

  /** What probes and clients are told (see probes.ts). */
  private condition(): ReplicaCondition {
    return {
      halted: this.host.halted,
      stopping: this.stopping,
      paused: this.paused,
      learning: this.host.learningFromPeers,
      rebuilding: this.host.rebuilding,
      leaving: this.host.leaving,
      diverged: this.host.diverged,
      waiting: this.host.waiting,
    };
  }

  /** Why this replica takes no client ops now, or null when it does. */
  private unavailable(): string | null {
    return notReady(this.condition());
  }

  /**
   * Per origin, how many of its ops this replica has without a gap (client sessions; the first
   * incarnation of every configured replica and member, and later ones it holds ops of); for a
   * session, this replica's own ops only up to the last one the session cannot resubmit itself
   * (ReplicaHost.clients.seenVector). Cached for the turn.
   */
  private seenVector(session: string | null): number[] {
    const cached = this.seenThisTurn?.get(session);
    if (cached !== undefined) return cached;
    const members = this.host.peerIds();
    if (this.seenIds?.members !== members) {
      const ids = [...new Set([...this.config.peers.map((p) => p.id), ...members])];
      this.seenIds = { members, ids };
    }
    const out = this.host.clients.seenVector(this.seenIds.ids, session);
    this.seenThisTurn?.set(session, out);
    return out;
  }

  private onPeer(from: number, msg: PeerMessage): void {
    if (this.paused) return;
    this.call({ kind: 'receive', from, message: msg });
  }

  /**
   * `/status`: the host's account of itself (HostStatus, the same the simulator shows) and what
   * only this process knows: its links, disk, memory, CPU, clients and viewers.
   */
  status(): ReplicaStatus {
    const h = this.host.status();
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    return {
      ...h,
      peers: this.mesh.states(),
      protocol: this.mesh.protocol(),
      paused: this.paused,
      uptimeMs: Math.round(performance.now() - this.startedAt),
      speculative: this.config.speculative ?? true,
      cpuMicros: cpu.user + cpu.system,
      rss: memory.rss,
      execution: {
        ...h.execution,
        workers: this.pool === null ? 0 : this.pool.choice().workers,
        onWorkers: this.pool?.dispatched ?? 0,
        staleMirrorReads: this.pool?.staleReads ?? 0,
        ...(this.pool === null ? {} : { workerChoice: this.pool.choice() }),
      },
      memory: { ...h.memory, heapUsed: memory.heapUsed },
      storage: {
        ...this.storage.stats(),
        ...(this.storageRepair === null ? {} : { repaired: this.storageRepair }),
      },
      network: this.mesh.counters,
      clients: this.clients.counters,
      events: { watching: this.events.size, ...this.events.counters },
      invariants: {
        checked: this.config.checkInvariants === true,
        broken: this.invariantsBroken,
      },
    };
  }

  /**
   * Stops taking new invocations (clients get `unavailable`), lets the ops in flight finish for up
   * to `drainMs` while the replica keeps running, then closes sockets and the database.
   */
  async stop(drainMs = 5000): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + drainMs;
    while (this.clients.pending() > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    if (this.clients.pending() > 0)
      this.log.warn({ pending: this.clients.pending() }, 'stopping with ops still in flight');
    if (this.ticker !== null) clearInterval(this.ticker);
    this.mesh.close();
    this.events.close();
    // Upgraded WebSocket connections are not the HTTP server's to close.
    for (const wss of this.sockets) {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    }
    await new Promise<void>((resolve) => {
      if (this.http === null) return resolve();
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
    if (this.flushScheduled) this.flush();
    // From here nothing is scheduled: what the last commit releases goes out with the outbox's
    // release below, or not at all (answers to clients whose sockets are closed).
    this.closed = true;
    this.writes.commit();
    this.outbox.release();
    this.storage.close();
    await this.pool?.close();
  }
}

/** A peer message that starts a round of ordering others wait on: a forward, a 2a. */
function startsRound(m: PeerMessage): boolean {
  return m.kind === 'paxos' && (m.msg.type === 'forward' || m.msg.type === 'accept');
}

/**
 * A message the host holds that starts a round (`startsRound`) and may not wait (not lazy): worth
 * an early commit. A lazy copy of a 2a never comes alone: its instance's fast quorum gets the same
 * 2a, not lazy (MultiPaxos.fastQuorum), so this finds every turn `outbox.hasFirst` would.
 */
function startsRoundSend(s: PeerSend): boolean {
  return !s.lazy && startsRound(s.msg);
}
