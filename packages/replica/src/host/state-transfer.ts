/**
 * State transfer: a replica that lacks what its peers have compacted — a new or wiped one whose
 * peers truncated Paxos instances it never delivered, or dropped Reqs every replica once held —
 * rebuilds itself from a peer's checkpoint (etcd's InstallSnapshot, in Creek's terms): the
 * finalized state and its committed position, the Reqs of ops not final yet, the Reqs gossip still
 * holds for peers, the per-origin delivery position and the Paxos truncation point. Then ordinary
 * catch-up (gossip anti-entropy, Paxos learning from the truncation point on) brings it the rest.
 *
 * The checkpoint travels in bounded chunks, pulled a window at a time by the receiver (`ask`),
 * which asks again from its first missing chunk after a silence and moves to another peer when
 * one stops answering or refuses. The sender keeps one snapshot per receiver while it is being
 * pulled, so the receiver gets one consistent checkpoint however the chunks are delayed, lost or
 * reordered. The receiver installs nothing until it holds every chunk and their digest matches
 * the header's (a chunk lost or mangled cannot slip in), and then installs it in one durable
 * record (ReplicaHost: a `checkpoint` record, which supersedes everything it had).
 *
 * Pure data and functions (DESIGN.md, "the central rule"): the host drives them with its inputs.
 */
import { canonicalJson, type JsonValue } from '@creek/app';
import { DottedVersionVector } from '../core/dvv.js';
import { opKey, type OpId } from '../core/op-id.js';
import { hashHex, StateDigest } from '../core/state-digest.js';
import type { Req } from '../core/types.js';
import type { SeenJson } from '../gossip/messages.js';
import { reqSize } from '../gossip/req-store.js';
import type { ConfigEntry } from '../cab/configuration.js';

/** What a checkpoint says besides its state and Reqs (chunk 0 of a transfer). */
export interface TransferHeader {
  /** Ops in the finalized prefix of the committed list. */
  readonly finalized: number;
  /** How many of `reqs` are committed (the first ones), the rest tentative. */
  readonly committedLive: number;
  /** The sender's causal context (Algorithm 1's `causalCtx`): every op it has delivered. */
  readonly known: SeenJson;
  /** The sender's hybrid logical clock. */
  readonly hlc: number;
  /** The sender's Paxos truncation point: the receiver learns instances from here on. */
  readonly truncatedBelow: number;
  /**
   * The cluster's configurations from the truncation point on, as the sender knew them
   * (cab/configuration.ts). Absent from a sender that predates membership changes.
   */
  readonly config?: readonly ConfigEntry[];
  /**
   * Closed origins and their cuts, `[origin, cut]` (core/closing-origins.ts). Absent: none, or a
   * sender that predates closing origins.
   */
  readonly closed?: ReadonlyArray<readonly [number, number]>;
  /** Per origin, the last strong op the sender delivered. */
  readonly delivered: readonly OpId[];
  /** How many state entries, Reqs of ops not final, and held Reqs the chunks carry. */
  readonly counts: { readonly state: number; readonly reqs: number; readonly held: number };
  /** `transferDigest` of the whole transfer. */
  readonly digest: string;
}

/** One chunk of a transfer: the header first, then the state, the live Reqs, the held Reqs. */
export type TransferPart =
  | { readonly kind: 'header'; readonly header: TransferHeader }
  | { readonly kind: 'state'; readonly entries: ReadonlyArray<readonly [string, JsonValue]> }
  | { readonly kind: 'reqs'; readonly reqs: readonly Req[] }
  | { readonly kind: 'held'; readonly reqs: readonly Req[] };

export type TransferMessage =
  /**
   * Receiver → sender: send the chunks of transfer `session` from index `next`, `window` of them
   * (TRANSFER_WINDOW when absent, at most MAX_TRANSFER_WINDOW).
   */
  | {
      readonly type: 'ask';
      readonly session: number;
      readonly next: number;
      readonly window?: number;
    }
  /** Sender → receiver: chunk `index` of `total`. */
  | {
      readonly type: 'chunk';
      readonly session: number;
      readonly index: number;
      readonly total: number;
      readonly part: TransferPart;
    }
  /** Sender → receiver: it has no state to give (it is rebuilding or learning itself). */
  | { readonly type: 'refuse'; readonly session: number };

/** A checkpoint as it travels: what the receiver installs (with its own identity added). */
export interface TransferredState {
  readonly finalized: number;
  readonly committedLive: number;
  readonly known: DottedVersionVector;
  readonly hlc: number;
  readonly truncatedBelow: number;
  readonly config: readonly ConfigEntry[];
  /** Closed origins and their cuts (TransferHeader.closed); absent or empty: none. */
  readonly closed?: ReadonlyArray<readonly [number, number]>;
  readonly delivered: readonly OpId[];
  readonly state: ReadonlyArray<readonly [string, JsonValue]>;
  readonly reqs: readonly Req[];
  readonly held: readonly Req[];
}

/**
 * About how many characters of JSON one chunk carries: a third of the peer protocol's 1 MiB frame
 * limit, as for gossip's anti-entropy answers, whatever number of bytes a character takes.
 */
export const TRANSFER_CHUNK_CHARS = 300_000;
/**
 * Chunks a sender sends for one `ask` that names no window (a receiver that predates windows in
 * asks, or one on the default pacing): the receiver asks for the next window when it has these.
 */
export const TRANSFER_WINDOW = 8;
/** The most chunks a sender sends for one `ask`, whatever window it names. */
export const MAX_TRANSFER_WINDOW = 256;
/**
 * About the most characters a sender sends for one `ask`, whatever window it names: 20 full
 * chunks, under the peer link's backpressure bound (8 MiB buffered, past which a replica's other
 * messages to that peer are dropped), however many chunks of a small size that is.
 */
export const MAX_TRANSFER_ANSWER_CHARS = 20 * TRANSFER_CHUNK_CHARS;
/** A receiver that got no chunk for this long asks again from its first missing chunk. */
export const TRANSFER_RETRY_MS = 250;
/**
 * A receiver that made no progress for this long (or four of its pacing's silences, if longer)
 * starts over with another peer.
 */
export const TRANSFER_SWITCH_MS = 2_000;

/**
 * How a receiver paces its pull (HostOptions.transferPacing): a window of chunks per round trip
 * and a silence after which it asks again. The defaults (TRANSFER_WINDOW, TRANSFER_RETRY_MS) are
 * made for one data centre; across regions a round trip is long enough that a window of 8 leaves
 * the link idle most of the time, and a lost chunk costs a round trip besides the silence.
 */
export interface TransferPacing {
  /** Chunks asked for at once (1 to MAX_TRANSFER_WINDOW): about a round trip's worth. */
  readonly window: number;
  /** Silence after which the receiver asks again for what is missing. */
  readonly retryMs: number;
  /**
   * Ask again only for the chunks missing (selective repeat), beside new ones up to the window,
   * instead of a whole window again from the first one missing (go-back-N, the default). With a
   * window of many chunks and a lossy path, go-back-N moves on by little more than the chunks
   * before the first loss each round trip; on one data centre a round trip costs nothing either
   * way, and the default keeps the pacing every replica had.
   */
  readonly selective?: boolean;
  /**
   * Once chunks of an answer came in, a silence this long ends it and the receiver asks again for
   * what it lacks; absent: it waits `retryMs` as for an answer that never came.
   */
  readonly burstGapMs?: number;
}

export const DEFAULT_TRANSFER_PACING: TransferPacing = {
  window: TRANSFER_WINDOW,
  retryMs: TRANSFER_RETRY_MS,
};

/**
 * `pacing` with a window no larger than a sender serves per ask (MAX_TRANSFER_ANSWER_CHARS) when
 * its chunks carry about `chunkChars` characters, as the receiver's own do: chunks asked for and
 * never sent would look lost only after a whole `retryMs` of silence.
 */
export function paceFor(pacing: TransferPacing, chunkChars = TRANSFER_CHUNK_CHARS): TransferPacing {
  const served = Math.max(1, Math.floor(MAX_TRANSFER_ANSWER_CHARS / chunkChars));
  return pacing.window <= served ? pacing : { ...pacing, window: served };
}
/** A sender drops a snapshot nobody pulled from for this long. */
export const TRANSFER_IDLE_MS = 10_000;
/**
 * A sender makes a peer a new snapshot at most this often: a snapshot costs a pass over the
 * state, and a peer asking for new sessions in a loop must not make it spend all its time on them.
 */
export const TRANSFER_SNAPSHOT_EVERY_MS = 1_000;

/** The digest of a transfer's content: equal on both sides only if every chunk arrived intact. */
export function transferDigest(s: Omit<TransferredState, 'known'> & { known: SeenJson }): string {
  const head = [s.finalized, s.committedLive, s.known, s.hlc, s.truncatedBelow, s.delivered];
  const lines = [
    // A sender without configurations hashes as before they existed.
    JSON.stringify(
      (s.closed?.length ?? 0) > 0
        ? [...head, s.config, s.closed]
        : s.config.length === 0
          ? head
          : [...head, s.config],
    ),
    `${s.state.length}:${StateDigest.of(s.state)}`,
    ...s.reqs.map(reqLine),
    '--held--',
    ...s.held.map(reqLine),
  ];
  return hashHex(lines.join('\n'));
}

function reqLine(q: Req): string {
  return [
    opKey(q.id),
    q.ts,
    q.op,
    q.strong,
    canonicalJson(q.args),
    q.causalCtx === null ? '-' : q.causalCtx.toString(),
    q.session === undefined ? '-' : `${q.session.id}/${q.session.seq}/${q.session.acked}`,
    // A Req without a caller hashes as before callers existed.
    ...(q.user === undefined ? [] : [canonicalJson(q.user as unknown as JsonValue)]),
  ].join('|');
}

/** Splits a checkpoint into chunks of at most about `maxChars` characters each (one item at least). */
export function toChunks(s: TransferredState, maxChars = TRANSFER_CHUNK_CHARS): TransferPart[] {
  const known = s.known.toJSON();
  const header: TransferHeader = {
    finalized: s.finalized,
    committedLive: s.committedLive,
    known,
    hlc: s.hlc,
    truncatedBelow: s.truncatedBelow,
    ...(s.config.length === 0 ? {} : { config: s.config }),
    ...((s.closed?.length ?? 0) === 0 ? {} : { closed: s.closed }),
    delivered: s.delivered,
    counts: { state: s.state.length, reqs: s.reqs.length, held: s.held.length },
    digest: transferDigest({ ...s, known }),
  };
  const parts: TransferPart[] = [{ kind: 'header', header }];
  let entries: (readonly [string, JsonValue])[] = [];
  let size = 0;
  for (const entry of s.state) {
    const n = entry[0].length + JSON.stringify(entry[1]).length + 8;
    if (entries.length > 0 && size + n > maxChars) {
      parts.push({ kind: 'state', entries });
      entries = [];
      size = 0;
    }
    entries.push(entry);
    size += n;
  }
  if (entries.length > 0) parts.push({ kind: 'state', entries });
  for (const kind of ['reqs', 'held'] as const) {
    let reqs: Req[] = [];
    size = 0;
    for (const q of s[kind]) {
      if (reqs.length > 0 && size + reqSize(q) > maxChars) {
        parts.push({ kind, reqs });
        reqs = [];
        size = 0;
      }
      reqs.push(q);
      size += reqSize(q);
    }
    if (reqs.length > 0) parts.push({ kind, reqs });
  }
  return parts;
}

/**
 * The checkpoint the chunks make up, or why they do not make one: a chunk missing, counts that do
 * not add up, or a digest that differs from the header's. `unchecked` (a planted bug, see
 * HostOptions.unsafeInstallIncomplete) skips missing chunks and checks nothing.
 */
export function fromChunks(
  parts: ReadonlyArray<TransferPart | undefined>,
  unchecked = false,
): { ok: true; state: TransferredState } | { ok: false; reason: string } {
  const first = parts[0];
  if (first?.kind !== 'header') return { ok: false, reason: 'no header' };
  const h = first.header;
  const state: (readonly [string, JsonValue])[] = [];
  const reqs: Req[] = [];
  const held: Req[] = [];
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i];
    if (p === undefined && unchecked) continue;
    if (p === undefined) return { ok: false, reason: `chunk ${i} of ${parts.length} is missing` };
    if (p.kind === 'header') return { ok: false, reason: `chunk ${i} is a second header` };
    if (p.kind === 'state') state.push(...p.entries);
    else (p.kind === 'reqs' ? reqs : held).push(...p.reqs);
  }
  const config = h.config ?? [];
  const closed = h.closed ?? [];
  if (unchecked)
    return {
      ok: true,
      state: {
        ...h,
        config,
        closed,
        state,
        reqs,
        held,
        known: DottedVersionVector.fromJSON(h.known),
      },
    };
  if (
    state.length !== h.counts.state ||
    reqs.length !== h.counts.reqs ||
    held.length !== h.counts.held
  )
    return {
      ok: false,
      reason:
        `the chunks hold ${state.length} keys, ${reqs.length} live and ${held.length} held Reqs, ` +
        `the header says ${h.counts.state}, ${h.counts.reqs} and ${h.counts.held}`,
    };
  const out = { ...h, config, closed, state, reqs, held };
  const digest = transferDigest(out);
  if (digest !== h.digest)
    return { ok: false, reason: `digest ${digest} differs from the header's ${h.digest}` };
  return { ok: true, state: { ...out, known: DottedVersionVector.fromJSON(h.known) } };
}

/** The receiving side of one transfer: the chunks so far, and whom it pulls them from. */
export class IncomingTransfer {
  private readonly parts: (TransferPart | undefined)[] = [];
  private total: number | null = null;
  private received = 0;
  /** Every chunk below this one is in (it only grows, so finding the first missing is cheap). */
  private low = 0;
  /** One past the highest chunk in. */
  private high = 0;
  /** When a chunk last arrived (or the transfer started, or moved to another peer). */
  private progressAt: number;
  private askedAt: number;
  /** The first chunk index of the window last asked for (go-back-N). */
  private asked = 0;
  /** Every chunk below this one has been asked for at least once (selective). */
  private askedEnd = 0;

  constructor(
    public peer: number,
    public session: number,
    now: number,
    private readonly pacing: TransferPacing = DEFAULT_TRANSFER_PACING,
  ) {
    this.progressAt = now;
    this.askedAt = now;
  }

  /**
   * The asks that (re)start pulling, or go on after a silence. Go-back-N (the default pacing): one
   * window from the first chunk missing. Selective: the chunks presumed lost, a run of them per
   * ask, then new chunks beyond what was asked for, as many as leaves a window in flight. Lost are
   * those missing below the highest chunk in (they left before it), and after a silence of
   * `retryMs` every one missing.
   */
  asks(now: number): TransferMessage[] {
    const silent = now - this.progressAt >= this.pacing.retryMs;
    this.askedAt = now;
    if (this.pacing.selective !== true) {
      this.asked = this.firstMissing();
      return [this.askFor(this.asked, this.pacing.window)];
    }
    const asked = Math.min(this.askedEnd, this.total ?? this.askedEnd);
    const lostBelow = silent || this.total === null ? asked : Math.min(this.high, asked);
    let budget = this.pacing.window - this.missing(lostBelow, asked);
    const out: TransferMessage[] = [];
    let i = this.firstMissing();
    while (i < lostBelow && budget > 0) {
      if (this.parts[i] !== undefined) {
        i++;
        continue;
      }
      let j = i;
      while (j < lostBelow && j - i < budget && this.parts[j] === undefined) j++;
      out.push(this.askFor(i, j - i));
      budget -= j - i;
      i = j;
    }
    return [...out, ...this.askMore(budget)];
  }

  /**
   * The asks once enough of what was asked for is in. Go-back-N: the next window. Selective: new
   * chunks only, as many as leaves a window in flight (one missing may just be late).
   */
  more(now: number): TransferMessage[] {
    if (this.pacing.selective !== true) return this.asks(now);
    // `askedAt` stays: a silence is measured from the last ask of what is missing, and the burst
    // gap from the chunks of its answer.
    const asked = Math.min(this.askedEnd, this.total ?? this.askedEnd);
    return this.askMore(this.pacing.window - this.missing(this.low, asked));
  }

  private askMore(budget: number): TransferMessage[] {
    const n = Math.min(budget, (this.total ?? Infinity) - this.askedEnd);
    if (n <= 0) return [];
    const ask = this.askFor(this.askedEnd, n);
    this.askedEnd += n;
    return [ask];
  }

  /** Chunks missing in [from, to). */
  private missing(from: number, to: number): number {
    let n = 0;
    for (let i = Math.max(from, this.low); i < to; i++) if (this.parts[i] === undefined) n++;
    return n;
  }

  private askFor(next: number, window: number): TransferMessage {
    // The default window goes unsaid: an ask reads as it did before asks named one.
    return {
      type: 'ask',
      session: this.session,
      next,
      ...(window === TRANSFER_WINDOW ? {} : { window }),
    };
  }

  /**
   * A transfer taken up again after a restart, with the chunks the receiver had made durable
   * (ReplicaHost keeps each as a record): it asks for the rest from the first one missing.
   */
  static resume(
    peer: number,
    session: number,
    total: number,
    chunks: readonly { readonly index: number; readonly part: TransferPart }[],
    now: number,
    pacing: TransferPacing = DEFAULT_TRANSFER_PACING,
  ): IncomingTransfer {
    const t = new IncomingTransfer(peer, session, now, pacing);
    t.total = total;
    for (const c of chunks)
      if (c.index >= 0 && c.index < total && t.parts[c.index] === undefined) {
        t.parts[c.index] = c.part;
        t.received++;
        // What it holds was asked for: the holes below the last of it are asked for again.
        t.askedEnd = Math.max(t.askedEnd, c.index + 1);
        t.high = t.askedEnd;
      }
    t.advanceLow();
    return t;
  }

  /**
   * A chunk arrived. Returns 'complete' once every chunk is in, 'next' when what was asked for is
   * in and more should be asked for, 'wait' for more of it, and 'duplicate' for a chunk it has or
   * does not take (another peer's or session's, or out of range): nothing to keep.
   */
  onChunk(
    from: number,
    msg: Extract<TransferMessage, { type: 'chunk' }>,
    now: number,
  ): 'complete' | 'next' | 'wait' | 'duplicate' {
    if (from !== this.peer || msg.session !== this.session) return 'duplicate';
    if (this.total === null) this.total = msg.total;
    if (msg.total !== this.total || msg.index < 0 || msg.index >= this.total) return 'duplicate';
    if (this.parts[msg.index] !== undefined) return 'duplicate';
    this.parts[msg.index] = msg.part;
    this.received++;
    this.progressAt = now;
    this.high = Math.max(this.high, msg.index + 1);
    this.advanceLow();
    if (this.received === this.total) return 'complete';
    if (this.pacing.selective !== true)
      return this.low >= Math.min(this.total, this.asked + this.pacing.window) ? 'next' : 'wait';
    // Half a window in: ask for the next half while the rest arrives, so the link never idles.
    const inFlight = this.missing(this.low, Math.min(this.total, this.askedEnd));
    return this.askedEnd < this.total && inFlight <= this.pacing.window / 2 ? 'next' : 'wait';
  }

  /** Every chunk, in order (with holes while incomplete). */
  chunks(): ReadonlyArray<TransferPart | undefined> {
    return this.total === null ? [] : Array.from({ length: this.total }, (_, i) => this.parts[i]);
  }

  /** The last chunk is in, although others may still be missing. */
  get lastChunkIn(): boolean {
    return this.total !== null && this.parts[this.total - 1] !== undefined;
  }

  /** What time does: ask again after a silence, or give up on this peer after a long one. */
  due(now: number): 'retry' | 'switch' | null {
    const { retryMs } = this.pacing;
    // A few asks go unanswered before the peer counts as gone, however long the pacing waits.
    if (now - this.progressAt >= Math.max(TRANSFER_SWITCH_MS, 4 * retryMs)) return 'switch';
    if (now - this.askedAt >= retryMs && now - this.progressAt >= retryMs) return 'retry';
    // An answer's chunks leave together: once some came in, a short silence means the rest of
    // them were lost, and waiting a whole retryMs for them would idle the link.
    const { burstGapMs } = this.pacing;
    if (
      burstGapMs !== undefined &&
      this.progressAt > this.askedAt &&
      now - this.progressAt >= burstGapMs
    )
      return 'retry';
    return null;
  }

  /** Starts over from another peer, under a new session (nothing of the old one is kept). */
  restart(peer: number, session: number, now: number): void {
    this.peer = peer;
    this.session = session;
    this.parts.length = 0;
    this.total = null;
    this.received = 0;
    this.low = 0;
    this.high = 0;
    this.progressAt = now;
    this.askedAt = now;
    this.asked = 0;
    this.askedEnd = 0;
  }

  /** How many chunks arrived, and of how many (null before the first). */
  progress(): { readonly received: number; readonly total: number | null } {
    return { received: this.received, total: this.total };
  }

  private firstMissing(): number {
    return this.total === null ? 0 : this.low;
  }

  private advanceLow(): void {
    while (this.total !== null && this.low < this.total && this.parts[this.low] !== undefined)
      this.low++;
  }
}

/** The sending side: one snapshot per receiver while it pulls it. */
export class OutgoingTransfers {
  private readonly byPeer = new Map<
    number,
    {
      readonly session: number;
      readonly parts: readonly TransferPart[];
      readonly madeAt: number;
      usedAt: number;
    }
  >();

  /**
   * The chunks answering `ask` from `to`: the snapshot of its session (made by `snapshot` when the
   * session is new: a receiver starting over pulls a fresh one), from `next` on, the window it
   * names (TRANSFER_WINDOW if none; at most MAX_TRANSFER_WINDOW, and MAX_TRANSFER_ANSWER_CHARS of
   * chunks). A session asked from beyond its start that this sender has no snapshot of any more
   * (it expired, or this sender restarted) is refused: a new snapshot's chunks would not fit the
   * old ones. So is a new session less than TRANSFER_SNAPSHOT_EVERY_MS after the last snapshot for
   * `to`.
   */
  answer(
    to: number,
    ask: Extract<TransferMessage, { type: 'ask' }>,
    now: number,
    snapshot: () => TransferredState,
    maxChars?: number,
  ): TransferMessage[] {
    let s = this.byPeer.get(to);
    if (s === undefined || s.session !== ask.session) {
      if (ask.next > 0 || (s !== undefined && now - s.madeAt < TRANSFER_SNAPSHOT_EVERY_MS))
        return [{ type: 'refuse', session: ask.session }];
      s = { session: ask.session, parts: toChunks(snapshot(), maxChars), madeAt: now, usedAt: now };
      this.byPeer.set(to, s);
    }
    s.usedAt = now;
    const out: TransferMessage[] = [];
    const chunkChars = maxChars ?? TRANSFER_CHUNK_CHARS;
    const window = Math.min(
      ask.window ?? TRANSFER_WINDOW,
      MAX_TRANSFER_WINDOW,
      Math.max(1, Math.floor(MAX_TRANSFER_ANSWER_CHARS / chunkChars)),
    );
    const end = Math.min(s.parts.length, ask.next + window);
    for (let i = Math.max(0, ask.next); i < end; i++)
      out.push({
        type: 'chunk',
        session: s.session,
        index: i,
        total: s.parts.length,
        part: s.parts[i]!,
      });
    return out;
  }

  /** Drops snapshots idle for TRANSFER_IDLE_MS (a receiver that finished, moved on or died). */
  expire(now: number): void {
    for (const [peer, s] of this.byPeer)
      if (now - s.usedAt >= TRANSFER_IDLE_MS) this.byPeer.delete(peer);
  }

  /** Snapshots held (each a receiver's transfer in progress). */
  get size(): number {
    return this.byPeer.size;
  }
}
