import { ConfigHistory, type ConfigEntry } from './configuration.js';
import type { AcceptedEntry, AcceptorRecord, Batch } from './messages.js';
import type { PaxosContext } from './context.js';
import type { PaxosRecovery } from './paxos-types.js';
import type { AcceptorRole, Roles } from './roles.js';

/**
 * The acceptor, every replica's part in both phases, and its durable state: the ballot it promised,
 * the value it accepted per instance, and its truncation point. A promise or an accept is a
 * `persist` output placed before the messages that depend on it; the driver makes it durable
 * before acting on anything after it.
 */
export class Acceptor implements AcceptorRole {
  promised = 0;
  private readonly accepted = new Map<number, { ballot: number; value: Batch }>();
  truncatedBelow = 0;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext) {
    this.ctx = ctx;
    this.roles = ctx.roles;
  }

  /** Rebuilds the durable state from its records (the configurations' included). */
  recover(recovery: PaxosRecovery): void {
    const configs: ConfigEntry[] = [];
    for (const r of recovery.records) {
      if (r.kind === 'config') configs.push(r.entry);
      else if (r.kind === 'promise') this.promised = Math.max(this.promised, r.ballot);
      else if (r.kind === 'accept') {
        this.promised = Math.max(this.promised, r.ballot);
        const prev = this.accepted.get(r.instance);
        if (prev === undefined || prev.ballot <= r.ballot)
          this.accepted.set(r.instance, { ballot: r.ballot, value: r.value });
      } else {
        this.truncatedBelow = Math.max(this.truncatedBelow, r.below);
      }
    }
    for (const i of [...this.accepted.keys()]) if (i < this.truncatedBelow) this.accepted.delete(i);
    // Each configuration record is one entry; a checkpoint's replace the older ones (same `from`).
    if (configs.length > 0) {
      const byFrom = new Map<number, ConfigEntry>();
      for (const e of configs) byFrom.set(e.from, e);
      this.ctx.history = new ConfigHistory([...byFrom.values()]);
    }
  }

  onPrepare(from: number, ballot: number, fromInstance: number): void {
    const { election, learner } = this.roles;
    election.seeBallot(ballot);
    if (this.roles.rejoin.rejoining) return; // no promise it could not keep (`noDurableVotes`)
    if (this.roles.reconfiguration.tellPassed(from, fromInstance)) return;
    if (ballot < this.promised) {
      this.ctx.send(from, { type: 'nack', ballot, promised: this.promised });
      return;
    }
    if (ballot > this.promised) {
      this.promise(ballot);
      election.promisedTo(ballot);
    }
    election.standDownFor(ballot);
    const accepted: AcceptedEntry[] = [];
    for (const [instance, a] of this.accepted) {
      if (instance >= fromInstance && !learner.holdsDecision(instance))
        accepted.push({ instance, ballot: a.ballot, value: a.value });
    }
    this.ctx.send(from, {
      type: 'promise',
      ballot,
      accepted,
      decided: learner.decisionsFrom(fromInstance),
      truncatedBelow: this.truncatedBelow,
    });
  }

  onAccept(from: number, ballot: number, instance: number, value: Batch): void {
    const { election, waiting } = this.roles;
    election.seeBallot(ballot);
    if (this.roles.rejoin.rejoining) return; // no vote it could not keep (`noDurableVotes`)
    if (ballot < this.promised) {
      this.ctx.send(from, { type: 'nack', ballot, promised: this.promised });
      return;
    }
    const { lacking, at } = this.roles.learner.isDecided(instance)
      ? { lacking: null, at: 0 }
      : waiting.firstLacking(value);
    if (lacking !== null) {
      // Not a vote yet (and no promise): the 2a waits here for the Reqs (`reqsArrived`).
      waiting.holdAccept(from, ballot, instance, value, lacking, at);
      return;
    }
    this.promised = ballot;
    election.standDownFor(ballot);
    if (instance < this.truncatedBelow) return;
    const prev = this.accepted.get(instance);
    if (prev === undefined || prev.ballot !== ballot) {
      this.accepted.set(instance, { ballot, value });
      this.ctx.emit({ type: 'persist', record: { kind: 'accept', instance, ballot, value } });
    }
    this.ctx.broadcast({ type: 'accepted', ballot, instance });
  }

  /** Promises `ballot`, durably. */
  promise(ballot: number): void {
    this.promised = ballot;
    this.ctx.emit({ type: 'persist', record: { kind: 'promise', ballot } });
  }

  acceptedAt(instance: number): { readonly ballot: number; readonly value: Batch } | undefined {
    return this.accepted.get(instance);
  }

  /** One past the highest instance this acceptor accepted a value for, at least `below`. */
  acceptedBelow(below: number): number {
    for (const i of this.accepted.keys()) if (i >= below) below = i + 1;
    return below;
  }

  /** Drops the instances from the truncation point to `below`: every replica delivered them. */
  truncate(below: number): void {
    for (let i = this.truncatedBelow; i < below; i++) this.accepted.delete(i);
    this.ctx.counters.truncated += below - this.truncatedBelow;
    this.truncatedBelow = below;
    this.ctx.history.compact(below);
    this.ctx.emit({ type: 'persist', record: { kind: 'truncate', below } });
  }

  /** Truncated here too when the learner jumps to `below`: it never has to serve what it skipped. */
  skipTo(below: number): void {
    if (below > this.truncatedBelow) {
      for (const i of [...this.accepted.keys()]) if (i < below) this.accepted.delete(i);
      this.truncatedBelow = below;
      this.ctx.history.compact(below);
      this.ctx.emit({ type: 'persist', record: { kind: 'truncate', below } });
    }
  }

  get acceptedHeld(): number {
    return this.accepted.size;
  }

  /**
   * The acceptor's durable state, compacted: the records that rebuild it (`recovery`) in place of
   * every acceptor record written so far. Its promise, the truncation point, and the value accepted
   * for each instance not truncated. Every value here was persisted before it was acted on, so the
   * driver may write these and drop the older records (a checkpoint does, atomically).
   */
  durableState(): AcceptorRecord[] {
    const out: AcceptorRecord[] = [];
    if (this.promised > 0 || this.roles.rejoin.rejoined)
      out.push({ kind: 'promise', ballot: this.promised });
    if (this.truncatedBelow > 0) out.push({ kind: 'truncate', below: this.truncatedBelow });
    for (const entry of this.ctx.history.all()) out.push({ kind: 'config', entry });
    for (const [instance, a] of [...this.accepted].sort((x, y) => x[0] - y[0]))
      out.push({ kind: 'accept', instance, ballot: a.ballot, value: a.value });
    return out;
  }
}
