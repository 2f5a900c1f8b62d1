import {
  ClientSession,
  OperationFailed,
  SharedContext,
  Timeout,
  type ConsistencyLevel,
  type CreekError,
  type SessionOp,
  type SessionOutput,
  type ViewSink,
  type WatchSink,
} from '@creek/client/session';
import type { JsonValue, User } from '@creek/app';
import { INCARNATION_STRIDE, seenEntries } from '@creek/protocol';
import type { OpId } from '@creek/replica/core/op-id.js';
import type { Outcome, Response } from '@creek/replica/core/types.js';
import { SimClientLinks, type LinkClient } from './client-links.js';
import type { SessionStats, SimClientSide } from './client-side.js';
import { SimEndpoints } from './endpoints.js';
import { checkHandoffs, type Handoff } from './context-checker.js';
import { checkSharedContext, type ContextOp } from './shared-context-checker.js';
import { checkStableOwnOps } from './own-ops-checker.js';
import type { SimProcess, StepHost } from './process.js';
import type { Prng } from './prng.js';
import type { ClientOpRecord } from './run-record.js';
import type { SessionParameters } from './session-parameters.js';
import type { RunState } from './run-state.js';
import { freshSimToken } from './sim-tokens.js';
import { simReplica, simUrl } from './sim-url.js';
import { checkSessions, checkSessionWatches, type SessionWatchViews } from './session-checkers.js';
import { SIM_WATCHES, type SimWatches } from './watches.js';
import { generateOp, ONCE_PREFIX, type GeneratedOp } from './workload.js';

/** Of the strong ops, the share whose caller asks for the stable view alone. */
const STABLE_ONLY_SHARE = 0.15;
/** Of the ops, the share that are exactly-once probes (ONCE_PREFIX). */
const PROBE_SHARE = 0.05;
/** Of the callers that time out on an op that may have taken effect, the share that abandon it. */
const ABANDON_SHARE = 0.5;
/** With SimConfig.contexts: of the op arrivals, the share that also hand the session's context on. */
const HANDOFF_SHARE = 0.04;
/** The ops a client that starts after a token invokes (one each arrival gap) before it closes. */
const READER_OPS = 2;
/** With SimConfig.sharedContexts: of the op arrivals, the share that run in the shared context. */
const CONTEXT_SHARE = 0.15;
/** The context every session shares (SimConfig.sharedContexts). */
const CONTEXT_ID = 'sim-shared';

/** One replica's clients: a session (the SDK's own), beside that replica. */
interface SimSession extends LinkClient {
  /** The replica that welcomed it last, while it is connected there. */
  replica: number | null;
  /** The last replica it connected to (a connection elsewhere is a failover). */
  lastTried: number | null;
  /** Session numbers it has sent an invoke for (a second invoke of one is a resubmission). */
  readonly sent: Set<number>;
  readonly watched: SessionWatchViews;
}

/**
 * The clients of an 'sdk' run (SimConfig.clients): the clients of each replica are one client
 * session of the SDK (@creek/client/session's ClientSession, the pure session its socket driver
 * runs), beside that replica, which lists it first and the others after. Ops arrive open-loop as
 * the model's do; the session numbers them, sends them over its link (sim/client-links.ts) to a
 * replica's endpoint (sim/endpoints.ts), fails over when its replica crashes, refuses it or stops
 * being useful, and resubmits what is not known committed; some callers stop waiting (a timeout)
 * and abandon their op. Each session watches the run's live queries too. What each caller was
 * told is recorded (RunRecord.clientOps), and judged at the end (sim/session-checkers.ts).
 */
export class SimSdkClients implements SimClientSide {
  readonly meanGap: number;
  private readonly sessions: SimSession[] = [];
  private readonly links: SimClientLinks;
  private readonly endpoints: SimEndpoints;
  /** Every op's session op (for its fate at the end) and record. */
  private readonly ops: { readonly sop: SessionOp; readonly rec: ClientOpRecord }[] = [];
  private readonly params: SessionParameters;
  /** The callers' choices: probes, levels, timeouts, abandons. */
  private readonly prng: Prng;
  /** When the sessions' tokens come, and how long each lasts (SimConfig.userTokens). */
  private readonly tokenPrng: Prng;
  /** Violations seen as the run goes: live queries a replica ended, errors no caller should get. */
  private readonly violations: string[] = [];
  private failovers = 0;
  private timeouts = 0;
  private watchViews = 0;
  /** Tokens handed from a session to a new client (SimConfig.contexts), and those clients. */
  private readonly handoffs: Handoff[] = [];
  /** Handoffs to a running client (`client.after`). */
  private afterCalls = 0;
  private readonly readers: SimSession[] = [];
  /** When, and whether, sessions hand their context on; null without SimConfig.contexts. */
  private readonly handoffPrng: Prng | null;
  /** Which handoffs go to a running client's `after` rather than `connect({ after })`. */
  private readonly afterPrng: Prng | null;
  /** Which ops run in the shared context, and at which levels; null without sharedContexts. */
  private readonly contextPrng: Prng | null;
  /** The ops invoked in the shared context (SimConfig.sharedContexts). */
  private readonly contextOps: ContextOp[] = [];

  constructor(
    private readonly run: RunState,
    watches: SimWatches,
    step: StepHost,
    loseForGood: (p: SimProcess) => void,
    /** Whether the network cuts the way from replica `from` to replica `to` now. */
    cut: (from: number, to: number) => boolean,
  ) {
    this.meanGap = 1000 / run.params.opsPerSecondPerReplica;
    if (run.params.sessions === undefined) throw new Error('an sdk run draws its sessions');
    this.params = run.params.sessions;
    this.prng = run.prngs.named('sessions');
    this.tokenPrng = run.prngs.named('tokens');
    this.handoffPrng = run.config.contexts === true ? run.prngs.named('handoffs') : null;
    this.afterPrng = run.config.contexts === true ? run.prngs.named('after-handoffs') : null;
    this.contextPrng =
      run.config.sharedContexts === true ? run.prngs.named('shared-contexts') : null;
    // A stable result a replica pushes to a live query is held to the committed state it names.
    this.links = new SimClientLinks(run, run.prngs.named('client-links'), cut, (p, w, position) =>
      watches.checkStable(p, w.op, w.args, w.outcome, position),
    );
    this.endpoints = new SimEndpoints(run, this.links, step, loseForGood);
    const every = this.params.resetEveryMs;
    if (every !== null) this.scheduleResets(every, run.prngs.named('client-resets'));
  }

  /** Links reset under open connections during the workload, about one every `every` ms. */
  private scheduleResets(every: number, prng: Prng): void {
    const run = this.run;
    const reset = (): void => {
      if (run.now >= run.workloadMs) return;
      this.links.reset((open) => (open.length === 0 ? undefined : prng.pick(open)));
      run.events.push(run.now + prng.exponential(every), reset);
    };
    run.events.push(prng.exponential(every), reset);
  }

  // ---- the cluster's side ---------------------------------------------------------------------

  started(p: SimProcess): void {
    this.endpoints.started(p);
  }

  respond(p: SimProcess, o: Response): void {
    this.endpoints.respond(p, o);
  }

  crashed(p: SimProcess): void {
    this.endpoints.crashed(p);
    this.links.replicaDown(p);
  }

  departed(p: SimProcess): void {
    this.endpoints.departed(p);
  }

  afterEvent(): void {
    this.endpoints.afterEvent();
  }

  // ---- sessions --------------------------------------------------------------------------------

  /** The clients of `h`: a session that connects now, and ops from `firstAt` on. */
  start(h: SimProcess, firstAt: number): void {
    const run = this.run;
    const s = this.newSession(h);
    const clientPrng = run.prngs.client;
    const arrive = (): void => {
      if (run.now >= run.workloadMs) return;
      run.events.push(run.now + clientPrng.exponential(this.meanGap), arrive);
      const g = generateOp(clientPrng, run.params.workload);
      if (this.contextPrng?.chance(CONTEXT_SHARE) === true) this.invokeInContext(s, g);
      else this.invoke(s, g);
      if (this.handoffPrng?.chance(HANDOFF_SHARE) === true) this.handOff(s);
    };
    run.events.push(firstAt, arrive);
  }

  private newSession(
    h: SimProcess,
    reader?: { readonly id: string; readonly after?: string; readonly user: User | undefined },
  ): SimSession {
    const run = this.run;
    // Signed in (SimConfig.userTokens) as the session's user, if it has one.
    const user =
      reader !== undefined
        ? reader.user
        : run.config.userTokens === true
          ? run.users.of(`session-${h.id}`)
          : undefined;
    const others = run.procs.map((p) => p.id).filter((id) => id !== h.id);
    const urls = [h.id, ...others].map(simUrl);
    const id = reader?.id ?? `session-${h.id}`;
    const s: SimSession = {
      id,
      home: h.id,
      ...(user === undefined ? {} : { user }),
      replica: null,
      lastTried: null,
      sent: new Set(),
      watched: new Map(),
      session: new ClientSession({
        urls,
        // Session ids are 8 to 64 characters on the wire.
        session: id,
        connectTimeoutMs: this.params.connectTimeoutMs,
        stallTimeoutMs: this.params.stallTimeoutMs,
        maxInFlight: this.params.maxInFlight,
        // A client started after a token gives up on replicas that never catch up with it (the
        // token's ops lost with a disk): its ops fail, rather than wait for good.
        offline: reader === undefined && this.params.offline,
        ...(reader?.after === undefined ? {} : { after: reader.after }),
        maxQueued: 1_000,
        persistent: false,
        auth: user !== undefined,
        now: () => run.now,
        out: (o) => this.output(s, o),
      }),
    };
    (reader === undefined ? this.sessions : this.readers).push(s);
    const every = s.session.tickEveryMs;
    if (every !== null) {
      const tick = (): void => {
        if (s.session.closed) return;
        s.session.tick();
        run.events.push(run.now + every, tick);
      };
      run.events.push(run.now + every, tick);
    }
    s.session.start();
    if (reader !== undefined) return s;
    for (const [name, op, args] of SIM_WATCHES) s.session.watch(op, args, this.watchSink(s, name));
    return s;
  }

  /**
   * Session `s` asks for its context token and hands it to a new client at another replica (the
   * user's other device), which starts after it, invokes READER_OPS ops and closes once they are
   * answered (checked by sim/context-checker.ts). Half the clients start with the token
   * (`connect({ after })`), half take it once running (`client.after`) and invoke their ops once
   * that resolves; one whose `after` fails closes without any.
   */
  private handOff(s: SimSession): void {
    const run = this.run;
    const prng = this.handoffPrng!;
    const askedAt = run.now;
    s.session.context({
      token: (token) => {
        if (run.now >= run.workloadMs) return;
        const elsewhere = run.procs.filter((p) => p.id !== s.replica);
        if (elsewhere.length === 0) return;
        const home = prng.pick(elsewhere);
        const id = `reader-${this.handoffs.length + 1}-of-${s.id}`;
        this.handoffs.push({ from: s.id, askedAt, reader: id, token });
        const live = this.afterPrng!.chance(0.5);
        const r = this.newSession(home, { id, ...(live ? {} : { after: token }), user: s.user });
        const ops: ClientOpRecord[] = [];
        const start = (): void => {
          for (let i = 0; i < READER_OPS; i++)
            run.events.push(run.now + i * this.meanGap, () => {
              if (!r.session.closed)
                ops.push(this.invoke(r, generateOp(prng, run.params.workload)));
            });
          run.events.push(run.now + READER_OPS * this.meanGap, closeWhenDone);
        };
        // Closed once its ops are answered (or failed, or timed out) and known committed: no caller
        // is cut short, and no op is left with its fate unknown.
        const closeWhenDone = (): void => {
          const done = (o: ClientOpRecord): boolean =>
            o.error !== null || o.timedOutAt !== null || o.views.some((v) => v.final);
          if (ops.length === READER_OPS && ops.every(done) && r.session.unacknowledged() === 0)
            return r.session.close();
          run.events.push(run.now + this.meanGap, closeWhenDone);
        };
        if (!live) return start();
        this.afterCalls++;
        r.session.after(token, { token: start, error: () => r.session.close() });
      },
      // The session closed, or its replica signs no tokens: nothing to hand on.
      error: () => undefined,
    });
  }

  /** Does what a session asks (SessionOutput), over its links and the run's clock. */
  private output(s: SimSession, o: SessionOutput): void {
    const run = this.run;
    switch (o.t) {
      case 'connect': {
        const id = simReplica(o.url);
        if (s.lastTried !== null && s.lastTried !== id) this.failovers++;
        s.lastTried = id;
        const replica = run.procs[id];
        // A member the cluster announced (a replica being added) whose process is not started
        // yet: nobody listens at its address, so the connection is refused, after a round trip.
        if (replica === undefined)
          return void run.events.push(run.now + 2 * run.params.network.minDelayMs, () =>
            s.session.connectionClosed(o.connection),
          );
        this.links.connect(s, o.connection, replica);
        return;
      }
      case 'send':
        if (o.frame.t === 'invoke' && o.frame.seq !== undefined) {
          if (s.sent.has(o.frame.seq)) run.counts.resubmissions++;
          else s.sent.add(o.frame.seq);
        }
        return this.links.send(s, o.connection, o.frame);
      case 'drop':
        return this.links.drop(s, o.connection);
      case 'reconnect':
        run.events.push(run.now + o.afterMs, () => s.session.reconnect());
        return;
      case 'welcomed':
        s.replica = o.replica;
        return;
      case 'disconnected':
        s.replica = null;
        return;
      case 'token': {
        // The app's auth function: a fresh token of the session's user, a little later.
        const user = s.user;
        if (user === undefined) return;
        const tokens = this.tokenPrng;
        run.events.push(run.now + tokens.float(0, 5), () =>
          s.session.tokenProvided(o.connection, freshSimToken(user, run.now, tokens)),
        );
        return;
      }
      case 'refresh':
        // The session's timer to refresh its token before it expires.
        run.events.push(run.now + o.afterMs, () => s.session.refreshDue(o.connection));
        return;
      case 'probe':
        // The simulated links carry a session's connections alone: round trips are not measured
        // here, so sessions rank the replicas they learn in the order they know them.
        return;
      case 'status':
      case 'persist':
      case 'identity':
        return;
    }
  }

  /** A caller invokes an op (`g`, or an exactly-once probe in its place) in session `s`. */
  private invoke(s: SimSession, g: GeneratedOp): ClientOpRecord {
    const run = this.run;
    const prng = this.prng;
    const seq = s.session.nextSeq;
    // Exactly-once probes: an increment of a key of its own, which must end at exactly 1.
    const op: GeneratedOp = prng.chance(PROBE_SHARE)
      ? {
          op: 'kv.increment',
          args: { key: `${ONCE_PREFIX}${s.id}/${seq}` },
          strong: prng.chance(0.5),
        }
      : g;
    const stableOnly = op.strong && prng.chance(STABLE_ONLY_SHARE);
    const levels: ConsistencyLevel[] = !op.strong
      ? ['weak']
      : stableOnly
        ? ['strong']
        : ['weak', 'strong'];
    const timeoutMs = prng.chance(this.params.timeoutShare) ? prng.float(20, 400) : null;
    const abandon = prng.chance(ABANDON_SHARE);
    const { rec, sop } = this.submit(s, op.op, op.args, levels);
    if (sop === null) return rec;
    if (timeoutMs !== null)
      run.events.push(run.now + timeoutMs, () => this.timeOut(s, sop, rec, timeoutMs, abandon));
    return rec;
  }

  /**
   * Session `s` submits `op(args)` at `levels`, recorded (RunRecord.clientOps) as its caller sees
   * it; `caller`, if given, gets the views too (a shared context waiting on them).
   */
  private submit(
    s: SimSession,
    op: string,
    args: JsonValue,
    levels: ConsistencyLevel[],
    caller?: ViewSink<unknown>,
  ): { readonly rec: ClientOpRecord; readonly sop: SessionOp | null } {
    const rec: ClientOpRecord = {
      session: s.id,
      seq: s.session.nextSeq,
      op,
      args,
      strong: levels.includes('strong'),
      stableOnly: levels.length === 1 && levels[0] === 'strong',
      invokedAt: this.run.now,
      views: [],
      error: null,
      committedAt: null,
      neverCommitted: false,
      timedOutAt: null,
      abandonAsked: false,
      fate: null,
    };
    this.run.record.clientOps!.push(rec);
    const recorded = this.opSink(rec);
    const sink: ViewSink<unknown> =
      caller === undefined
        ? recorded
        : {
            view: (v) => {
              recorded.view(v);
              caller.view(v);
            },
            error: (e) => {
              recorded.error(e);
              caller.error(e);
            },
            committed: () => {
              recorded.committed?.();
              caller.committed?.();
            },
            neverCommits: (e) => {
              recorded.neverCommits?.(e);
              caller.neverCommits?.(e);
            },
          };
    const sop = s.session.submit(op, args, levels, sink);
    if (sop !== null) this.ops.push({ sop, rec });
    return { rec, sop };
  }

  /**
   * A caller of session `s` invokes `g` in the shared context (the SDK's SharedContext over the
   * session, as `client.joinContext` runs it): the context's frontier, read strong, then a wait
   * for its ops, then the op, then its merge into the frontier, strong, and only then its final
   * view (checked by sim/shared-context-checker.ts). Its callers never time out: an op of the
   * context is acknowledged or fails.
   */
  private invokeInContext(s: SimSession, g: GeneratedOp): void {
    const run = this.run;
    const levels: ConsistencyLevel[] = !g.strong
      ? ['weak']
      : this.contextPrng!.chance(0.5)
        ? ['strong']
        : ['weak', 'strong'];
    const entry: ContextOp = { session: s.id, invokedAt: run.now, rec: null, ackedAt: null };
    this.contextOps.push(entry);
    const context = new SharedContext(
      CONTEXT_ID,
      {
        submit: (op, args, at, sink) => {
          const { rec } = this.submit(s, op, args as JsonValue, at, sink);
          if (op === g.op) entry.rec = rec;
        },
        context: (sink) => s.session.context(sink),
        afterSeen: (seen, sink) => s.session.afterSeen(seen, sink),
      },
      run.config.unsafeWeakContextMerge === true ? { weakMerge: true } : undefined,
    );
    context.invoke(g.op, g.args, levels, {
      view: (v) => {
        if (v.final) entry.ackedAt = run.now;
      },
      error: () => undefined,
    });
  }

  /**
   * The caller stops waiting (as a Correctable's timeout aborts it); if the op may have taken
   * effect, it may abandon it (`error.indeterminate.abandon()`), which decides its fate for good.
   */
  private timeOut(
    s: SimSession,
    sop: SessionOp,
    rec: ClientOpRecord,
    ms: number,
    abandon: boolean,
  ): void {
    if (rec.error !== null || rec.views.some((v) => v.final)) return;
    const reason = new Timeout(ms);
    s.session.abort(sop, reason);
    rec.timedOutAt = this.run.now;
    this.timeouts++;
    const handle = reason.indeterminate;
    if (handle === null || !abandon) return;
    rec.abandonAsked = true;
    this.run.counts.abandons++;
    // Its answer settles the op's fate (SessionOp.fate), read at the end; the promise is the app's.
    handle.abandon().then(
      () => undefined,
      () => undefined,
    );
  }

  /** What the session tells the caller of an op, recorded as it comes. */
  private opSink(rec: ClientOpRecord): ViewSink<unknown> {
    const run = this.run;
    return {
      view: (v) =>
        rec.views.push({
          at: run.now,
          level: v.level,
          final: v.final,
          value: v.value as JsonValue,
        }),
      error: (e: CreekError) => {
        rec.error = {
          at: run.now,
          code: e.code,
          message: e instanceof OperationFailed ? e.reason : e.message,
          mayHaveTakenEffect: e.mayHaveTakenEffect,
        };
      },
      committed: () => {
        rec.committedAt ??= run.now;
      },
      neverCommits: () => {
        rec.neverCommitted = true;
      },
    };
  }

  /** The live query `name` of session `s`: its last result at each level, as the caller saw it. */
  private watchSink(s: SimSession, name: string): WatchSink {
    const seen: { tentative?: Outcome; stable?: Outcome } = {};
    s.watched.set(name, seen);
    /** The highest committed position a stable view of this query was read at, and where. */
    let shownAt: { position: number; replica: number | null } | null = null;
    return {
      view: (v, shown) => {
        this.watchViews++;
        seen[v.level === 'strong' ? 'stable' : 'tentative'] = {
          ok: true,
          value: v.value as JsonValue,
        };
        const position = shown.position;
        if (position === undefined) return;
        // Monotonic reads of the committed state: whichever replica the session is connected to
        // now (committed orders are prefixes of one another, so positions compare across them).
        if (shownAt !== null && position < shownAt.position)
          this.violations.push(
            `(sessions) monotonic reads: at ${this.run.now.toFixed(1)} ms session ${s.id}'s live query ${name} showed the committed state at position ${position} (replica ${s.replica}), after it had shown it at ${shownAt.position} (replica ${shownAt.replica})`,
          );
        if (shownAt === null || position > shownAt.position)
          shownAt = { position, replica: s.replica };
      },
      failed: (e, level) => {
        seen[level === 'strong' ? 'stable' : 'tentative'] = {
          ok: false,
          error: e instanceof OperationFailed ? e.reason : e.message,
        };
      },
      error: (e) => {
        this.violations.push(
          `live query: at ${this.run.now.toFixed(1)} ms session ${s.id}'s ${name} ended: ${e.message}`,
        );
      },
    };
  }

  // ---- the end -------------------------------------------------------------------------------

  /**
   * Nothing of the clients' is left to happen: every session is welcomed somewhere, every caller
   * has its answer (or stopped waiting), no frame is on its way and no live query reads.
   */
  settled(): boolean {
    if (this.sessions.some((s) => s.replica === null && this.sawOnlyAtLost(s) === null))
      return false;
    if (this.links.busy || this.endpoints.reading) return false;
    return this.run.record.clientOps!.every(
      (r) => r.error !== null || r.timedOutAt !== null || r.views.some((v) => v.final),
    );
  }

  /**
   * A session that saw an op which only a replica lost for good (and still a member) ever held:
   * no replica can welcome it without going back on what it showed, and nothing tells the cluster
   * that replica is gone until an operator removes it (which closes its ops, and the session is
   * welcomed then). Such a session may wait for good, as that replica's own tentative ops may
   * stay tentative. The op, or null.
   */
  private sawOnlyAtLost(s: SimSession): OpId | null {
    const { record, procs } = this.run;
    const members =
      [...record.memberships].reverse().find((m) => m.members !== null)?.members ?? this.run.ids;
    const live = procs.filter((p) => p.up && !record.lost.includes(p.id));
    for (const [origin, n] of seenEntries(s.session.seenCounts)) {
      const id = origin % INCARNATION_STRIDE;
      if (!record.lost.includes(id) || !members.includes(id)) continue;
      const prefix = Math.min(...live.map((p) => p.host.clients.receivedUpTo(origin)));
      for (let e = prefix + 1; e <= n; e++) {
        const op = { replica: origin, eventNo: e };
        if (!live.some((p) => p.host.clients.hasReceived(op) || p.host.clients.closedOff(op)))
          return op;
      }
    }
    return null;
  }

  unsettled(): string {
    const away = this.sessions
      .filter((s) => s.replica === null && this.sawOnlyAtLost(s) === null)
      .map((s) => `${s.id} (${s.session.status})`);
    const waiting = this.run.record.clientOps!.filter(
      (r) => !(r.error !== null || r.timedOutAt !== null || r.views.some((v) => v.final)),
    );
    return [
      ...(away.length === 0 ? [] : [`sessions welcomed nowhere: ${away.join(', ')}`]),
      ...(waiting.length === 0
        ? []
        : [
            `${waiting.length} callers waiting, the first ${waiting
              .slice(0, 3)
              .map((r) => `${r.op} of ${r.session} (#${r.seq})`)
              .join(', ')}`,
          ]),
      ...(this.links.busy ? ['frames on their way'] : []),
      ...(this.endpoints.reading ? ['live queries reading'] : []),
    ].join('; ');
  }

  check(quiescent: boolean): string[] {
    for (const { sop, rec } of this.ops) rec.fate = sop.fate;
    const finals = this.sessions.map((s) => ({
      session: s.id,
      replica: s.replica,
      watched: s.watched,
    }));
    return [
      ...this.links.violations.slice(0, 10),
      ...this.violations.slice(0, 10),
      ...checkSessions(this.run.record, this.run.app, quiescent),
      ...checkHandoffs(this.run.record, this.run.app, this.handoffs),
      ...checkSharedContext(this.run.record, this.run.app, this.contextOps),
      ...checkStableOwnOps(this.run.record, this.run.app, this.links.stableOwnOps),
      ...(quiescent ? checkSessionWatches(this.run.record, this.run.app, finals) : []),
    ];
  }

  stats(): SessionStats {
    return {
      connections: this.links.opened,
      failovers: this.failovers,
      resets: this.links.resets,
      timeouts: this.timeouts,
      watchViews: this.watchViews,
      ...(this.handoffPrng === null
        ? {}
        : { handoffs: this.handoffs.length, afterCalls: this.afterCalls }),
      ...(this.contextPrng === null
        ? {}
        : {
            contextOps: this.contextOps.length,
            contextAcks: this.contextOps.filter((o) => o.ackedAt !== null).length,
          }),
    };
  }
}
