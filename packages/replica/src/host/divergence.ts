import type { DivergenceStatus } from '@creek/protocol';
import type { FinalDigest, FinalDigests } from '../core/final-digests.js';
import { formatOpId, type OpId } from '../core/op-id.js';
import type { Response } from '../core/types.js';
import type {
  DigestClaim,
  DivergenceMessage,
  DivergenceReport,
  OpLabel,
} from './divergence-messages.js';
import type { ReadyBuilder } from './ready.js';
import {
  digestAt,
  firstDifference,
  lastOf,
  runOf,
  sideOf,
  type DigestRun,
  type DivergenceSide,
} from './divergence-judge.js';

export type { DigestClaim, DivergenceMessage, DivergenceReport, OpLabel };

/** How often a replica asks a peer again for digests it still lacks (a lost ask, a crash). */
export const DIVERGENCE_ASK_EVERY_MS = 1000;

/** What the detector reads from the host, as it is now (a state transfer replaces the replica). */
export interface DivergenceHost {
  readonly self: number;
  /** Where its messages and events go. */
  readonly out: ReadyBuilder;
  /** The replica's digests of its finalized state (Replica.finalDigests). */
  digests(): FinalDigests;
  /** The members of the configuration in force. */
  members(): readonly number[];
}

/** A peer's digests, as it sent them. */
interface PeerDigests {
  readonly run: DigestRun;
  readonly ops: readonly (OpLabel | null)[];
}

/** A divergence this replica knows of, until every member agrees with it again. */
interface Incident {
  /** The position of the first disagreement it saw. */
  readonly detectedAt: number;
  /** Its own digests when the incident began: the positions around the cause, whatever comes. */
  readonly pinned: PeerDigests;
  /** The report a restart brought back (DivergenceRecord), until peers' digests say more. */
  readonly restored: DivergenceReport | null;
  readonly peers: Map<number, PeerDigests>;
  /** Asks sent and not yet answered with the digests wanted: the position, and when. */
  readonly asked: Map<number, { readonly at: number; readonly time: number }>;
  report: DivergenceReport | null;
}

/**
 * Catches replicas whose states differ at the same committed position, names the first op whose
 * effects differ, and decides whether this replica may go on serving stable answers. Pure: it
 * takes claims, messages and ticks, and its messages and events leave through the host's Ready.
 *
 * - **Detect.** Every gossip summary carries the sender's newest finalized position and the
 *   digest of its finalized state there (`claim`). A receiver that has finalized that position
 *   compares it with its own digest there; one that has not keeps the claim (the oldest it has
 *   not checked) until it has. Finalized states are equal at equal positions unless an op was
 *   nondeterministic, so one unequal digest is a divergence, caught one anti-entropy round after
 *   both replicas finalized the op.
 * - **Name.** Both sides then ask every peer for its digests at each position it keeps
 *   (FinalDigests), and compare them with their own: the first position where they differ, right
 *   after one where they agree, holds the first op whose effects differed.
 * - **Decide.** A replica goes on serving while a majority of the members' newest claims agree
 *   with its state; otherwise (the minority, everyone in a tie, a replica that has not heard
 *   enough peers) it serves no stable answer (`stopped`), rather than answers another replica
 *   would contradict. Every member's digest at the first differing position says which side of
 *   it each was on (the report's `side`).
 * - **Heal.** Once every member's claims agree with its own again, past the position, the
 *   divergence is over (an operator rebuilt or replaced the minority, or the ops overwrote what
 *   differed).
 */
export class Divergence {
  /** Per peer, a claim beyond this replica's finalized prefix, checked once it gets there. */
  private readonly pending = new Map<number, DigestClaim>();
  /**
   * Per peer, its newest claim compared: the position, and whether it agreed with this replica's
   * digest there. The later of two comparisons at one position wins: a replica rebuilt or
   * restarted may hold another state at a position it claimed before.
   */
  private readonly latest = new Map<number, { readonly at: number; readonly same: boolean }>();
  /** Per peer, the position an ask of its waits for (answered when this replica gets there). */
  private readonly askedBy = new Map<number, number>();
  private incident: Incident | null = null;
  private incidents = 0;
  private comparisons = 0;
  private lastCompared = 0;

  constructor(
    private readonly host: DivergenceHost,
    /** A planted bug: claims are never compared. Only the simulator's checkers want it. */
    private readonly unsafeSkipCheck = false,
  ) {}

  /** What this replica's gossip summaries carry. */
  claim(): DigestClaim {
    const latest = this.host.digests().latest();
    return { at: latest.position, digest: latest.digest };
  }

  /** A peer's summary carried its claim. */
  onClaim(from: number, claim: DigestClaim, now: number): void {
    if (this.unsafeSkipCheck || from === this.host.self) return;
    if (claim.at > this.host.digests().latest().position) {
      if (!this.pending.has(from)) this.pending.set(from, claim);
      return;
    }
    this.compare(from, claim, now);
  }

  /**
   * After a restart (or a state transfer, `null`): the divergence its records say it knew of. It
   * serves stable answers again only once a majority's claims agree with its state, or the
   * divergence is over.
   */
  restore(report: DivergenceReport | null, now: number): void {
    const had = this.incident !== null;
    this.pending.clear();
    this.latest.clear();
    if (report === null) {
      this.incident = null;
      if (had) this.host.out.event({ kind: 'divergence', report: null });
      return;
    }
    this.incident = {
      detectedAt: report.detectedAt,
      pinned: this.own(),
      restored: report,
      peers: new Map(),
      asked: new Map(),
      report: null,
    };
    // No claim compared yet: it serves nothing until a majority's agree with it.
    this.evaluate(now);
  }

  receive(from: number, msg: DivergenceMessage, now: number): void {
    if (msg.type === 'ask') {
      this.askedBy.set(from, Math.max(msg.at, this.askedBy.get(from) ?? 0));
      this.answerAsks();
      return;
    }
    if (msg.digests.length !== msg.ops.length || msg.digests.length === 0) return;
    const theirs: PeerDigests = { run: { from: msg.from, digests: msg.digests }, ops: msg.ops };
    if (this.incident === null) {
      // Only a difference that still stands at the newest position both have: one the ops
      // since overwrote (or a rebuild replaced) is over.
      const own = this.own();
      const last = Math.min(lastOf(own.run), lastOf(theirs.run));
      const mine = digestAt(own.run, last);
      const other = digestAt(theirs.run, last);
      if (mine === undefined || other === undefined || mine === other) return;
      this.open(last, now);
    }
    this.incident!.peers.set(from, theirs);
    this.evaluate(now);
  }

  /** The clock moved: claims this replica has now reached, asks it can answer, asks to repeat. */
  tick(now: number): void {
    const at = this.host.digests().latest().position;
    for (const [from, claim] of this.pending) {
      if (claim.at > at) continue;
      this.pending.delete(from);
      this.compare(from, claim, now);
    }
    this.answerAsks();
    if (this.incident !== null) this.evaluate(now);
  }

  /**
   * Why this replica serves no stable answer now (replicas diverged, and no majority of the
   * members is known to share its state), or null while it may.
   */
  get stopped(): string | null {
    const r = this.incident?.report;
    return r === undefined || r === null || r.servesStable ? null : r.reason;
  }

  status(): DivergenceStatus {
    return {
      incidents: this.incidents,
      comparisons: this.comparisons,
      lastCompared: this.lastCompared,
      current: this.incident?.report ?? null,
    };
  }

  // ---------------------------------------------------------------- detection

  private compare(from: number, claim: DigestClaim, now: number): void {
    const mine = this.host.digests().at(claim.at);
    if (mine === undefined) return; // older than it keeps: a later claim will do
    this.comparisons++;
    this.lastCompared = Math.max(this.lastCompared, claim.at);
    const same = mine.digest === claim.digest;
    // A claim older than the newest compared (reordered on its way) says nothing new.
    if (claim.at < (this.latest.get(from)?.at ?? -1)) return;
    this.latest.set(from, { at: claim.at, same });
    if (same) {
      this.closeIfHealed();
      if (this.incident !== null) this.evaluate(now);
      return;
    }
    if (this.incident === null) this.open(claim.at, now);
    else this.evaluate(now);
  }

  /** A divergence begins here: ask every peer for its digests, to name and judge it. */
  private open(detectedAt: number, now: number): void {
    this.incidents++;
    this.incident = {
      detectedAt,
      pinned: this.own(),
      restored: null,
      peers: new Map(),
      asked: new Map(),
      report: null,
    };
    for (const m of this.host.members()) if (m !== this.host.self) this.ask(m, detectedAt, now);
    this.evaluate(now);
  }

  private ask(to: number, at: number, now: number): void {
    this.incident!.asked.set(to, { at, time: now });
    this.send(to, { type: 'ask', at });
  }

  private answerAsks(): void {
    const latest = this.host.digests().latest().position;
    for (const [peer, at] of this.askedBy) {
      if (at > latest) continue;
      this.askedBy.delete(peer);
      const own = this.own();
      this.send(peer, {
        type: 'digests',
        from: own.run.from,
        digests: own.run.digests,
        ops: own.ops,
      });
    }
  }

  // ---------------------------------------------------------------- naming and judging

  /**
   * Names the first position where this replica's digests and a peer's differ, judges its side
   * from every member's digest there, and asks members whose digest there it lacks.
   */
  private evaluate(now: number): void {
    const incident = this.incident!;
    const own = this.ownDuring(incident);
    let first: { position: number; exact: boolean } | null = null;
    for (const theirs of incident.peers.values()) {
      const d = firstDifference(own.run, theirs.run);
      if (d !== null && (first === null || d.position < first.position)) first = d;
    }
    // Until a peer's digests show where, the difference is at or before where it was seen (or
    // where the report a restart brought back says).
    const restored = first === null ? incident.restored : null;
    const at = first ?? restored ?? { position: incident.detectedAt, exact: false };
    const members = this.host.members();
    const digestOf = (r: number): string | undefined => {
      if (r === this.host.self) return digestAt(own.run, at.position);
      const theirs = incident.peers.get(r);
      return theirs === undefined ? undefined : digestAt(theirs.run, at.position);
    };
    for (const m of members) {
      if (m === this.host.self || digestOf(m) !== undefined) continue;
      const theirs = incident.peers.get(m);
      // It no longer keeps that position: it cannot tell.
      if (theirs !== undefined && theirs.run.from > at.position) continue;
      const asked = incident.asked.get(m);
      if (
        asked === undefined ||
        asked.at > at.position ||
        now - asked.time >= DIVERGENCE_ASK_EVERY_MS
      )
        this.ask(m, at.position, now);
    }
    // Only a difference right after agreement names its op: "at or before" names none.
    const label =
      restored !== null
        ? labelOfReport(restored)
        : at.exact
          ? this.labelAt(own, incident, at.position)
          : null;
    const side = restored?.side ?? sideOf(this.host.self, members, digestOf);
    const digests: Record<string, string | null> = { ...restored?.digests };
    if (restored === null) for (const m of members) digests[String(m)] = digestOf(m) ?? null;
    // Its state is a majority's now (their newest claims agree with it): where they first
    // differed it may have been on the majority's side, and a later nondeterministic op may
    // have split the replicas another way; after a restart, it re-executed what it had not
    // checkpointed.
    const agreeing = this.agreeingNow(members, at.position);
    const withMajority = agreeing.length >= Math.floor(members.length / 2) + 1;
    const report: DivergenceReport = {
      position: at.position,
      exact: at.exact,
      op: label === null ? null : label[0],
      id: label === null ? null : formatOpId({ replica: label[1], eventNo: label[2] }),
      detectedAt: incident.detectedAt,
      digests,
      side,
      servesStable: withMajority,
      reason: reasonOf(this.host.self, at, label, side, digests, withMajority ? agreeing : null),
    };
    const changed = incident.report === null || !sameReport(incident.report, report);
    incident.report = report;
    if (changed) this.reported(report);
  }

  /**
   * The members whose state is this replica's now, itself included: their newest claim agreed
   * with its digest, at a position no older than the divergence and than any disagreement it
   * has seen since (a peer that lags agrees at a position from before them, which says nothing).
   */
  private agreeingNow(members: readonly number[], divergedAt: number): number[] {
    let since = divergedAt;
    for (const c of this.latest.values()) if (!c.same) since = Math.max(since, c.at);
    return members.filter((m) => {
      const c = this.latest.get(m);
      return m === this.host.self || (c !== undefined && c.same && c.at >= since);
    });
  }

  /** The op at `position`, from this replica's digests or a peer's. */
  private labelAt(own: PeerDigests, incident: Incident, position: number): OpLabel | null {
    for (const d of [own, ...incident.peers.values()]) {
      const label = d.ops[position - d.run.from];
      if (label !== undefined && label !== null) return label;
    }
    return null;
  }

  /**
   * Over once every member's newest claim agrees with this replica's digest, at a position past
   * every disagreement with it and past the divergence itself.
   */
  private closeIfHealed(): void {
    const incident = this.incident;
    if (incident === null) return;
    const since = Math.max(incident.detectedAt, incident.report?.position ?? 0);
    for (const m of this.host.members()) {
      if (m === this.host.self) continue;
      const latest = this.latest.get(m);
      if (latest === undefined || !latest.same || latest.at < since) return;
    }
    this.incident = null;
    this.reported(null);
  }

  /** A new report (null: over): kept on disk for a restart, and told to the driver. */
  private reported(report: DivergenceReport | null): void {
    this.host.out.persist({ layer: 'divergence', record: { kind: 'divergence', report } });
    this.host.out.event({ kind: 'divergence', report });
  }

  private send(to: number, msg: DivergenceMessage): void {
    this.host.out.send(to, { kind: 'divergence', msg }, false);
  }

  // ---------------------------------------------------------------- own digests

  /** This replica's digests now. */
  private own(): PeerDigests {
    const entries = this.host.digests().entries();
    return { run: runOf(entries), ops: entries.map(labelOf) };
  }

  /**
   * Its digests since the incident began: those it had then, followed by those it has now, so
   * that the positions around the cause stay known however far it finalizes meanwhile.
   */
  private ownDuring(incident: Incident): PeerDigests {
    const now = this.own();
    const pinned = incident.pinned;
    const next = lastOf(pinned.run) + 1;
    if (now.run.from > next) return pinned;
    const skip = next - now.run.from;
    return {
      run: {
        from: pinned.run.from,
        digests: [...pinned.run.digests, ...now.run.digests.slice(skip)],
      },
      ops: [...pinned.ops, ...now.ops.slice(skip)],
    };
  }
}

/** The op a report names, as a label. */
function labelOfReport(r: DivergenceReport): OpLabel | null {
  const m = r.id === null ? null : /^r(\d+)#(\d+)$/.exec(r.id);
  return r.op === null || m === null ? null : [r.op, Number(m[1]), Number(m[2])];
}

function labelOf(e: FinalDigest): OpLabel | null {
  return e.id === null || e.op === null ? null : labelFor(e.op, e.id);
}

function labelFor(op: string, id: OpId): OpLabel {
  return [op, id.replica, id.eventNo];
}

function sameReport(a: DivergenceReport, b: DivergenceReport): boolean {
  return (
    a.position === b.position &&
    a.exact === b.exact &&
    a.op === b.op &&
    a.side === b.side &&
    a.servesStable === b.servesStable &&
    JSON.stringify(a.digests) === JSON.stringify(b.digests)
  );
}

/** What an operator reads in /status, the log and a refused client's error. */
function reasonOf(
  self: number,
  at: { readonly position: number; readonly exact: boolean },
  label: OpLabel | null,
  side: DivergenceSide,
  digests: Readonly<Record<string, string | null>>,
  /** The members whose state is its own now, when they are a majority; null otherwise. */
  agreeing: readonly number[] | null,
): string {
  const where = at.exact
    ? `after committed position ${at.position}`
    : `at or before committed position ${at.position}`;
  const op =
    label === null
      ? 'an op not identified yet (or older than the positions the replicas keep)'
      : `op '${label[0]}' (${formatOpId({ replica: label[1], eventNo: label[2] })})`;
  const list = (ids: readonly string[]): string => (ids.length === 0 ? 'none' : ids.join(', '));
  const others = (pred: (d: string | null) => boolean): string =>
    list(
      Object.entries(digests)
        .filter(([r, d]) => r !== String(self) && pred(d))
        .map(([r]) => r),
    );
  const mine = digests[String(self)] ?? null;
  // The digest most members held there: the majority's, when this replica was in a minority.
  const counts = new Map<string, number>();
  for (const d of Object.values(digests)) if (d !== null) counts.set(d, (counts.get(d) ?? 0) + 1);
  const most = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const cause = `the replicas' states differ ${where}, made by ${op}: it is not deterministic`;
  const there =
    side === 'majority'
      ? `replica ${self} held the majority's state there (with replicas ${others((d) => d === mine)})`
      : side === 'minority'
        ? `replica ${self} held a minority's state there (the majority: replicas ${others((d) => d === most)})`
        : `no majority of the members is known to have held one state there (members not heard from: ${others((d) => d === null)})`;
  const now =
    agreeing !== null
      ? `its state is a majority's now (replicas ${list(agreeing.filter((r) => r !== self).map(String))} agree with it), and it keeps serving`
      : `its state is not known to be a majority's now, so it serves no stable answer and takes no client op until a majority agrees with it (rebuild or replace it from the majority)`;
  return `${cause}; ${there}; ${now}`;
}

/** The answer to an op a replica takes none of while it serves no stable answer (`stopped`). */
export function refusal(tag: number, stopped: string): Response {
  const outcome = { ok: false as const, error: `unavailable: ${stopped}` };
  return { type: 'respond', tag, id: null, level: 'failed', outcome };
}
