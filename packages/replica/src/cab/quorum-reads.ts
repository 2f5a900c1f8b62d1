import { CONFIG_DELAY } from './configuration.js';
import type { PaxosContext } from './context.js';
import type { PaxosMessage } from './messages.js';
import type { Roles } from './roles.js';

/** A strong read this replica asked the members' frontiers for. */
interface Asked {
  readonly key: number;
  /** Each member that answered, and the frontier it reported. */
  readonly frontiers: Map<number, number>;
  sentAt: number;
}

/**
 * Quorum reads (docs/architecture/beyond-one-leader.md): a replica serving a strong read-only op
 * asks every member directly for its frontier, one past the highest instance it accepted (or its
 * decided prefix, when that is further), instead of asking the leader for a read index. Across
 * regions that costs the round trip to the nearest majority rather than to the leader and on
 * from it.
 *
 * Why it is linearizable: a strong op that completed before the read began was chosen, so a
 * majority of its instance's configuration had accepted it, and any majority that answers after
 * the read began holds one of them: its instance lies below the highest frontier reported, the
 * read index. The answer comes from the committed state once every instance below it is
 * delivered (as with a read index). No ballot is checked: a frontier is a fact about accepts, not
 * a leader's claim about what it opened.
 *
 * Membership changes: the answering set must be a majority of every configuration that could hold
 * such an op beyond the index, which are those of instances [index, index + CONFIG_DELAY) once
 * every instance below the index is decided (a configuration beyond those is decided at or above
 * the index, and a decision there before the read began would have raised some answer's frontier
 * past it). So the index is taken once the answers form such a majority and this replica has
 * decided up to it; more answers in the meantime only raise it.
 *
 * A rejoining replica (one that may have forgotten what it accepted) does not answer.
 */
export class QuorumReads {
  private readonly asked = new Map<string, Asked>();
  private counter = 0;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(
    ctx: PaxosContext,
    /** A planted bug: the first answer is taken for a majority. Only the simulator wants it. */
    private readonly unsafeSingleAnswer = false,
  ) {
    this.ctx = ctx;
    this.roles = ctx.roles;
  }

  /** Reads asked here still wait for their index. */
  get waiting(): boolean {
    return this.asked.size > 0;
  }

  /** A strong read-only op asks every member for its frontier. */
  request(key: number): void {
    const nonce = `q${Math.floor(this.ctx.now)}.${++this.counter}`;
    const a: Asked = { key, frontiers: new Map(), sentAt: this.ctx.now };
    this.asked.set(nonce, a);
    if (!this.roles.rejoin.rejoining) a.frontiers.set(this.ctx.self, this.frontier());
    this.ask(nonce, a);
    this.maybeAnswer(nonce, a);
  }

  private ask(nonce: string, a: Asked): void {
    a.sentAt = this.ctx.now;
    for (const r of this.ctx.peers())
      if (r !== this.ctx.self && !a.frontiers.has(r))
        this.ctx.send(r, { type: 'frontierAsk', nonces: [nonce] });
  }

  /** One past the highest instance this acceptor accepted, or its decided prefix if further. */
  private frontier(): number {
    return this.roles.acceptor.acceptedBelow(this.ctx.decidedBelow);
  }

  onFrontierAsk(from: number, msg: Extract<PaxosMessage, { type: 'frontierAsk' }>): void {
    if (this.roles.rejoin.rejoining) return;
    this.ctx.send(from, { type: 'frontier', nonces: msg.nonces, below: this.frontier() });
  }

  onFrontier(from: number, msg: Extract<PaxosMessage, { type: 'frontier' }>): void {
    for (const nonce of msg.nonces) {
      const a = this.asked.get(nonce);
      if (a === undefined) continue;
      a.frontiers.set(from, Math.max(a.frontiers.get(from) ?? 0, msg.below));
      this.maybeAnswer(nonce, a);
    }
  }

  /** Asks again those that did not answer, and answers what the decisions since made ready. */
  tick(): void {
    for (const [nonce, a] of [...this.asked]) {
      if (this.ctx.now - a.sentAt >= this.ctx.retransmitMs) this.ask(nonce, a);
      this.maybeAnswer(nonce, a);
    }
  }

  private maybeAnswer(nonce: string, a: Asked): void {
    const ctx = this.ctx;
    let index = 0;
    for (const f of a.frontiers.values()) index = Math.max(index, f);
    const answered = new Set(a.frontiers.keys());
    if (this.unsafeSingleAnswer) {
      if (answered.size === 0) return;
    } else {
      if (ctx.decidedBelow < index) return; // configurations up to index + CONFIG_DELAY unknown
      if (!this.majorityFrom(index, answered)) return;
    }
    this.asked.delete(nonce);
    ctx.emit({ type: 'readIndex', key: a.key, index });
  }

  /** `answered` hold a majority of every configuration of instances [index, index + CONFIG_DELAY). */
  private majorityFrom(index: number, answered: ReadonlySet<number>): boolean {
    const ctx = this.ctx;
    const end = index + CONFIG_DELAY;
    if (!ctx.configKnown(end - 1) || !ctx.isQuorum(index, answered)) return false;
    for (const e of ctx.history.all())
      if (e.from > index && e.from < end && !ctx.isQuorum(e.from, answered)) return false;
    return true;
  }
}
