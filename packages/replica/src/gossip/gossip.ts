/**
 * Creek's reliable broadcast of Reqs (Creek §3.2: validity, integrity, agreement) over links that
 * lose, duplicate and reorder messages and may be partitioned for a while, plus the fetch of a Req
 * that CAB decided but this replica lacks (Creek §5, the "no loss" requirement on RB-deliver).
 *
 * A pure, deterministic state machine (DESIGN.md, "the central rule"): one per replica, fed with
 * `cast`, `receive`, `tick(now)` and `want`, answering with outputs (`send`, `deliver`). No timers,
 * clocks, randomness or I/O; the simulator and the runtime drive it.
 *
 * - Eager push: `cast` sends the new Req to every other replica at once (validity, low latency).
 * - Integrity: the ids seen are a dotted version vector; a Req is delivered only the first time its
 *   id is seen, so duplicates and repairs are harmless, and the seen-set stays as small as the gaps
 *   in delivery (contiguous prefix per origin plus out-of-order dots), not one entry per Req.
 * - Agreement: anti-entropy. Every `antiEntropyIntervalMs` a replica sends the DVV of what it has
 *   seen; a receiver answers with the Reqs the sender lacks (bounded per reply, so a long outage
 *   heals over several rounds). Because every replica keeps every Req until all peers are known to
 *   have it (`prune`), any Req one correct replica delivered is eventually offered to all others once
 *   the links carry messages again. Delivered Reqs are not re-pushed by receivers: with n = 3..7 and
 *   a short interval, anti-entropy repairs a lost push within about one interval plus a round trip,
 *   and eager relaying would multiply the steady-state traffic by n - 1.
 * - `want`: pull specific Reqs from every peer, re-asked each anti-entropy round until they arrive.
 * - Lost own ops: a peer's summary or push that holds an op of this replica's own that it has no
 *   record of, or a summary that says the peer wants one (it knows its id from a forwarded cast),
 *   means the replica lost durable state (it persists each Req before casting it); gossip
 *   reports `unknownOwnOp` once and stops, so the replica never reuses an id the cluster holds.
 *   Likewise a pull answered `gone` for a Req this replica lacks (`droppedByPeer`): peers drop a Req
 *   only once every replica holds it, so this one had it and lost it, and nobody can send it.
 */
import { DottedVersionVector } from '../core/dvv.js';
import { incarnationOf, opKey, slotOf, type OpId } from '../core/op-id.js';
import type { Req } from '../core/types.js';
import type { GossipMessage, GossipOutput } from './messages.js';
import { ReqStore, reqSize } from './req-store.js';

export interface GossipOptions {
  /** This replica's id. */
  readonly self: number;
  /**
   * Every replica id of the cluster, `self` included (or not, for a replica not yet a member).
   * Messages from other senders are ignored. `setPeers` changes them (membership changes).
   */
  readonly peers: readonly number[];
  /**
   * The origin of this replica's own op ids (core/op-id.ts: `self` in its first incarnation, the
   * default), whose ops it never lacks unless it lost them (`unknownOwnOp`). Null: the replica
   * has no origin yet (a new or wiped one still learning, ReplicaHost): every op is another's, its
   * slot's ops of earlier incarnations included (`setOrigin` once it has one).
   */
  readonly origin?: number | null;
  /** Time between anti-entropy rounds (summary sends and re-sent pulls). Default 50. */
  readonly antiEntropyIntervalMs?: number;
  /**
   * How many peers get this replica's summary each round, chosen round-robin. Default: all other
   * peers. A summary is O(origins + dots) numbers, so for Creek's clusters (n = 3..7) sending it to
   * everyone each round costs little and heals a partition within about one round plus a round trip
   * after the links come back, instead of up to n - 1 rounds for one peer per round. With a smaller
   * fanout, a replica that receives a summary and lacks something the sender has answers with its
   * own summary too (push-pull), so every contact repairs both directions.
   */
  readonly fanout?: number;
  /** Most Reqs sent in one anti-entropy or pull answer. Default 256. */
  readonly maxReqsPerReply?: number;
}

export interface GossipStats {
  /** Reqs kept to serve peers (until `prune` drops them). */
  readonly heldReqs: number;
  /** Dots in the seen-set: ids known above the contiguous per-origin prefixes. */
  readonly dots: number;
  /** Ids asked for with `want` that have not arrived yet. */
  readonly wanted: number;
}

export const DEFAULT_ANTI_ENTROPY_INTERVAL_MS = 50;
export const DEFAULT_MAX_REQS_PER_REPLY = 256;
/**
 * About how many characters of Reqs one anti-entropy answer carries (req-store.ts `reqSize`): a
 * third of the protocol's 1 MiB frame limit, which holds however many bytes a character takes.
 * Counting Reqs alone let a reply of large ops pass the limit, and the receiver dropped it unread.
 */
export const MAX_REPLY_CHARS = 340_000;

export class Gossip {
  readonly self: number;
  /** The other replicas, ascending (`setPeers`). */
  private _others: readonly number[];
  get others(): readonly number[] {
    return this._others;
  }
  readonly antiEntropyIntervalMs: number;
  private readonly fanoutOption: number | undefined;
  private _fanout: number;
  get fanout(): number {
    return this._fanout;
  }
  readonly maxReqsPerReply: number;
  private pushPull: boolean;

  /** Every Req id this replica has (cast, delivered or recovered). */
  private readonly seen = new DottedVersionVector();
  /** The Reqs kept to serve peers. */
  private readonly store = new ReqStore();
  /**
   * What each peer is known to have: its latest summary, plus the Reqs it sent us since. A newer
   * summary replaces the old knowledge rather than merging with it, so a peer that restarted with
   * fewer Reqs than it once reported is no longer counted as having them.
   */
  private readonly peerSeen = new Map<number, DottedVersionVector>();
  /** Ids asked for with `want`, in the order asked, until they arrive. */
  private readonly wanted = new Map<string, OpId>();
  private lastRoundAt: number | null = null;
  /** Peers whose summary (everything they hold) arrived since this Gossip started. */
  private readonly summarizedBy = new Set<number>();
  /** `unknownOwnOp` or `droppedByPeer` was reported: nothing more is delivered or answered. */
  private lostState = false;
  /** Index into `others` of the next summary target when fanout < others.length. */
  private nextTarget: number;
  /** GossipOptions.origin. */
  private origin: number | null;
  /** Per peer, what its latest summary says it can no longer send (GossipMessage `pruned`). */
  private readonly peerPruned = new Map<number, Readonly<Record<string, number>>>();
  /** When this Gossip first ticked: its summaries say so (`boot`), peers echo it (`echoedByAll`). */
  private boot: number | null = null;
  /** Per peer, the `boot` of its latest summary, echoed back to it in ours. */
  private readonly peerBoot = new Map<number, number>();
  /** Per peer, the `echo` of its latest summary: the boot of our summary it last had. */
  private readonly peerEcho = new Map<number, number | null>();
  /** Origins of this slot that peers' summaries wanted ops of (`knownOrigins`). */
  private readonly wantedOwn = new Set<number>();
  /** Per peer, the later incarnation its summaries named as its origin (`knownOrigins`). */
  private readonly peerOrigin = new Map<number, number>();

  constructor(options: GossipOptions) {
    const { self, peers } = options;
    if (!Number.isInteger(self)) throw new Error(`gossip: self must be an integer, got ${self}`);
    const unique = new Set(peers);
    if (unique.size !== peers.length) throw new Error('gossip: peers must be distinct');
    for (const p of peers)
      if (!Number.isInteger(p)) throw new Error(`gossip: peer ids must be integers, got ${p}`);
    const interval = options.antiEntropyIntervalMs ?? DEFAULT_ANTI_ENTROPY_INTERVAL_MS;
    if (!(interval > 0)) throw new Error('gossip: antiEntropyIntervalMs must be positive');
    const maxReqs = options.maxReqsPerReply ?? DEFAULT_MAX_REQS_PER_REPLY;
    if (!Number.isInteger(maxReqs) || maxReqs < 1)
      throw new Error('gossip: maxReqsPerReply must be a positive integer');

    this.self = self;
    this.origin = options.origin === undefined ? self : options.origin;
    this.antiEntropyIntervalMs = interval;
    if (options.fanout !== undefined && !(Number.isInteger(options.fanout) && options.fanout >= 1))
      throw new Error('gossip: fanout must be a positive integer');
    this.fanoutOption = options.fanout;
    this.maxReqsPerReply = maxReqs;
    this._others = [];
    this._fanout = 0;
    this.pushPull = false;
    this.nextTarget = 0;
    this.setPeers(peers);
  }

  /**
   * The cluster's members changed (cab/configuration.ts): from now on this replica pushes to,
   * summarizes for, pulls from and waits for (`prune`, `peersSummarized`) these, and ignores the
   * rest. What it knows of a peer that stays is kept.
   */
  setPeers(peers: readonly number[]): void {
    const self = this.self;
    this._others = [...new Set(peers)].filter((p) => p !== self).sort((a, b) => a - b);
    for (const p of [...this.peerSeen.keys()]) if (!this._others.includes(p)) this.forget(p);
    this._fanout = Math.min(this.fanoutOption ?? this._others.length, this._others.length);
    this.pushPull = this._fanout < this._others.length;
    // Start the round-robin just after self on the ring, so replicas do not all pick the same peer.
    const after = this._others.findIndex((p) => p > self);
    this.nextTarget = after < 0 ? 0 : after;
  }

  /** A replica that left the cluster: nothing it reported counts any more. */
  private forget(peer: number): void {
    this.peerSeen.delete(peer);
    this.peerPruned.delete(peer);
    this.summarizedBy.delete(peer);
    this.peerBoot.delete(peer);
    this.peerEcho.delete(peer);
  }

  /**
   * Rebuilds after a restart from the Reqs the replica kept durably: they count as seen (never
   * delivered again by this object) and are kept to serve peers. Delivers nothing. Call it before
   * feeding any other input; the first `tick` then starts anti-entropy, which fetches the rest.
   * `seen`: ids the replica has without their Reqs (final ops a checkpoint summed up): seen, so
   * never delivered again, but not held, so not served.
   */
  recover(reqs: Iterable<Req>, seen?: DottedVersionVector): void {
    for (const req of reqs) this.remember(req);
    if (seen !== undefined) this.seen.addAll(seen);
  }

  /**
   * RB-cast of a Req this replica created (or recovered and is re-broadcasting): pushes it to every
   * other replica. It counts as delivered here, so no `deliver` output is made for it.
   */
  cast(req: Req): GossipOutput[] {
    this.remember(req);
    // One message for every peer: messages are never changed, and a driver may encode it once.
    const push: GossipMessage = { kind: 'push', reqs: [req] };
    return this.others.map((to) => lazySend(to, push));
  }

  /** A message from peer `from`. Messages from ids outside `peers` (or from self) are ignored. */
  receive(from: number, msg: GossipMessage): GossipOutput[] {
    if (from === this.self || !this.others.includes(from) || this.lostState) return [];
    switch (msg.kind) {
      case 'push':
        return this.onPush(from, msg.reqs);
      case 'summary':
        if (msg.pruned === undefined) this.peerPruned.delete(from);
        else this.peerPruned.set(from, msg.pruned);
        if (msg.boot !== undefined) this.peerBoot.set(from, msg.boot);
        this.peerEcho.set(from, msg.echo ?? null);
        // Only the sender's own slot: a peer cannot declare another replica's origin dead.
        if (msg.origin !== undefined && slotOf(msg.origin) === from)
          this.peerOrigin.set(from, Math.max(msg.origin, this.peerOrigin.get(from) ?? 0));
        return this.onSummary(from, msg.seen, msg.reply, msg.wanted ?? []);
      case 'pull':
        return this.onPull(from, msg.ids);
      case 'gone':
        return this.onGone(from, msg.ids);
      default:
        return [];
    }
  }

  /**
   * Time passes. At most once per `antiEntropyIntervalMs` (and on the first call), sends this
   * replica's summary to `fanout` peers and asks every peer again for ids still wanted (at most
   * maxReqsPerReply per round, rotating through them).
   */
  tick(nowMs: number): GossipOutput[] {
    this.boot ??= nowMs;
    if (this.lastRoundAt !== null && nowMs - this.lastRoundAt < this.antiEntropyIntervalMs)
      return [];
    this.lastRoundAt = nowMs;
    const out: GossipOutput[] = [];
    const seen = this.seen.toJSON();
    const pruned = this.prunedJson();
    for (const to of this.summaryTargets())
      out.push(
        send(to, {
          kind: 'summary',
          seen,
          reply: false,
          ...this.wantedOf(to),
          ...pruned,
          ...this.bootOf(to),
          ...this.laterOrigin(),
        }),
      );
    if (this.wanted.size > 0) out.push(...this.pulls(this.rotateWanted()));
    return out;
  }

  /**
   * The replica needs these Reqs (CAB decided a strong op whose Req, or a Req of its causal context,
   * has not arrived: Creek §5 "no loss"). Ids already seen are skipped; the rest are pulled from
   * every peer now and again each anti-entropy round until they are delivered.
   */
  want(ids: Iterable<OpId>): GossipOutput[] {
    const ask: OpId[] = [];
    const asked = new Set<string>();
    for (const id of ids) {
      const key = opKey(id);
      if (this.seen.has(id) || asked.has(key)) continue;
      asked.add(key);
      if (!this.wanted.has(key)) this.wanted.set(key, { replica: id.replica, eventNo: id.eventNo });
      ask.push(id);
    }
    return this.pulls(ask);
  }

  /**
   * Drops held Reqs that are in `stable` and that every other replica is known to have (from its
   * summaries and the Reqs it sent). Per origin it goes from the lowest event number up to the
   * first Req that must stay (ops become final, and reach every replica, in about that order; the
   * rest go in a later call), so a call costs what it drops. Returns how many were dropped. Dropped
   * ids stay in the seen-set, so they are never delivered again.
   *
   * `stable` (a set, or a predicate) should only contain ids no replica can lose any more (e.g.
   * durable at every replica and committed), because a replica that restarts without a Req it
   * once reported could then not get it back from anyone. The host passes the ops final at this
   * replica; its drivers send a summary or a push only once the Reqs it covers are durable, so a
   * peer that reported a Req still has it after a restart (in its records, or in a checkpoint: as
   * a Req while it can change or may be needed by a peer, as state once final).
   */
  prune(stable: DottedVersionVector | ((id: OpId) => boolean)): number {
    const isStable = typeof stable === 'function' ? stable : (id: OpId) => stable.has(id);
    return this.store.dropPrefixes(
      (req) =>
        isStable(req.id) && this.others.every((p) => this.peerSeen.get(p)?.has(req.id) === true),
    );
  }

  /** Whether a peer other than `peer` is not known to have the Req of `id`. */
  lackedBeyond(id: OpId, peer: number): boolean {
    return this.others.some((p) => p !== peer && this.peerSeen.get(p)?.has(id) !== true);
  }

  /** Every Req held to serve peers (a checkpoint keeps them, so a restart can still serve them). */
  heldReqs(): Req[] {
    return this.store.all();
  }

  /**
   * How many peers have sent a summary since this Gossip started, none of which held an op of
   * this replica's own that it lacks (a replica with no op of its own waits for all of them before it
   * takes ops: ReplicaHost.learningFromPeers).
   */
  peersSummarized(): number {
    return this.summarizedBy.size;
  }

  /**
   * How far behind this replica is: the most ops one peer is known to hold (its latest summary)
   * that this replica has not seen, counting each origin's contiguous prefix only. A few are always
   * in flight; thousands mean a catch-up (ReplicaHost holds speculation meanwhile).
   */
  behind(): number {
    return this.furthestAhead()?.lacking ?? 0;
  }

  /** The peer whose latest summary holds the most ops this replica lacks (see `behind`). */
  furthestAhead(): { readonly peer: number; readonly lacking: number } | null {
    let best: { peer: number; lacking: number } | null = null;
    for (const [peer, theirs] of this.peerSeen) {
      let n = 0;
      theirs.forEachBase((origin, base) => {
        n += Math.max(0, base - this.seen.base(origin));
      });
      if (n > (best?.lacking ?? 0)) best = { peer, lacking: n };
    }
    return best;
  }

  /**
   * No peer's latest summary echoes an earlier process of this replica: a peer that still judges
   * it by what that process reported might prune ops this one lacks, so a wiped replica decides its
   * origin only once each such peer has had a summary of this process (ReplicaHost
   * `decideOrigin`). A peer with no summary of it prunes nothing; in a new cluster nobody echoes
   * an earlier process, so nothing waits.
   */
  echoedByAll(): boolean {
    if (this.boot === null) return false;
    for (const p of this.others) {
      const echo = this.peerEcho.get(p);
      if (echo !== undefined && echo !== null && echo !== this.boot) return false;
    }
    return true;
  }

  /**
   * The peers a replica with no origin still waits for (`peersSummarized`, `echoedByAll`): those
   * it has no summary from, and those whose latest summary echoes an earlier process of it.
   */
  summariesAwaited(): number[] {
    return this.others.filter((p) => {
      const echo = this.peerEcho.get(p);
      return (
        !this.summarizedBy.has(p) ||
        (this.boot !== null && echo !== undefined && echo !== null && echo !== this.boot)
      );
    });
  }

  /** The boot fields of a summary to `to` (GossipMessage `boot`, `echo`). */
  private bootOf(to: number): { boot?: number; echo?: number } {
    const echo = this.peerBoot.get(to);
    return {
      ...(this.boot === null ? {} : { boot: this.boot }),
      ...(echo === undefined ? {} : { echo }),
    };
  }

  /** The summary's `origin` (GossipMessage): only a later incarnation's is news to its peers. */
  private laterOrigin(): { origin?: number } {
    return this.origin !== null && incarnationOf(this.origin) > 0 ? { origin: this.origin } : {};
  }

  /**
   * A peer that can no longer send an op this replica lacks (its summary's `pruned`), or null.
   * Such an op comes back only with a checkpoint (state transfer). `closedCut`: the cut of an
   * origin whose close committed here (core/closing-origins.ts), whose ops above it nobody needs.
   */
  compactedAtPeer(
    closedCut: (origin: number) => number | undefined = () => undefined,
  ): number | null {
    for (const [peer, pruned] of this.peerPruned)
      for (const [origin, upTo] of Object.entries(pruned)) {
        const base = this.seen.base(Number(origin));
        if (upTo <= base) continue;
        // A closed origin's ops above its cut are definitely not applied: a peer that pruned
        // them pruned nothing this replica needs, once it has the origin's ops up to the cut.
        const cut = closedCut(Number(origin));
        if (cut !== undefined && base >= cut) continue;
        return peer;
      }
    return null;
  }

  /**
   * Per origin, the highest event number up to which this replica has seen every op and holds
   * none: its contiguous prefix, or up to the first op it still holds (GossipMessage `pruned`).
   */
  private prunedJson(): { pruned?: Record<string, number> } {
    let out: Record<string, number> | undefined;
    this.seen.forEachBase((origin, base) => {
      const lowest = this.store.lowestHeld(origin);
      const upTo = lowest === undefined ? base : Math.min(base, lowest - 1);
      if (upTo > 0) (out ??= {})[String(origin)] = upTo;
    });
    return out === undefined ? {} : { pruned: out };
  }

  /** Sets the origin of a replica that had none (GossipOptions.origin). */
  setOrigin(origin: number): void {
    if (this.origin !== null) throw new Error(`gossip: the origin is ${this.origin} already`);
    this.origin = origin;
  }

  /** The most of `origin`'s ops, without a gap, that a peer's last summary says it holds. */
  peersHoldUpTo(origin: number): number {
    let most = 0;
    for (const theirs of this.peerSeen.values()) most = Math.max(most, theirs.base(origin));
    return most;
  }

  /** The origins it holds ops of. */
  heldOrigins(): number[] {
    return this.seen.origins();
  }

  /**
   * Every origin this replica knows of: in what it has seen, in what its peers' summaries say
   * they hold or name as their own, and in the ids of this slot's ops they said they want. A
   * replica choosing an incarnation takes one above all of its slot's among them.
   */
  knownOrigins(): Set<number> {
    const out = new Set([...this.seen.origins(), ...this.wantedOwn, ...this.peerOrigin.values()]);
    for (const theirs of this.peerSeen.values()) for (const o of theirs.origins()) out.add(o);
    return out;
  }

  /** True once this replica has the Req with this id (cast, delivered or recovered). */
  has(id: OpId): boolean {
    return this.seen.has(id);
  }

  /** A copy of the seen-set. */
  seenSet(): DottedVersionVector {
    return this.seen.clone();
  }

  /** The held Req with this id, if it is still kept. */
  held(id: OpId): Req | undefined {
    return this.store.get(id);
  }

  stats(): GossipStats {
    return { heldReqs: this.store.size, dots: this.seen.dotCount(), wanted: this.wanted.size };
  }

  // ---------------------------------------------------------------- handlers

  private onPush(from: number, reqs: readonly Req[]): GossipOutput[] {
    const out: GossipOutput[] = [];
    const theirs = this.knowledgeOf(from);
    for (const req of reqs) {
      theirs.add(req.id);
      if (this.seen.has(req.id)) continue;
      if (req.id.replica === this.origin) return [...out, ...this.unknownOwnOp(from, req.id)];
      this.remember(req);
      out.push({ type: 'deliver', req });
    }
    return out;
  }

  private onSummary(
    from: number,
    seenJson: Readonly<Record<string, readonly number[]>>,
    isReply: boolean,
    wanted: readonly OpId[],
  ): GossipOutput[] {
    // With no origin yet, ids of its slot's ops that a peer wants (it knows them from a forwarded
    // cast alone) name origins of earlier incarnations: the next one must be above them.
    if (this.origin === null)
      for (const id of wanted) if (slotOf(id.replica) === this.self) this.wantedOwn.add(id.replica);
    const own = this.origin === null ? undefined : seenJson[String(this.origin)];
    const unknown =
      (own === undefined ? undefined : this.firstUnseenOwn(own)) ??
      wanted.find((id) => id.replica === this.origin && !this.seen.has(id));
    if (unknown !== undefined) return this.unknownOwnOp(from, unknown);
    this.summarizedBy.add(from);
    const theirs = DottedVersionVector.fromJSON(seenJson);
    this.peerSeen.set(from, theirs);
    const out: GossipOutput[] = [];
    const missing = this.store.missingFrom(theirs, this.maxReqsPerReply, MAX_REPLY_CHARS);
    if (missing.length > 0) out.push(lazySend(from, { kind: 'push', reqs: missing }));
    // Push-pull: with fanout = all, our own next round reaches `from` anyway; otherwise tell it now
    // what we have, so it sends what we lack. Never in answer to a reply (no summary ping-pong).
    if (this.pushPull && !isReply && !this.seen.includes(theirs))
      out.push(
        send(from, {
          kind: 'summary',
          seen: this.seen.toJSON(),
          reply: true,
          ...this.wantedOf(from),
          ...this.prunedJson(),
          ...this.bootOf(from),
          ...this.laterOrigin(),
        }),
      );
    return out;
  }

  private onPull(from: number, ids: readonly OpId[]): GossipOutput[] {
    const reqs: Req[] = [];
    const gone: OpId[] = [];
    let size = 0;
    for (const id of ids) {
      if (reqs.length >= this.maxReqsPerReply) break;
      const req = this.store.get(id);
      if (req !== undefined) {
        // The first always goes (alone if it must); the rest while the answer stays small.
        if (reqs.length > 0 && size + reqSize(req) > MAX_REPLY_CHARS) break;
        reqs.push(req);
        size += reqSize(req);
      }
      // Seen and not held: pruned, so every replica had it, `from` included.
      else if (this.seen.has(id)) gone.push(id);
    }
    const out: GossipOutput[] = [];
    if (reqs.length > 0) out.push(send(from, { kind: 'push', reqs }));
    if (gone.length > 0) out.push(send(from, { kind: 'gone', ids: gone }));
    return out;
  }

  private onGone(from: number, ids: readonly OpId[]): GossipOutput[] {
    const lost = ids.find((id) => !this.seen.has(id));
    if (lost === undefined) return [];
    this.lostState = true;
    return [{ type: 'droppedByPeer', from, id: lost }];
  }

  // ---------------------------------------------------------------- helpers

  /**
   * For a summary to `to`: the ids of `to`'s own ops this replica wants (GossipMessage `wanted`).
   * A replica whose disk was lost learns from them that a peer knows of its ops by id alone.
   */
  private wantedOf(to: number): { wanted?: OpId[] } {
    let ids: OpId[] | undefined;
    for (const id of this.wanted.values()) if (slotOf(id.replica) === to) (ids ??= []).push(id);
    return ids === undefined ? {} : { wanted: ids };
  }

  /** The first of this replica's own ids in a summary entry (`[base, ...dots]`) it has not seen. */
  private firstUnseenOwn(entry: readonly number[]): OpId | undefined {
    const origin = this.origin!;
    const base = entry[0] ?? 0;
    const mine = this.seen.base(origin);
    if (base > mine) return { replica: origin, eventNo: mine + 1 };
    for (const eventNo of entry.slice(1)) {
      const id = { replica: origin, eventNo };
      if (!this.seen.has(id)) return id;
    }
    return undefined;
  }

  /**
   * A peer holds an op of ours we never cast, or lost with our durable state: report it once and
   * stop, since every op this replica would cast from now on could reuse an id the cluster has.
   */
  private unknownOwnOp(from: number, id: OpId): GossipOutput[] {
    this.lostState = true;
    return [{ type: 'unknownOwnOp', from, id }];
  }

  private remember(req: Req): void {
    if (!this.seen.has(req.id)) {
      this.seen.add(req.id);
      this.store.add(req);
    }
    this.wanted.delete(opKey(req.id));
  }

  private knowledgeOf(peer: number): DottedVersionVector {
    let v = this.peerSeen.get(peer);
    if (v === undefined) {
      v = new DottedVersionVector();
      this.peerSeen.set(peer, v);
    }
    return v;
  }

  private summaryTargets(): number[] {
    const n = this.others.length;
    if (this.fanout >= n) return [...this.others];
    const targets: number[] = [];
    for (let i = 0; i < this.fanout; i++) targets.push(this.others[(this.nextTarget + i) % n]!);
    this.nextTarget = (this.nextTarget + this.fanout) % n;
    return targets;
  }

  /**
   * The wanted ids to ask again this round: at most maxReqsPerReply, oldest first, and those asked
   * move to the back, so per-round traffic stays bounded and an id nobody answers cannot starve the
   * others.
   */
  private rotateWanted(): OpId[] {
    const ask: OpId[] = [];
    for (const [key, id] of this.wanted) {
      if (ask.length >= this.maxReqsPerReply) break;
      ask.push(id);
      this.wanted.delete(key);
    }
    for (const id of ask) this.wanted.set(opKey(id), id);
    return ask;
  }

  /** Pull messages for `ids` to every other replica, in chunks of at most maxReqsPerReply ids. */
  private pulls(ids: readonly OpId[]): GossipOutput[] {
    const out: GossipOutput[] = [];
    for (let i = 0; i < ids.length; i += this.maxReqsPerReply) {
      const chunk = ids.slice(i, i + this.maxReqsPerReply);
      for (const to of this.others) out.push(send(to, { kind: 'pull', ids: chunk }));
    }
    return out;
  }
}

function send(to: number, msg: GossipMessage): GossipOutput {
  return { type: 'send', to, msg };
}

/** A message no answer waits for (see GossipOutput). */
function lazySend(to: number, msg: GossipMessage): GossipOutput {
  return { type: 'send', to, msg, lazy: true };
}
