import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import WebSocket, { type WebSocketServer } from 'ws';
import {
  EVENTS_VERSION,
  MAX_FRAME_BYTES,
  MAX_VIEWERS,
  WatchSchema,
  type EventsFrame,
  type ReplicaEvent,
} from '@creek/protocol';
import { formatOpId, type OpId } from '@creek/replica/core/op-id.js';
import type { Req, Response } from '@creek/replica/core/types.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { tokenMatches } from './bearer.js';
import { CLOSE_CODE, type ConnectionGuard } from './connection-guard.js';
import { newViolations, type EdgeEndpoint } from './edge-violations.js';

type Of<E extends ReplicaEvent['e']> = Extract<ReplicaEvent, { e: E }>;

/** What the stream reads from the replica: polled once per turn (counters) or per tick. */
export interface EventSource {
  readonly replica: number;
  readonly cluster: string | null;
  readonly replicas: readonly number[];
  /** Cumulative counts, of which each turn's difference is sent. */
  executionCounts(): { executions: number; rollbacks: number; reorderingCommits: number };
  paxos(): Omit<Of<'paxos'>, 'e' | 'at'>;
  links(): Of<'links'>['peers'];
  status(): Omit<Of<'status'>, 'e' | 'at'>;
}

/** How much a viewer may be sent: events per second, and bytes its socket may hold unsent. */
export interface ViewerLimits {
  readonly eventsPerSecond: number;
  readonly bufferBytes: number;
}

interface Viewer {
  /** Events it may still be sent (refilled at `eventsPerSecond`, up to a second's worth). */
  budget: number;
  refilledAt: number;
  /** Events it was not sent since it was last told. */
  dropped: number;
}

const STATUS_EVERY_MS = 500;

/** Ops and responses are what sampling drops first: the rest is what a view is built from. */
const SAMPLED_FIRST: ReadonlySet<ReplicaEvent['e']> = new Set(['op', 'response']);

/**
 * The `/events` endpoint (protocol events.ts): each authenticated viewer gets what the replica
 * does, in one frame per event-loop turn that had any. Nothing is built while no viewer watches.
 * Every viewer has a budget of `eventsPerSecond`; while its socket holds more than `bufferBytes`
 * unsent, it is sent nothing. Either way what it missed is counted and reported
 * in a `dropped` event with its next batch, so the replica never waits for a viewer and never
 * buffers more than that much for one.
 */
export class EventStream {
  private readonly viewers = new Map<WebSocket, Viewer>();
  private turn: ReplicaEvent[] = [];
  private gossip = new Map<number, Of<'gossip'>>();
  private lastCounts = { executions: 0, rollbacks: 0, reorderingCommits: 0 };
  private lastPaxos = '';
  private lastLinks = '';
  private lastStatusAt = 0;
  readonly counters = {
    /** Viewers that watched, in all. */
    viewers: 0,
    /** Events built and events dropped, over every viewer. */
    events: 0,
    dropped: 0,
    violations: newViolations(),
  };
  readonly edge: EdgeEndpoint = { name: 'events', violations: this.counters.violations };

  constructor(
    private readonly source: EventSource,
    private readonly adminToken: string | null,
    private readonly log: Logger,
    private readonly limits: ViewerLimits,
  ) {}

  /** Some viewer watches: the replica builds events only then. */
  get watching(): boolean {
    return this.viewers.size > 0;
  }

  /** Viewers watching now. */
  get size(): number {
    return this.viewers.size;
  }

  attach(wss: WebSocketServer, guard: ConnectionGuard): void {
    wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
      const gate = guard.gate(ws, req, this.edge);
      ws.on('error', (err) => guard.wsError(ws, this.edge, err));
      ws.on('message', (data, isBinary) => {
        if (!gate.admit(data)) return;
        if (gate.authenticated) {
          // A viewer only listens: anything it sends after `watch` is a mistake, and ignored.
          gate.record('outOfOrder', 'a frame after watch');
          return;
        }
        const refuse = (kind: 'badFrame' | 'auth', message: string): void => {
          this.send(ws, { t: 'error', message });
          gate.refuse(kind, CLOSE_CODE.policy, message);
        };
        let parsed: unknown;
        try {
          parsed = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString() : String(data));
        } catch {
          return refuse('badFrame', 'the first frame must be JSON: {"t":"watch",...}');
        }
        const watch = WatchSchema.safeParse(parsed);
        if (!watch.success)
          return refuse(
            'badFrame',
            `the first frame must be {"t":"watch","version":${EVENTS_VERSION},"token":"<admin token>"}: ${watch.error.issues[0]?.message ?? 'invalid'}`,
          );
        if (this.adminToken === null || !tokenMatches(watch.data.token, [this.adminToken]))
          return refuse(
            'auth',
            this.adminToken === null
              ? 'this replica has no admin token (--admin-token-file): it streams events to nobody'
              : 'wrong admin token',
          );
        if (watch.data.version !== EVENTS_VERSION)
          return refuse(
            'badFrame',
            `this replica streams events version ${EVENTS_VERSION}, the viewer asked for ${watch.data.version}: upgrade the older side`,
          );
        if (this.viewers.size >= MAX_VIEWERS)
          return refuse('auth', `this replica already streams to ${MAX_VIEWERS} viewers`);
        gate.pass();
        this.counters.viewers++;
        this.send(ws, {
          t: 'hello',
          version: EVENTS_VERSION,
          replica: this.source.replica,
          cluster: this.source.cluster,
          replicas: [...this.source.replicas],
        });
        this.viewers.set(ws, {
          budget: this.limits.eventsPerSecond,
          refilledAt: Date.now(),
          dropped: 0,
        });
        // Where things stand, so the view does not wait for the next change to draw.
        this.lastPaxos = '';
        this.lastLinks = '';
        this.lastStatusAt = 0;
        this.tick(Date.now());
        this.log.info({ viewers: this.viewers.size }, 'a viewer watches the event stream');
      });
      ws.on('close', () => this.viewers.delete(ws));
    });
  }

  // ------------------------------------------------------------ what the replica does

  op(req: Req, local: boolean): void {
    if (!this.watching) return;
    this.turn.push({
      e: 'op',
      at: Date.now(),
      id: formatOpId(req.id),
      op: req.op,
      level: req.strong ? 'strong' : 'weak',
      ts: req.ts,
      origin: local ? 'local' : 'peer',
    });
  }

  response(r: Response): void {
    if (!this.watching) return;
    this.turn.push({
      e: 'response',
      at: Date.now(),
      id: r.id === null ? null : formatOpId(r.id),
      level: r.level === 'tentative' ? 'tentative' : 'stable',
      ok: r.level !== 'failed' && r.outcome.ok,
    });
  }

  commit(ids: readonly OpId[], position: number): void {
    if (!this.watching) return;
    this.turn.push({ e: 'commit', at: Date.now(), position, ids: ids.map(formatOpId) });
  }

  checkpoint(count: number): void {
    if (!this.watching) return;
    this.turn.push({ e: 'checkpoint', at: Date.now(), count });
  }

  /** A message this replica sent a peer: gossip is counted per peer and turn. */
  sent(to: number, msg: PeerMessage): void {
    if (!this.watching || msg.kind !== 'gossip') return;
    let g = this.gossip.get(to);
    if (g === undefined) {
      g = { e: 'gossip', at: Date.now(), peer: to, pushes: 0, pulls: 0, summaries: 0, reqs: 0 };
      this.gossip.set(to, g);
    }
    const m = msg.msg;
    if (m.kind === 'push') {
      g.pushes++;
      g.reqs += m.reqs.length;
    } else if (m.kind === 'pull') g.pulls++;
    else if (m.kind === 'summary') g.summaries++;
  }

  // ------------------------------------------------------------ sending

  /** Once per tick: what changed in Paxos and the links, and the status every half second. */
  tick(now: number): void {
    if (!this.watching) return;
    const paxos = this.source.paxos();
    const paxosKey = JSON.stringify(paxos);
    if (paxosKey !== this.lastPaxos) {
      this.lastPaxos = paxosKey;
      this.turn.push({ e: 'paxos', at: now, ...paxos });
    }
    const links = this.source.links();
    const linksKey = JSON.stringify(links);
    if (linksKey !== this.lastLinks) {
      this.lastLinks = linksKey;
      this.turn.push({ e: 'links', at: now, peers: links });
    }
    if (now - this.lastStatusAt >= STATUS_EVERY_MS) {
      this.lastStatusAt = now;
      this.turn.push({ e: 'status', at: now, ...this.source.status() });
    }
    this.flushTurn(now);
  }

  /** At the end of each event-loop turn: the turn's events go to every viewer, sampled. */
  flushTurn(now = Date.now()): void {
    if (!this.watching) {
      this.turn = [];
      this.gossip.clear();
      return;
    }
    const counts = this.source.executionCounts();
    const executions = counts.executions - this.lastCounts.executions;
    const rollbacks = counts.rollbacks - this.lastCounts.rollbacks;
    const reorderingCommits = counts.reorderingCommits - this.lastCounts.reorderingCommits;
    this.lastCounts = counts;
    if (executions > 0 || rollbacks > 0 || reorderingCommits > 0)
      this.turn.push({ e: 'execution', at: now, executions, rollbacks, reorderingCommits });
    for (const g of this.gossip.values()) this.turn.push(g);
    this.gossip.clear();
    if (this.turn.length === 0) return;
    const events = this.turn;
    this.turn = [];
    this.counters.events += events.length;
    for (const [ws, viewer] of this.viewers) this.deliver(ws, viewer, events, now);
  }

  private deliver(ws: WebSocket, viewer: Viewer, events: ReplicaEvent[], now: number): void {
    const rate = this.limits.eventsPerSecond;
    viewer.budget = Math.min(rate, viewer.budget + ((now - viewer.refilledAt) / 1000) * rate);
    viewer.refilledAt = now;
    if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount > this.limits.bufferBytes) {
      this.drop(viewer, events.length);
      return;
    }
    let chosen = events;
    if (events.length > viewer.budget) {
      // Over budget: the structural events first, then ops and responses while the budget lasts.
      const room = Math.max(0, Math.floor(viewer.budget));
      const kept = events.filter((e) => !SAMPLED_FIRST.has(e.e));
      const sampled = events.filter((e) => SAMPLED_FIRST.has(e.e));
      chosen = [...kept, ...sampled.slice(0, Math.max(0, room - kept.length))];
      this.drop(viewer, events.length - chosen.length);
    }
    viewer.budget -= chosen.length;
    if (viewer.dropped > 0) {
      chosen = [{ e: 'dropped', at: now, count: viewer.dropped }, ...chosen];
      viewer.dropped = 0;
    }
    this.send(ws, { t: 'events', events: chosen });
  }

  private drop(viewer: Viewer, count: number): void {
    viewer.dropped += count;
    this.counters.dropped += count;
  }

  private send(ws: WebSocket, frame: EventsFrame): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    const text = JSON.stringify(frame);
    // A turn with more than a frame's worth (a catch-up) is cut into frames a viewer can read.
    if (text.length <= MAX_FRAME_BYTES || frame.t !== 'events' || frame.events.length < 2)
      return ws.send(text);
    const half = Math.ceil(frame.events.length / 2);
    this.send(ws, { t: 'events', events: frame.events.slice(0, half) });
    this.send(ws, { t: 'events', events: frame.events.slice(half) });
  }

  close(): void {
    for (const ws of this.viewers.keys()) ws.close(1001, 'the replica is shutting down');
    this.viewers.clear();
  }
}
