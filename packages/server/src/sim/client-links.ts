import type { ClientSession } from '@creek/client/session';
import type { JsonValue, User } from '@creek/app';
import { decodeClientFrame, encodeFrame, type ClientFrame } from '@creek/protocol';
import type { Outcome } from '@creek/replica/core/types.js';
import type { ConnectionOutput } from '@creek/replica/host/client-connections.js';
import type { SimEndpoint, SimProcess } from './process.js';
import type { StableOwnOps } from './own-ops-checker.js';
import type { Prng } from './prng.js';
import type { RunState } from './run-state.js';
import { verifySimToken } from './sim-tokens.js';

/** How long a connection attempt waits for a cut link to heal before it fails (TCP's SYN retries). */
const CONNECT_GIVE_UP_MS = 500;

/** A client of the run as its links see it: its session, and where it sits. */
export interface LinkClient {
  /** The session's id, for messages. */
  readonly id: string;
  readonly session: ClientSession;
  /** The replica it sits beside: a partition cuts its links as it cuts that replica's. */
  readonly home: number;
  /** Who signs in with it (SimConfig.userTokens): whom its ops must run as. */
  readonly user?: User | undefined;
}

/** One connection between a client session and a replica's endpoint. */
interface Link {
  /** Its name at the endpoint (ClientConnections' connection), unique in the run. */
  readonly id: number;
  readonly client: LinkClient;
  /** The session's number for it (SessionOutput 'connect'). */
  readonly connection: number;
  readonly replica: SimProcess;
  /** The endpoint it was opened to (the replica's then), once the handshake got there. */
  endpoint: SimEndpoint | null;
  /** The handshake got to the replica, which took the connection. */
  accepted: boolean;
  /** Nothing more goes over it: closed by either side, reset, or heard closed by the client. */
  closed: boolean;
  /** The client heard it close (or its attempt fail). */
  heardClosed: boolean;
  readonly toReplica: Pipe;
  readonly toClient: Pipe;
  /** Its live queries by watch id, as their `watch` frames named them (for the checkers). */
  readonly watches: Map<string, { readonly op: string; readonly args: JsonValue }>;
}

/**
 * One direction of a link: what is sent arrives in order, each after a delay drawn for it (no
 * earlier than what was sent before it), and waits while the link is cut, as TCP retransmits
 * until the partition heals.
 */
class Pipe {
  private readonly items: { readonly readyAt: number; readonly deliver: () => void }[] = [];
  private lastReadyAt = 0;
  private pumpAt: number | null = null;

  constructor(
    private readonly run: RunState,
    private readonly cut: () => boolean,
  ) {}

  get empty(): boolean {
    return this.items.length === 0;
  }

  push(delay: number, deliver: () => void): void {
    const readyAt = Math.max(this.lastReadyAt, this.run.now + delay);
    this.lastReadyAt = readyAt;
    this.items.push({ readyAt, deliver });
    this.schedule(readyAt);
  }

  /** Drops what is on its way (the connection is gone). */
  clear(): void {
    this.items.length = 0;
  }

  private schedule(at: number): void {
    if (this.pumpAt !== null && this.pumpAt <= at) return;
    this.pumpAt = at;
    this.run.events.push(at, () => {
      if (this.pumpAt !== at) return; // an earlier pump took over
      this.pumpAt = null;
      this.pump();
    });
  }

  private pump(): void {
    while (this.items.length > 0 && this.items[0]!.readyAt <= this.run.now) {
      if (this.cut()) return this.schedule(this.run.now + this.run.params.network.retransmitMs);
      this.items.shift()!.deliver();
    }
    if (this.items.length > 0) this.schedule(this.items[0]!.readyAt);
  }
}

/**
 * The simulated connections between the clients' sessions and the replicas' endpoints
 * (SimConfig.clients 'sdk'), as WebSockets over TCP: frames arrive in order, each after a delay
 * drawn from the run's network delays, and are held while the network cuts the link (a client
 * sits beside its home replica, so a partition cuts its links as that replica's); a connection to
 * a replica that is down is refused, one across a cut that does not heal in time fails; a crash
 * closes the replica's connections (the clients hear it after what was on its way); a reset
 * closes one under both sides. Frames travel encoded, and the replica decodes them, as on the wire.
 */
export class SimClientLinks {
  private readonly links = new Map<number, Link>();
  /** By client, its links by the session's connection numbers. */
  private readonly byClient = new Map<LinkClient, Map<number, Link>>();
  private nextId = 1;
  /**
   * The invoke the endpoint is handling now: when it was sent (Invocation.sentAt) and by whom, or
   * null.
   */
  delivering: { readonly sentAt: number; readonly client: LinkClient } | null = null;
  /** Frames an endpoint counted as breaking the protocol (a client session never should). */
  readonly violations: string[] = [];
  /** What stable live-query results said of their session's own ops (own-ops-checker.ts). */
  readonly stableOwnOps: StableOwnOps[] = [];
  /** Connections opened at an endpoint, and links reset. */
  opened = 0;
  resets = 0;

  constructor(
    private readonly run: RunState,
    /** The links' delays. */
    private readonly prng: Prng,
    /** Whether the network cuts the way from replica `from` to replica `to` now. */
    private readonly cut: (from: number, to: number) => boolean,
    /** A stable result `p` pushes to a live query, with the committed position it read. */
    private readonly stablePush: (
      p: SimProcess,
      watch: { readonly op: string; readonly args: JsonValue; readonly outcome: Outcome },
      position: number,
    ) => void,
  ) {
    this.verifyPrng = run.prngs.named('token-verify');
  }

  /** How long the replicas' drivers take to verify a token. */
  private readonly verifyPrng: Prng;

  private delay(): number {
    const { minDelayMs, maxDelayMs } = this.run.params.network;
    return this.prng.float(minDelayMs, maxDelayMs);
  }

  /** Whether the network cuts the way from replica `from` to replica `to`. */
  private blocked(from: number, to: number): boolean {
    return from !== to && this.cut(from, to);
  }

  /** The session of `client` opens connection `connection` to `replica`. */
  connect(client: LinkClient, connection: number, replica: SimProcess): void {
    const id = this.nextId++;
    const link: Link = {
      id,
      client,
      connection,
      replica,
      endpoint: null,
      accepted: false,
      closed: false,
      heardClosed: false,
      toReplica: new Pipe(this.run, () => this.blocked(client.home, replica.id)),
      toClient: new Pipe(this.run, () => this.blocked(replica.id, client.home)),
      watches: new Map(),
    };
    this.links.set(id, link);
    let mine = this.byClient.get(client);
    if (mine === undefined) this.byClient.set(client, (mine = new Map()));
    mine.set(connection, link);
    link.toReplica.push(this.delay(), () => this.handshake(link));
    // A cut that does not heal in time: the attempt fails, as a connect does after its retries.
    this.run.events.push(this.run.now + CONNECT_GIVE_UP_MS, () => {
      if (!link.accepted) this.closeAtClient(link);
    });
  }

  private handshake(link: Link): void {
    if (link.closed) return;
    const p = link.replica;
    const endpoint = p.up ? p.endpoint : null;
    if (endpoint === null) {
      // Nobody listens: refused.
      link.toClient.push(this.delay(), () => this.closeAtClient(link));
      return;
    }
    link.endpoint = endpoint;
    link.accepted = true;
    this.opened++;
    endpoint.connections.open(link.id);
    link.toClient.push(this.delay(), () => {
      if (!link.closed) link.client.session.connectionOpened(link.connection);
    });
  }

  /** The session sends `frame` on its connection `connection`. */
  send(client: LinkClient, connection: number, frame: ClientFrame): void {
    const link = this.byClient.get(client)?.get(connection);
    if (link === undefined || link.closed) return;
    if (frame.t === 'watch')
      link.watches.set(frame.watchId, { op: frame.op, args: frame.args as JsonValue });
    const data = encodeFrame(frame);
    const sentAt = this.run.now;
    link.toReplica.push(this.delay(), () => {
      const endpoint = this.live(link);
      if (endpoint === null) return;
      const decoded = decodeClientFrame(data);
      this.delivering = { sentAt, client: link.client };
      try {
        if (!decoded.ok)
          endpoint.connections.badFrame(link.id, decoded.code, decoded.message, decoded.opId);
        else endpoint.connections.frame(link.id, decoded.frame);
      } finally {
        this.delivering = null;
      }
    });
  }

  /** The session closes its connection `connection`. */
  drop(client: LinkClient, connection: number): void {
    const link = this.byClient.get(client)?.get(connection);
    if (link === undefined || link.closed) return;
    link.closed = true;
    link.toClient.clear();
    this.forget(link);
    // The replica hears the close after what was on its way to it.
    link.toReplica.push(this.delay(), () => {
      const endpoint = link.endpoint;
      if (endpoint !== null && link.replica.endpoint === endpoint)
        endpoint.connections.closed(link.id);
    });
  }

  /** What the endpoint of `p` does for connection `id` (ClientConnectionsOptions.out). */
  fromReplica(p: SimProcess, id: number, o: ConnectionOutput): void {
    const link = this.links.get(id);
    if (link === undefined) return;
    switch (o.t) {
      case 'frame': {
        if (link.closed) return;
        const f = o.frame;
        if (f.t === 'watched' && f.level === 'stable' && f.position !== undefined) {
          const w = link.watches.get(f.watchId);
          if (w !== undefined)
            this.stablePush(p, { ...w, outcome: f.outcome as Outcome }, f.position);
          if (f.own !== undefined)
            this.stableOwnOps.push({
              session: link.client.id,
              replica: p.id,
              at: this.run.now,
              position: f.position,
              own: { upTo: f.own.upTo, ...(f.own.missing ? { missing: f.own.missing } : {}) },
            });
        }
        const data = encodeFrame(f);
        link.toClient.push(this.delay(), () => {
          if (!link.closed) link.client.session.frameReceived(link.connection, data);
        });
        return;
      }
      case 'violation':
        this.violations.push(
          `client link: at ${this.run.now.toFixed(1)} ms replica ${p.id} counted a frame of session ${link.client.id} as ${o.kind}: ${o.detail}`,
        );
        return;
      case 'authenticated':
        return;
      case 'verify': {
        // The driver verifies off the turn, as the runtime's does: the verdict comes a little later.
        const endpoint = link.endpoint;
        this.run.events.push(this.run.now + this.verifyPrng.float(0, 3), () => {
          if (link.closed || endpoint === null || link.replica.endpoint !== endpoint) return;
          endpoint.connections.verified(id, verifySimToken(o.token, this.run.now));
        });
        return;
      }
      case 'refused':
      case 'close': {
        // The replica closes it: gone at its side once the socket closes (after this turn), heard
        // by the client after what was on its way to it.
        const endpoint = link.endpoint;
        link.endpoint = null;
        link.toReplica.clear();
        this.run.events.push(this.run.now, () => endpoint?.connections.closed(id));
        link.toClient.push(this.delay(), () => this.closeAtClient(link));
        return;
      }
    }
  }

  /** Whether some frame is still on its way over an open link. */
  get busy(): boolean {
    for (const link of this.links.values())
      if (!link.closed && (!link.toClient.empty || !link.toReplica.empty)) return true;
    return false;
  }

  /**
   * `p` crashed: its connections are gone at its side, and each client hears the close after
   * what the replica had sent it.
   */
  replicaDown(p: SimProcess): void {
    for (const link of this.links.values()) {
      if (link.replica !== p || link.closed || !link.accepted) continue;
      link.endpoint = null;
      link.toReplica.clear();
      link.toClient.push(this.delay(), () => this.closeAtClient(link));
    }
  }

  /** Resets one open connection under both sides, if `pick` chooses one. */
  reset(pick: (open: readonly number[]) => number | undefined): void {
    const open = [...this.links.values()].filter((l) => !l.closed && this.live(l) !== null);
    const id = pick(open.map((l) => l.id));
    const link = id === undefined ? undefined : this.links.get(id);
    if (link === undefined) return;
    this.resets++;
    this.run.trace(`the link of session ${link.client.id} to replica ${link.replica.id} resets`);
    const endpoint = link.endpoint;
    link.closed = true;
    link.toReplica.clear();
    link.toClient.clear();
    this.run.events.push(this.run.now + this.delay(), () => {
      if (endpoint !== null && link.replica.endpoint === endpoint)
        endpoint.connections.closed(link.id);
    });
    this.run.events.push(this.run.now + this.delay(), () => this.closeAtClient(link));
  }

  /**
   * The client hears its connection close (or its attempt fail): its session moves on (a session
   * ignores the events of a connection it has left).
   */
  private closeAtClient(link: Link): void {
    if (link.heardClosed) return;
    link.heardClosed = true;
    link.closed = true;
    link.toClient.clear();
    this.forget(link);
    link.client.session.connectionClosed(link.connection);
  }

  /** An endpoint to deliver to: the link is open and the replica runs the endpoint it opened. */
  private live(link: Link): SimEndpoint | null {
    const endpoint = link.endpoint;
    if (link.closed || endpoint === null || link.replica.endpoint !== endpoint) return null;
    return endpoint;
  }

  private forget(link: Link): void {
    this.links.delete(link.id);
    const mine = this.byClient.get(link.client);
    if (mine?.get(link.connection) === link) mine.delete(link.connection);
  }
}
