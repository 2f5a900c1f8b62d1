import { ABANDON_OP } from '@creek/app';
import type { Response, SessionStamp } from '@creek/replica/core/types.js';
import { ClientSessions } from './client-sessions.js';
import type { SimClientSide } from './client-side.js';
import { takesOps, type SimProcess, type StepHost } from './process.js';
import { recordResponse, type Invocation } from './run-record.js';
import type { RunState } from './run-state.js';
import {
  generateOp,
  LINEARIZABLE_KEYS,
  LINEARIZABLE_QUEUE,
  ONCE_PREFIX,
  type GeneratedOp,
} from './workload.js';

/** Of the clients that would resubmit an op after their replica crashed, the share that abandon it. */
const ABANDON_SHARE = 0.25;

/** Whether the op is done for its client: answered, and stably if it is strong. */
export function complete(inv: Invocation): boolean {
  if (inv.responses.length === 0) return false;
  return !inv.strong || inv.responses.some((x) => x.level === 'stable');
}

/**
 * The simulator's model of clients (SimConfig.clients 'model'): open-loop arrivals at each replica
 * during the workload, each op in a session of its replica's clients and handed straight to its
 * host; their answers; and, when their replica goes, failover with resubmission elsewhere
 * (exactly-once) or abandonment.
 */
export class SimClients implements SimClientSide {
  private readonly sessions = new ClientSessions();
  private readonly byTag = new Map<number, Invocation>();
  private nextTag = 1;
  /** The mean time between two arrivals at a replica. */
  readonly meanGap: number;

  constructor(
    private readonly run: RunState,
    /**
     * Crashes a replica for good: a 'lose' fault waits for the replica's next strong invocation
     * (SimProcess.loseAfterStrong).
     */
    private readonly loseForGood: (p: SimProcess) => void,
    private readonly step: StepHost,
  ) {
    this.meanGap = 1000 / run.params.opsPerSecondPerReplica;
  }

  /** Clients: open-loop arrivals at the replica during the workload phase, the first at `firstAt`. */
  start(h: SimProcess, firstAt: number): void {
    const run = this.run;
    const clientPrng = run.prngs.client;
    const retryPrng = run.prngs.retry;
    const client = (): void => {
      if (run.now >= run.workloadMs) return;
      run.events.push(run.now + clientPrng.exponential(this.meanGap), client);
      if (!takesOps(h)) return;
      const g = generateOp(clientPrng, run.params.workload);
      const session = this.sessions.stamp(`s${h.id}`);
      // Exactly-once probes: an increment of a key of its own, which must end at exactly 1.
      const op = retryPrng.chance(0.05)
        ? {
            op: 'kv.increment',
            args: { key: `${ONCE_PREFIX}${session.id}/${session.seq}` },
            strong: retryPrng.chance(0.5),
          }
        : g;
      const inv = this.submit(h, op, session);
      // A client that lost its connection resubmits elsewhere, the first submission still alive.
      if (retryPrng.chance(0.03))
        run.events.push(run.now + retryPrng.float(1, 300), () => this.resubmit(inv));
    };
    run.events.push(firstAt, client);
  }

  /** One op at replica `h`, in a session `${session}${h.id}` of its own (nondeterminism.ts). */
  invokeAt(h: SimProcess, g: GeneratedOp, session: string): void {
    this.submit(h, g, this.sessions.stamp(`${session}${h.id}`));
  }

  private submit(h: SimProcess, g: GeneratedOp, session: SessionStamp): Invocation {
    const run = this.run;
    const tag = this.nextTag++;
    // A session is one user's, resubmissions and abandons included.
    const user = run.users.of(session.id);
    const inv: Invocation = {
      replica: h.id,
      tag,
      op: g.op,
      args: g.args,
      strong: g.strong,
      invokedAt: run.now,
      id: null,
      responses: [],
      abandoned: false,
      session,
      ...(h.wipes > 0 ? { disk: h.wipes } : {}),
      ...(user === undefined ? {} : { user }),
    };
    run.record.invocations.push(inv);
    this.byTag.set(tag, inv);
    this.step(h, {
      kind: 'invoke',
      now: run.physical(h.id),
      request: {
        op: g.op,
        args: g.args,
        strong: g.strong,
        tag,
        session,
        ...(user === undefined ? {} : { user }),
      },
    });
    if (g.strong && h.loseAfterStrong) {
      // Dies while its strong op's gossip and CAB cast may be in flight: survivors that got the
      // Req but whose leader never gets the cast must cast it on its behalf (`cabAdopt`).
      h.loseAfterStrong = false;
      run.events.push(run.now + run.prngs.fault.float(0, 2 * run.params.network.maxDelayMs), () =>
        this.loseForGood(h),
      );
    }
    return inv;
  }

  /** A response `p`'s host released, for the op it answers (the workload's tags). */
  respond(p: SimProcess, o: Response): void {
    const inv = this.invocation(o.tag);
    // Its client left this replica (removed) and listens no more.
    if (p.clientsLeft && inv.abandoned && inv.replica === p.id) return;
    this.answer(inv, o);
  }

  /** The clients of ops that `p` has not answered leave it (SimClients.leave). */
  crashed(p: SimProcess): void {
    this.leave((inv) => inv.replica === p.id && !complete(inv));
  }

  departed(p: SimProcess): void {
    this.leave((inv) => inv.replica === p.id && !complete(inv) && !inv.abandoned);
  }

  /** Nothing: a new host takes the ops that come to it. */
  started(): void {}

  /** Nothing: these clients act only on their own events. */
  afterEvent(): void {}

  settled(): boolean {
    return true;
  }

  /** Nothing: what the model's clients wait for is their invocations, which the run counts. */
  unsettled(): string {
    return '';
  }

  /** Nothing of their own: the checkers read their invocations (RunRecord.invocations). */
  check(): string[] {
    return [];
  }

  stats(): null {
    return null;
  }

  /** The invocation a response answers (the workload's tags; live queries' are apart). */
  private invocation(tag: number): Invocation {
    const inv = this.byTag.get(tag);
    if (inv === undefined) throw new Error(`response for unknown tag ${tag}`);
    return inv;
  }

  /** A response reaches the op's client (once the writes before it are durable). */
  private answer(inv: Invocation, o: Response): void {
    // A stable response is the final answer and proof of commit; an op that is never
    // ordered (a weak read) is done at its answer.
    if (inv.session !== undefined && (o.level === 'stable' || o.id === null)) {
      this.sessions.acknowledge(inv.session);
      // An abandon's stable answer settles the op it abandoned, whichever way it went.
      if (inv.op === ABANDON_OP && o.outcome.ok)
        this.sessions.acknowledge({ ...inv.session, seq: (inv.args as { seq: number }).seq });
    }
    recordResponse(this.run, inv, o);
  }

  /**
   * The clients of the ops `waiting` picks, which have no answer, leave their replica: most fail
   * over and resubmit (Correctables §5.1 binding, exactly-once); some, not knowing whether their
   * op took effect, abandon it instead (`creek.abandon`).
   */
  private leave(waiting: (inv: Invocation) => boolean): void {
    const run = this.run;
    for (const inv of run.record.invocations) {
      if (waiting(inv)) {
        inv.abandoned = true;
        if (run.prngs.retry.chance(0.8)) {
          const again = inv;
          const giveUp = run.prngs.abandon.chance(ABANDON_SHARE);
          run.events.push(run.now + run.prngs.retry.float(1, 200), () =>
            giveUp ? this.abandonOp(again) : this.resubmit(again),
          );
        }
      }
    }
  }

  /** The op again, same session number, at another live replica, unless it is answered by now. */
  private resubmit(inv: Invocation): void {
    if (inv.session === undefined || this.sessions.isAcknowledged(inv.session)) return;
    // The linearizability checker sees each submission as an op of its own: leave those alone.
    if (onLinearizableObject(inv)) return;
    const others = this.run.procs.filter((x) => takesOps(x) && x.id !== inv.replica);
    if (others.length === 0) return;
    this.run.counts.resubmissions++;
    this.submit(this.run.prngs.retry.pick(others), inv, this.sessions.restamp(inv.session));
  }

  /**
   * The client abandons its op at another live replica: a strong `creek.abandon` of the op's
   * session number, itself the session's next op. Its stable answer settles the op either way.
   */
  private abandonOp(inv: Invocation): void {
    if (inv.session === undefined || this.sessions.isAcknowledged(inv.session)) return;
    // The linearizability checker sees each submission as an op of its own: resubmit those.
    if (onLinearizableObject(inv)) return this.resubmit(inv);
    const others = this.run.procs.filter((x) => takesOps(x) && x.id !== inv.replica);
    if (others.length === 0) return;
    this.run.counts.abandons++;
    const op = { op: ABANDON_OP, args: { seq: inv.session.seq }, strong: true };
    this.submit(this.run.prngs.abandon.pick(others), op, this.sessions.stamp(inv.session.id));
  }
}

function onLinearizableObject(inv: Invocation): boolean {
  const a = inv.args as { key?: unknown; queue?: unknown } | null;
  return (
    (LINEARIZABLE_KEYS as readonly unknown[]).includes(a?.key) || a?.queue === LINEARIZABLE_QUEUE
  );
}
