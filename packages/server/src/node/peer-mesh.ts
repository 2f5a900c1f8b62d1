import {
  decodePeerFrame,
  encodeFrame,
  MAX_FRAME_BYTES,
  SPOKEN_PEER_VERSIONS,
  type PeerFrame,
  type PeerVersions,
  type ReplicaStatus,
} from '@creek/protocol';
import type { Logger } from 'pino';
import WebSocket, { type WebSocketServer } from 'ws';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { CLOSE_CODE, type ConnectionGuard } from './connection-guard.js';
import { newViolations, type EdgeEndpoint } from './edge-violations.js';
import { packFrames } from './frame-packing.js';
import { newNonce } from './peer-auth.js';
import {
  authFrame,
  challengeFrame,
  checkAuth,
  readChallenge,
  welcomeFrame,
  welcomeProves,
  type DialerView,
} from './peer-handshake.js';
import { PeerLinkVersions } from './peer-link-versions.js';
import type { PeerAddress } from './peer-address.js';
import { explainTlsError } from './tls.js';
import { peerMessageFromFrame, peerMessageToFrame } from './wire.js';

export type PeerState = 'connecting' | 'connected' | 'down';

/**
 * The replica mesh over WebSocket. Each replica dials every other one and sends on its outbound
 * connection; it receives on the connections others dialed to it, after they passed the HMAC
 * challenge. Outbound connections reconnect with exponential backoff; while one is down, messages
 * to that peer are dropped (gossip anti-entropy and Paxos retransmission recover them), and a
 * per-peer send queue is bounded by the socket's buffered amount. Each link runs at the newest
 * protocol version both ends speak (peer-link-versions.ts), so replicas of two successive releases
 * keep talking while a cluster is upgraded one replica at a time.
 */
export class PeerMesh {
  private readonly outbound = new Map<
    number,
    {
      ws: WebSocket | null;
      state: PeerState;
      backoffMs: number;
      timer: NodeJS.Timeout | null;
      /** The TLS failure last logged for this peer (logged once until the link comes up). */
      tlsComplaint: string | null;
    }
  >();
  private closed = false;
  readonly counters = {
    sent: 0,
    received: 0,
    dropped: 0,
    rejected: 0,
    bytesSent: 0,
    bytesReceived: 0,
    /** The largest frame sent to a peer so far, in bytes (UTF-16 code units of its text). */
    largestFrameSent: 0,
    /** Messages not sent because each alone exceeded the frame limit (frame-packing.ts). */
    oversized: 0,
    /** Per kind, peer connections that broke the protocol or an edge limit (ConnectionGuard). */
    violations: newViolations(),
  };
  /** This endpoint as the connection guard counts it. */
  readonly edge: EdgeEndpoint = { name: 'peer', violations: this.counters.violations };
  /**
   * Drop rules from the admin API: peers whose messages this replica ignores (`in`) and peers it
   * sends nothing to (`out`). A partition blocks both ways; one direction alone makes a replica
   * deaf to a peer, or mute towards it (one-way link failures).
   */
  readonly blocked = { in: new Set<number>(), out: new Set<number>() };
  /** Extra one-way delay (ms) towards a peer, from the admin API. */
  readonly delays = new Map<number, number>();

  /**
   * Every replica id this mesh has known as a peer: a removed one may still dial in (it was
   * down when it was removed) and is told so by the replica (Paxos `retired`), then stops.
   */
  private readonly everKnown = new Set<number>();

  /**
   * Authenticated connections peers dialed to this replica, by peer. Messages travel on the
   * sender's own connection, except to a replica that left the cluster: this one no longer dials
   * it, and tells it it was removed (Paxos `retired`) on the connection it dialed in on, or it
   * would never stop.
   */
  private readonly inbound = new Map<number, WebSocket>();

  constructor(
    private readonly self: number,
    private peers: readonly PeerAddress[],
    private readonly secret: string,
    private readonly onMessage: (from: number, msg: PeerMessage) => void,
    private readonly log: Logger,
    /** Limits before authentication, inbound (attach) and outbound (dial). */
    private readonly guard: ConnectionGuard,
    /** PEM of the CA that peers' wss:// certificates must chain to; null: the system's CAs. */
    private readonly ca: string | null = null,
    /**
     * The protocol versions this replica speaks (default: this build's), and the version that
     * introduced each message kind (default: PEER_MESSAGE_SINCE); tests give their own.
     */
    versions: { speaks?: PeerVersions; since?: ReadonlyMap<string, number> } = {},
  ) {
    this.versions = new PeerLinkVersions(
      self,
      versions.speaks ?? SPOKEN_PEER_VERSIONS,
      () => this.peers.map((p) => p.id),
      log,
      versions.since,
    );
  }

  /** The peers' protocol versions, and the gate of what each link may carry. */
  private readonly versions: PeerLinkVersions;

  private started = false;

  start(): void {
    this.started = true;
    for (const p of this.peers) this.everKnown.add(p.id);
    for (const p of this.peers) this.connect(p);
  }

  private connect(p: PeerAddress): void {
    if (p.id === this.self || this.outbound.has(p.id)) return;
    this.outbound.set(p.id, {
      ws: null,
      state: 'connecting',
      backoffMs: 50,
      timer: null,
      tlsComplaint: null,
    });
    this.dial(p);
  }

  /**
   * The cluster's members changed (a membership change was decided or came into force): dial the
   * new ones, hang up on those that left and refuse them from now on. A peer whose address is not
   * known keeps the one it had.
   */
  setPeers(peers: readonly PeerAddress[]): void {
    const known = new Map(this.peers.map((p) => [p.id, p.url]));
    const next = peers.map((p) => ({
      id: p.id,
      url: p.url === '' ? (known.get(p.id) ?? '') : p.url,
    }));
    this.peers = next;
    const ids = new Set(next.map((p) => p.id));
    for (const id of ids) this.everKnown.add(id);
    for (const [id, e] of [...this.outbound]) {
      if (ids.has(id)) continue;
      this.outbound.delete(id);
      if (e.timer !== null) clearTimeout(e.timer);
      e.ws?.close();
      this.log.info({ peer: id }, 'peer left the cluster: disconnected');
    }
    if (this.started) for (const p of next) if (p.url !== '') this.connect(p);
  }

  private dial(p: PeerAddress): void {
    if (this.closed) return;
    const entry = this.outbound.get(p.id);
    if (entry === undefined) return; // it left the cluster
    entry.state = 'connecting';
    const limits = this.guard.limits;
    const ws = new WebSocket(`${p.url}/peer`, {
      maxPayload: 16 << 20,
      handshakeTimeout: limits.dialHandshakeMs,
      ...(this.ca === null ? {} : { ca: this.ca }),
    });
    entry.ws = ws;
    // Whatever answers on the peer URL must welcome us in time, or the dial is retried: a socket
    // that accepts and then says nothing would otherwise hold this peer 'connecting' for good.
    const welcomeBy = setTimeout(() => {
      this.log.warn({ peer: p.id, url: p.url }, 'peer did not welcome us in time: dialing again');
      ws.terminate();
    }, limits.dialHandshakeMs + limits.helloDeadlineMs).unref();
    // Our challenge to the answering side, sent with our own answer to its challenge.
    const ourNonce = newNonce();
    // What its challenge said of its versions, and the version the link runs at.
    let view: DialerView | null = null;
    let linkAt = 0;
    // Frames from the answering side are decoded (never thrown on), and only a challenge, a
    // welcome or an error frame does anything here.
    ws.on('message', (data) => {
      const decoded = decodePeerFrame(data.toString());
      if (!decoded.ok) return;
      const f = decoded.frame;
      if (f.t === 'challenge') {
        if (view !== null) return;
        view = readChallenge(f);
        const ours = this.versions.ours;
        // Answered even when the versions do not overlap, then closed: the accepting side can
        // then log the refusal too, naming both ranges.
        ws.send(encodeFrame(authFrame(this.secret, this.self, p.id, ours, f, view, ourNonce)));
        const check = this.versions.check(p.id, view.theirs);
        if (check.refused !== null) {
          this.versions.refuse(p.id, check.refused);
          ws.close(CLOSE_CODE.policy);
          return;
        }
        linkAt = check.version;
      } else if (f.t === 'welcome') {
        // The answering side proves the secret too, as replica p.id, and the link's version: until
        // then it is sent nothing, so an impostor on a peer URL learns no op (peer-auth.ts).
        if (
          view === null ||
          !welcomeProves(this.secret, this.self, p.id, ourNonce, view, linkAt, f)
        ) {
          this.counters.rejected++;
          this.log.error(
            { peer: p.id, url: p.url, replica: f.replica },
            `the server at ${p.url} did not prove it is replica ${p.id} of this cluster: check --peers and that every replica has the same cluster secret`,
          );
          ws.close(CLOSE_CODE.policy);
          return;
        }
        clearTimeout(welcomeBy);
        entry.state = 'connected';
        entry.tlsComplaint = null;
        entry.backoffMs = 50;
        this.versions.heardFrom(p.id, view.theirs);
        this.versions.linkUp(p.id, linkAt);
        this.log.info({ peer: p.id, version: linkAt }, 'connected to peer');
      } else if (f.t === 'error') {
        // A refusal of our versions is logged once until the link comes up, not at every dial.
        if (f.code === 'version') this.versions.refuse(p.id, f.message);
        else this.log.error({ peer: p.id, code: f.code }, f.message);
      } else if (entry.state === 'connected' && entry.ws === ws) {
        // Once it proved it is p.id: what it sends on our connection (it was removed from the
        // cluster and tells us so, as it no longer dials us).
        this.deliver(p.id, f);
      }
    });
    const retry = (): void => {
      clearTimeout(welcomeBy);
      if (entry.ws !== ws || this.outbound.get(p.id) !== entry) return;
      entry.ws = null;
      this.versions.linkDown(p.id);
      if (entry.state === 'connected') this.log.warn({ peer: p.id }, 'lost connection to peer');
      entry.state = 'down';
      if (this.closed) return;
      entry.timer = setTimeout(() => this.dial(p), entry.backoffMs);
      entry.backoffMs = Math.min(entry.backoffMs * 2, 2000);
    };
    ws.on('close', retry);
    ws.on('error', (err) => {
      // A peer that is down is normal and retried quietly; a TLS failure is a misconfiguration the
      // operator must hear about, once per peer until the link comes up.
      const why = explainTlsError(err, p);
      if (why !== null && entry.tlsComplaint !== why) {
        entry.tlsComplaint = why;
        this.log.error({ peer: p.id }, why);
      }
      ws.close();
    });
  }

  /** Accepts peers on `/peer` of this replica's server. */
  attach(wss: WebSocketServer): void {
    wss.on('connection', (ws, req) => {
      const nonce = newNonce();
      let from: number | null = null;
      const gate = this.guard.gate(ws, req, this.edge);
      ws.send(encodeFrame(challengeFrame(this.versions.ours, nonce)));
      // See ClientEndpoint.attach: a frame ws refuses closes this connection, not the process.
      ws.on('error', (err) => {
        this.counters.rejected++;
        this.guard.wsError(ws, this.edge, err);
      });
      ws.on('message', (data) => {
        if (!gate.admit(data)) return;
        const text = data.toString();
        this.counters.bytesReceived += text.length;
        const decoded = decodePeerFrame(text);
        if (!decoded.ok) {
          this.counters.rejected++;
          ws.send(encodeFrame({ t: 'error', code: decoded.code, message: decoded.message }));
          // Before authentication only an auth answer is acceptable.
          if (from === null) gate.refuse('badFrame', CLOSE_CODE.policy, decoded.message);
          else gate.record('badFrame', decoded.message);
          return;
        }
        const f: PeerFrame = decoded.frame;
        if (from === null) {
          const auth =
            f.t !== 'auth' ||
            f.from === this.self ||
            !(this.everKnown.has(f.from) || this.peers.some((p) => p.id === f.from))
              ? null
              : checkAuth(this.secret, this.self, this.versions.ours, nonce, f);
          if (f.t !== 'auth' || auth === null) {
            this.counters.rejected++;
            ws.send(
              encodeFrame({
                t: 'error',
                code: 'unauthorized',
                message: 'prove the cluster secret first (HMAC of the challenge)',
              }),
            );
            gate.refuse(
              f.t === 'auth' ? 'auth' : 'outOfOrder',
              CLOSE_CODE.policy,
              f.t === 'auth' ? `failed authentication as replica ${f.from}` : `${f.t} before auth`,
            );
            return;
          }
          gate.pass();
          const check = this.versions.check(f.from, auth.theirs);
          if (check.refused !== null) {
            // It proved the secret: it is told why, as this replica logs it.
            this.versions.refuse(f.from, check.refused);
            ws.send(encodeFrame({ t: 'error', code: 'version', message: check.refused }));
            ws.close(CLOSE_CODE.policy);
            return;
          }
          this.versions.heardFrom(f.from, auth.theirs);
          from = f.from;
          const peer = from;
          this.inbound.set(peer, ws);
          ws.on('close', () => {
            if (this.inbound.get(peer) === ws) this.inbound.delete(peer);
          });
          ws.send(encodeFrame(welcomeFrame(this.secret, this.self, f, auth.ranged, check.version)));
          return;
        }
        this.deliver(from, f);
      });
    });
  }

  /** Hands an authenticated peer's messages to the replica. */
  private deliver(from: number, f: PeerFrame): void {
    if (this.blocked.in.has(from)) return;
    if (f.t === 'batch') {
      for (const inner of f.frames) {
        this.counters.received++;
        this.onMessage(from, peerMessageFromFrame(inner));
      }
    } else if (f.t === 'gossip' || f.t === 'paxos' || f.t === 'transfer' || f.t === 'divergence') {
      this.counters.received++;
      this.onMessage(from, peerMessageFromFrame(f));
    }
  }

  send(to: number, msg: PeerMessage): void {
    this.sendMany(to, [msg]);
  }

  /** Sends messages to one peer in order, as one frame when there are several. */
  sendMany(to: number, all: readonly PeerMessage[]): void {
    if (all.length === 0) return;
    if (to === this.self) {
      // A replica's messages to itself never touch the network.
      queueMicrotask(() => {
        for (const msg of all) this.onMessage(this.self, msg);
      });
      return;
    }
    // A replica that left the cluster is reached on the connection it dialed in on, whose version
    // is not kept: only what every version speaks goes there.
    const msgs = this.versions.sendable(
      this.versions.version(to) ?? this.versions.ours.oldest,
      all,
    );
    this.counters.dropped += all.length - msgs.length;
    if (msgs.length === 0) return;
    const entry = this.outbound.get(to);
    // A replica that left the cluster is reached on the connection it dialed in on, if any.
    const ws = entry === undefined ? this.inbound.get(to) : entry.ws;
    if (
      ws === null ||
      ws === undefined ||
      (entry !== undefined && entry.state !== 'connected') ||
      ws.readyState !== WebSocket.OPEN ||
      this.blocked.out.has(to)
    ) {
      this.counters.dropped += msgs.length;
      return;
    }
    if (ws.bufferedAmount > 8 << 20) {
      // Backpressure: the peer is not keeping up; protocols above retransmit what matters.
      this.counters.dropped += msgs.length;
      return;
    }
    const { frames, oversized } = packFrames(
      msgs.map((m) => this.encode(m)),
      MAX_FRAME_BYTES,
    );
    if (oversized > 0) {
      this.counters.oversized += oversized;
      this.counters.dropped += oversized;
    }
    this.counters.sent += msgs.length - oversized;
    const delay = this.delays.get(to) ?? 0;
    for (const text of frames) {
      this.counters.bytesSent += text.length;
      if (text.length > this.counters.largestFrameSent)
        this.counters.largestFrameSent = text.length;
      if (delay > 0) setTimeout(() => ws.readyState === WebSocket.OPEN && ws.send(text), delay);
      else ws.send(text);
    }
  }

  /**
   * A message's frame, encoded once however many peers it goes to: the layers broadcast one
   * message object to every peer (a push, an accept), and JSON encoding was a large part of an
   * origin replica's time. Keyed by the layer's message, which is never changed once sent.
   */
  private encode(m: PeerMessage): string {
    let text = this.encoded.get(m.msg);
    if (text === undefined) {
      text = encodeFrame(peerMessageToFrame(m));
      this.encoded.set(m.msg, text);
    }
    return text;
  }

  private readonly encoded = new WeakMap<object, string>();

  /** The peers' protocol versions and the cluster version (/status `protocol`). */
  protocol(): ReplicaStatus['protocol'] {
    return this.versions.status(this.peers.filter((p) => p.id !== this.self).map((p) => p.id));
  }

  /**
   * Whether every member speaks `since`, the version that introduced a new kind of log entry: the
   * gate such an entry passes before it is proposed (peer-versions.ts in @creek/protocol).
   */
  clusterAllows(since: number): boolean {
    return this.versions.clusterAllows(since);
  }

  states(): Record<number, PeerState> {
    const out: Record<number, PeerState> = {};
    for (const [id, e] of this.outbound) out[id] = e.state;
    return out;
  }

  close(): void {
    this.closed = true;
    for (const e of this.outbound.values()) {
      if (e.timer !== null) clearTimeout(e.timer);
      e.ws?.close();
    }
  }
}
