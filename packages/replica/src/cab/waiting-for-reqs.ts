import { opKey, type OpId } from '../core/op-id.js';
import { ReqWaits, type Awaited } from './req-waits.js';
import { isCast, type Batch, type CastId } from './messages.js';
import type { PaxosContext } from './context.js';
import type { PaxosOptions } from './paxos-types.js';
import type { Roles, WaitingRole } from './roles.js';

/** Most op ids one `want` asks gossip for. */
const MAX_WANTED = 1024;

/**
 * Casts and 2a that wait for Reqs (indirect consensus, PaxosOptions.missing): a leader proposes,
 * and an acceptor accepts, only ids it lacks nothing for. Each waits, filed under what it awaits
 * (req-waits.ts), until that arrives (`reqsArrived`); what waits a retransmit period is asked of
 * gossip (`want`).
 */
export class WaitingForReqs implements WaitingRole {
  private readonly missing: (id: OpId) => readonly OpId[];
  private readonly awaited: (id: OpId) => Awaited | null;
  private readonly receivedUpTo: (origin: number) => number;
  /** Waiting casts and 2a by what each awaits: an arrival rechecks only what waited on it. */
  private readonly waits = new ReqWaits();
  /** When waiting casts and 2a were last all rechecked (the index's backstop). */
  private lastFullRecheckAt = Number.NEGATIVE_INFINITY;
  /**
   * Casts and 2a that only the backstop found ready: a Req became held without `reqsArrived`
   * naming it. Zero unless an arrival path is missing; the simulator fails a run that has any.
   */
  backstopHits = 0;
  /** How many times a cast was checked for what it lacks (`awaited`): see PaxosStatus. */
  lackChecks = 0;
  private inBackstop = false;
  /** Leader: casts it lacks Reqs for (`missing`), by op key; proposed once they arrive. */
  private readonly castsWaiting = new Map<
    string,
    { readonly cast: CastId; readonly since: number }
  >();
  /** Acceptor: per instance, the latest 2a it lacks Reqs for; accepted once they arrive. */
  private readonly acceptsWaiting = new Map<
    number,
    {
      readonly from: number;
      readonly ballot: number;
      readonly value: Batch;
      readonly since: number;
      /**
       * Casts of `value` before this index lacked nothing when last checked, and never will (a
       * replica does not lose Reqs): a recheck resumes here, so a batch of k casts costs O(k)
       * checks in all, not one scan from its start per arrival.
       */
      checked: number;
    }
  >();
  /**
   * When this replica last asked gossip for what its waiting casts and 2a lack. Usually the Reqs
   * are on their way (a push that nothing waits for may linger, and travels apart from the 2a), so
   * it asks only for what has waited a retransmit period, and at most once per period.
   */
  private lastWantAt = Number.NEGATIVE_INFINITY;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext, options: PaxosOptions) {
    this.ctx = ctx;
    this.roles = ctx.roles;
    this.missing = options.missing ?? (() => []);
    const missing = this.missing;
    const firstLack =
      options.awaited ??
      ((id: OpId) => {
        const lacking = missing(id)[0];
        return lacking === undefined ? null : { id: lacking, prefix: false };
      });
    this.receivedUpTo = options.receivedUpTo ?? (() => 0);
    // Counted: the work of waiting for Reqs, which must not grow with how far behind this is.
    this.awaited = (id) => {
      this.lackChecks++;
      return firstLack(id);
    };
  }

  /**
   * Reqs arrived (`arrived`: their ids): waiting casts and 2a that lacked them are checked again,
   * and proposed or accepted once nothing is lacking. Without `arrived`, everything waiting is
   * checked (what a driver that cannot name the arrivals calls).
   */
  reqsArrived(arrived?: readonly OpId[]): void {
    if (arrived === undefined) this.recheckAll();
    else {
      const casts = new Set<string>();
      for (const w of this.waits.arrived(arrived, this.receivedUpTo)) {
        if ('instance' in w) this.recheckAccept(w.instance);
        else casts.add(w.cast);
      }
      this.recheckCasts(casts);
    }
    if (this.acceptsWaiting.size === 0 && this.castsWaiting.size === 0) this.waits.clear();
  }

  /** Every waiting cast and 2a, checked again (and filed again under what each lacks now). */
  private recheckAll(): void {
    this.lastFullRecheckAt = this.ctx.now;
    this.waits.clear();
    for (const instance of [...this.acceptsWaiting.keys()]) this.recheckAccept(instance);
    this.recheckCasts(new Set(this.castsWaiting.keys()));
  }

  private recheckAccept(instance: number): void {
    const a = this.acceptsWaiting.get(instance);
    if (a === undefined) return;
    if (this.roles.learner.isDecided(instance)) {
      this.acceptsWaiting.delete(instance);
      return;
    }
    const { lacking, at } = this.firstLacking(a.value, a.checked);
    a.checked = at;
    if (lacking !== null) this.waits.file(lacking, { instance });
    else {
      if (this.inBackstop) this.backstopHits++;
      this.acceptsWaiting.delete(instance);
      this.roles.acceptor.onAccept(a.from, a.ballot, instance, a.value);
    }
  }

  private recheckCasts(keys: Iterable<string>): void {
    // Casts wait only at a leader (cleared on stepping down).
    if (this.roles.election.role !== 'leader') return;
    const ready: CastId[] = [];
    for (const key of keys) {
      const w = this.castsWaiting.get(key);
      if (w === undefined) continue;
      const lacking = this.awaited(w.cast.id);
      if (lacking !== null) this.waits.file(lacking, { cast: key });
      else {
        if (this.inBackstop) this.backstopHits++;
        this.castsWaiting.delete(key);
        ready.push(w.cast);
      }
    }
    if (ready.length > 0) this.roles.proposer.enqueue(ready);
  }

  /**
   * The first Req any cast of `value` from index `from` on lacks, or null; `at`: the index of the
   * cast that lacks it (the length when none does).
   */
  firstLacking(value: Batch, from = 0): { lacking: Awaited | null; at: number } {
    for (let i = from; i < value.length; i++) {
      const e = value[i]!;
      if (!isCast(e)) continue; // a membership change needs no Req
      const lacking = this.awaited(e.id);
      if (lacking !== null) return { lacking, at: i };
    }
    return { lacking: null, at: value.length };
  }

  /**
   * Cast `c` (op key `key`) reached the leader: true when it lacks a Req, and waits for it here;
   * false when it lacks nothing (and waits no more).
   */
  castWaits(c: CastId, key: string): boolean {
    const lacking = this.awaited(c.id);
    if (lacking !== null) {
      if (!this.castsWaiting.has(key)) this.castsWaiting.set(key, { cast: c, since: this.ctx.now });
      this.waits.file(lacking, { cast: key });
      return true;
    }
    this.castsWaiting.delete(key);
    return false;
  }

  /**
   * A 2a whose casts from index `at` on lack Reqs (`lacking` first): it waits until they arrive,
   * unless a 2a of a higher ballot for the instance waits already.
   */
  holdAccept(
    from: number,
    ballot: number,
    instance: number,
    value: Batch,
    lacking: Awaited,
    at: number,
  ): void {
    const waiting = this.acceptsWaiting.get(instance);
    if (waiting === undefined || waiting.ballot <= ballot) {
      this.acceptsWaiting.set(instance, {
        from,
        ballot,
        value,
        since: waiting?.since ?? this.ctx.now,
        checked: at,
      });
      this.waits.file(lacking, { instance });
    }
  }

  /** A 2a of `ballot` for `instance` waits here for Reqs. */
  acceptWaits(instance: number, ballot: number): boolean {
    return this.acceptsWaiting.get(instance)?.ballot === ballot;
  }

  /** The leader stood down, or was elected: no cast waits for it any more. */
  dropCasts(): void {
    this.castsWaiting.clear();
  }

  /** Asks gossip for what casts and 2a that waited a retransmit period still lack. */
  wantMissing(): void {
    const ctx = this.ctx;
    if (this.castsWaiting.size === 0 && this.acceptsWaiting.size === 0) return;
    if (ctx.now - this.lastWantAt < ctx.retransmitMs) return;
    const due = ctx.now - ctx.retransmitMs;
    // Bounded: a replica far behind lacks thousands; the next pull asks for the rest.
    const ids: OpId[] = [];
    const asked = new Set<string>();
    const ask = (lacking: readonly OpId[]): void => {
      for (const id of lacking) {
        const key = opKey(id);
        if (ids.length < MAX_WANTED && !asked.has(key)) {
          asked.add(key);
          ids.push(id);
        }
      }
    };
    for (const { cast, since } of this.castsWaiting.values())
      if (since <= due && ids.length < MAX_WANTED) ask(this.missing(cast.id));
    for (const [instance, a] of this.acceptsWaiting) {
      if (ids.length >= MAX_WANTED) break;
      if (this.roles.learner.isDecided(instance)) continue;
      if (a.since <= due) for (const c of a.value) if (isCast(c)) ask(this.missing(c.id));
    }
    if (ids.length === 0) return;
    this.lastWantAt = ctx.now;
    ctx.emit({ type: 'want', ids });
  }

  /**
   * The index's backstop: should a Req ever become held without `reqsArrived` naming it, what
   * waited on it is picked up here, a few election timeouts late rather than never.
   */
  backstop(): void {
    if (
      (this.acceptsWaiting.size > 0 || this.castsWaiting.size > 0) &&
      this.ctx.now - this.lastFullRecheckAt >= 4 * this.ctx.electionTimeoutMs
    ) {
      this.inBackstop = true;
      this.recheckAll();
      this.inBackstop = false;
    }
  }
}
