import { opKey, type OpId } from '../core/op-id.js';
import type { ReconfigRequest } from './configuration.js';
import { isCast, type Batch, type CastId } from './messages.js';
import type { PaxosContext } from './context.js';
import type { PaxosOptions } from './paxos-types.js';
import type { PromiseMsg, ProposerRole, Roles } from './roles.js';

/**
 * The leader's phase 2: the ids that reached it wait in a queue and go out in batches, one instance
 * each, with at most `maxInFlight` instances undecided at once (pipelining); ids that arrive while
 * that many are open go out together in the next one (batching). After its election it first
 * proposes again, in every open instance, the highest-ballot value phase 1 reported (or an empty
 * batch). Membership changes go one at a time.
 */
export class Proposer implements ProposerRole {
  nextInstance = 0;
  private readonly inFlight = new Map<
    number,
    { readonly value: Batch; readonly proposedAt: number; sentAt: number }
  >();
  private readonly queue: CastId[] = [];
  /** Ids this leader queued or proposed and has not seen decided. */
  private readonly proposed = new Set<string>();
  /**
   * Per instance from `nextInstance` on, the highest-ballot value the promises of this ballot
   * reported (phase 1): proposed again there. Up to `recoveredTop`, an instance nobody reported a
   * value for gets an empty batch.
   */
  private readonly recovered = new Map<number, { ballot: number; value: Batch }>();
  recoveredTop = -1;
  /** Membership changes waiting for their turn at this leader (one at a time). */
  private reconfigQueue: ReconfigRequest[] = [];
  /** Nonces of the membership changes this leader proposed and has not seen decided. */
  private readonly proposedReconfigs = new Set<string>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly isOrdered: (id: OpId) => boolean;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext, options: PaxosOptions) {
    this.ctx = ctx;
    this.roles = ctx.roles;
    this.maxBatch = options.maxBatch ?? 1024;
    this.maxInFlight = options.maxInFlight ?? 8;
    this.isOrdered = options.isOrdered ?? (() => false);
  }

  /**
   * This replica was elected with `promises` (phase 1 covered every instance from `prepareFrom`):
   * it starts afresh from them.
   */
  lead(prepareFrom: number, promises: Iterable<PromiseMsg>): void {
    this.inFlight.clear();
    this.queue.length = 0;
    this.proposed.clear();
    this.proposedReconfigs.clear();
    this.reconfigQueue = [];
    this.recovered.clear();
    // Every open instance from the first one not decided here is proposed again (tryPropose): the
    // highest-ballot value any acceptor of the majority accepted, or an empty batch.
    this.nextInstance = Math.max(prepareFrom, this.ctx.decidedBelow);
    this.recoveredTop = this.ctx.decidedBelow - 1;
    for (const p of promises) this.mergePromise(p);
    this.recoveredTop = Math.max(this.recoveredTop, this.roles.learner.highestDecided());
    this.tryPropose();
  }

  /** This replica stood down: what it was to propose is dropped (origins forward it again). */
  stop(): void {
    this.inFlight.clear();
    this.queue.length = 0;
    this.proposed.clear();
    this.recovered.clear();
    this.reconfigQueue = [];
    this.proposedReconfigs.clear();
  }

  /**
   * Phase 1's promises, for every instance this leader has not proposed in yet: the highest-ballot
   * value reported there (or, up to the highest instance any promise knew, an empty batch).
   */
  mergePromise(p: PromiseMsg): void {
    for (const a of p.accepted) {
      if (a.instance < this.nextInstance) continue;
      this.recoveredTop = Math.max(this.recoveredTop, a.instance);
      const b = this.recovered.get(a.instance);
      if (b === undefined || a.ballot > b.ballot)
        this.recovered.set(a.instance, { ballot: a.ballot, value: a.value });
    }
    for (const d of p.decided) this.recoveredTop = Math.max(this.recoveredTop, d.instance);
  }

  /** `instance` was decided (with `value`): it is no longer open, nor are its ids proposed. */
  decided(instance: number, value: Batch): void {
    this.inFlight.delete(instance);
    this.recovered.delete(instance);
    for (const c of value)
      if (isCast(c)) this.proposed.delete(opKey(c.id));
      else this.proposedReconfigs.delete(c.reconfig.nonce);
  }

  /** The learner jumped to `below`: nothing before its decided prefix is open any more. */
  skipTo(below: number): void {
    for (const i of [...this.inFlight.keys()]) if (i < below) this.inFlight.delete(i);
    if (this.nextInstance < this.ctx.decidedBelow) this.nextInstance = this.ctx.decidedBelow;
  }

  /** An origin forwarded casts: proposed if this replica leads. */
  onForward(casts: readonly CastId[]): void {
    if (this.roles.election.role === 'leader') this.enqueue(casts);
  }

  /** An origin forwarded a membership change: proposed in turn if this replica leads. */
  onReconfigure(request: ReconfigRequest): void {
    if (this.roles.election.role === 'leader') this.enqueueReconfig(request);
  }

  enqueue(casts: readonly CastId[]): void {
    for (const c of casts) {
      const key = opKey(c.id);
      if (this.proposed.has(key) || this.isOrdered(c.id)) continue;
      if (this.roles.waiting.castWaits(c, key)) continue;
      this.proposed.add(key);
      this.queue.push(c);
    }
    this.tryPropose();
  }

  /** A membership change reached this leader: it waits its turn (`nextReconfig`). */
  enqueueReconfig(request: ReconfigRequest): void {
    const nonce = request.nonce;
    if (
      this.roles.reconfiguration.hasOutcome(nonce) ||
      this.proposedReconfigs.has(nonce) ||
      this.reconfigQueue.some((r) => r.nonce === nonce) ||
      this.ctx.history.madeBy(nonce) !== undefined
    )
      return;
    this.reconfigQueue.push(request);
    this.tryPropose();
  }

  /**
   * The membership change to propose now, or null. One at a time: only once the last change is
   * in force at the decided prefix and no instance on its way holds another.
   */
  private nextReconfig(): ReconfigRequest | null {
    if (this.reconfigQueue.length === 0) return null;
    if (this.ctx.history.latest().from > this.ctx.decidedBelow) return null;
    for (const f of this.inFlight.values()) if (!f.value.every(isCast)) return null;
    while (this.reconfigQueue.length > 0) {
      const r = this.reconfigQueue.shift()!;
      if (!this.roles.reconfiguration.hasOutcome(r.nonce) && !this.proposedReconfigs.has(r.nonce))
        return r;
    }
    return null;
  }

  /**
   * Opens instances in order from `nextInstance`: first those phase 1 recovered (up to
   * `recoveredTop`), then new batches of the queue, at most `maxInFlight` open at once. Never an
   * instance whose configuration this leader does not know yet (more than CONFIG_DELAY past its
   * decided prefix), nor one without promises of this ballot from a majority of that
   * configuration, nor one of a configuration it is not a member of.
   */
  tryPropose(): void {
    const ctx = this.ctx;
    const { election, learner } = this.roles;
    while (election.role === 'leader') {
      const j = this.nextInstance;
      if (!ctx.configKnown(j)) return;
      if (learner.isDecided(j)) {
        this.nextInstance++;
        continue;
      }
      if (!ctx.history.isMember(j, ctx.self)) return;
      if (!election.promisedByQuorumOf(j)) {
        election.askForPromises(j);
        return;
      }
      if (j <= this.recoveredTop) {
        const value = this.recovered.get(j)?.value ?? [];
        this.recovered.delete(j);
        for (const c of value)
          if (isCast(c)) this.proposed.add(opKey(c.id));
          else this.proposedReconfigs.add(c.reconfig.nonce);
        this.propose(this.nextInstance++, value);
        continue;
      }
      if (this.inFlight.size >= this.maxInFlight) return;
      const reconfig = this.nextReconfig();
      if (reconfig !== null) {
        this.proposedReconfigs.add(reconfig.nonce);
        this.propose(this.nextInstance++, [{ reconfig }]);
        continue;
      }
      if (this.queue.length > 0) {
        this.propose(this.nextInstance++, this.queue.splice(0, this.maxBatch));
        continue;
      }
      // A decided change comes into force CONFIG_DELAY instances on: with nothing else to order,
      // empty instances bring it there now rather than after as many batches.
      if (ctx.history.latest().from > j) {
        this.propose(this.nextInstance++, []);
        continue;
      }
      // A member accepted values here from an earlier ballot that no majority chose (phase 1 did
      // not report them). A member rejoining waits until every instance any peer knows of is
      // decided (Rejoin.finish); in an idle cluster nothing else would decide these, so it
      // waited for good (the simulator: seed 16274 with 5 replicas). Any value is safe here, as
      // for any instance past `recoveredTop`; an empty one decides them now.
      if (this.memberKnowsOf(j)) {
        this.propose(this.nextInstance++, []);
        continue;
      }
      return;
    }
  }

  /**
   * A member of instance `j`'s configuration told of a value it accepted at `j` or beyond, with no
   * promise past this leader's ballot (one that promised more refuses its accepts anyway, and
   * tells of a leader this one does not know of yet).
   */
  private memberKnowsOf(j: number): boolean {
    const { election } = this.roles;
    for (const m of this.ctx.history.at(j).members) {
      const known = m.id === this.ctx.self ? undefined : election.heartbeatOf(m.id);
      if (known !== undefined && known.knownBelow > j && known.promised <= election.ballot)
        return true;
    }
    return false;
  }

  private propose(instance: number, value: Batch): void {
    const ctx = this.ctx;
    ctx.counters.instancesProposed++;
    ctx.counters.idsProposed += value.length;
    this.inFlight.set(instance, { value, proposedAt: ctx.now, sentAt: ctx.now });
    ctx.broadcast({ type: 'accept', ballot: this.roles.election.ballot, instance, value });
  }

  /** Sends again the 2a of every open instance that waited a retransmit period. */
  retransmit(): void {
    const ctx = this.ctx;
    for (const [instance, f] of this.inFlight) {
      if (ctx.now - f.sentAt >= ctx.retransmitMs) {
        f.sentAt = ctx.now;
        ctx.broadcast({
          type: 'accept',
          ballot: this.roles.election.ballot,
          instance,
          value: f.value,
        });
      }
    }
  }

  /**
   * A value this leader had to propose again after its election (the highest-ballot one a promise
   * reported) has waited an election timeout for Reqs that no replica sent, so it cannot vote for
   * it, nor can any acceptor that lacks them. Every acceptor that accepted the value held its Reqs
   * (onAccept) and keeps them; if none of them is alive, fewer than a majority can have accepted it,
   * so it was not chosen, and a new election, whose majority reports it no more, passes it over
   * (an empty batch there). If one is alive, its promise reports the value again and it answers
   * the pull. Without this, the instance stayed open for good and nothing after it was delivered.
   * A value the leader proposed itself never waits: it proposes only what it holds (enqueue).
   */
  reproposalStalled(): boolean {
    const ctx = this.ctx;
    const { election, waiting } = this.roles;
    for (const [instance, f] of this.inFlight)
      if (
        ctx.now - f.proposedAt >= ctx.electionTimeoutMs &&
        waiting.acceptWaits(instance, election.ballot)
      )
        return true;
    return false;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  get queued(): number {
    return this.queue.length;
  }
}
