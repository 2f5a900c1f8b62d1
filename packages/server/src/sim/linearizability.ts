import { canonicalJson, jsonEqual, type JsonValue } from '@creek/app';
import type { Outcome } from '@creek/replica/core/types.js';

/**
 * A linearizability checker for the history of one object (one key, one queue): Wing & Gong's
 * search with Lowe's just-in-time linearization and memoization, as in Knossos and Porcupine.
 *
 * The history becomes a doubly linked list of call and return events in time order. The ops that
 * may be linearized next are those whose call comes before the first return event still in the
 * list (their invocation precedes the response of every completed op not yet linearized). The
 * search linearizes one, checks the model gives the recorded outcome, removes ("lifts") the op's
 * events and goes on; when no candidate fits, it backtracks. It keeps its own stack of frames, so
 * long histories cannot overflow the call stack. Configurations already explored (the set of
 * linearized ops, the model state) are remembered and not explored again.
 *
 * Ops that never got a response ("unanswered") impose no outcome and need not be linearized; they
 * are what makes the search expensive, since each may take effect anywhere after its invocation.
 * The search cuts that down in ways that never change the answer:
 * - configurations are also skipped when one with the same completed ops, the same state and a
 *   subset of the unanswered ops linearized was seen (the smaller set can do all the larger can);
 * - an unanswered op that would not change the state is never linearized;
 * - unanswered ops with the same op and arguments are interchangeable: only the earliest invoked
 *   one not yet linearized is tried;
 * - an unanswered op is linearized only where it matters to the op right after it (see
 *   skipAfterUnanswered);
 * - it runs in rounds that bound how many unanswered ops may be linearized in a row (1, 2, 4, ...),
 *   and a failure is only final from a round the bound did not cut short.
 * Completed candidates are tried before unanswered ones: in the order the system itself gave them
 * (HistoryOp.order) where it is known, then earliest response first.
 *
 * Events at the same instant count as concurrent: an op whose response has the same time as another
 * op's invocation may be linearized after it.
 */

export interface HistoryOp {
  /** For messages. */
  readonly id: string;
  /** E.g. 'kv.put'. */
  readonly op: string;
  /** The op's arguments as invoked (already parsed: kv.increment has `by`). */
  readonly args: JsonValue;
  /** Real (simulated) time of invocation. */
  readonly invokedAt: number;
  /** Time of the response and its outcome; null when the op never got a response (it may or may not have taken effect). */
  readonly completed: { readonly at: number; readonly outcome: Outcome } | null;
  /**
   * For an op without a response, what is known from elsewhere about whether it took effect (the
   * simulator knows: the op is in the final committed order, or it is not): true, it must be
   * linearized somewhere after its invocation, returning anything; false, it must not be. Left out,
   * either may be true, which is what makes a search expensive. Knowing can only remove
   * linearizations, so no violation is hidden by it.
   */
  readonly tookEffect?: boolean;
  /**
   * Where the system's own order puts the op (the simulator: its position in the committed order),
   * if known. A hint only: the search tries ops in this order first, so a history the system's
   * order explains is decided along one path; it changes how fast, never the answer.
   */
  readonly order?: number;
  /**
   * For an op without a response that took effect: the time by which it did, if known (the
   * simulator knows: the op was committed before any op after it in the committed order got its
   * stable answer). Left out, any time after its invocation. Like tookEffect, knowing it only
   * removes linearizations.
   */
  readonly takesEffectBy?: number;
  /**
   * Ops that must be linearized (answered, or known to have taken effect) and have a `sequence`
   * are linearized in that order among themselves (the simulator's: the committed order, for ops
   * whose results nobody saw). Like tookEffect, knowing it only removes linearizations; it keeps
   * a failing search from trying every order of such ops.
   */
  readonly sequence?: number;
  /**
   * What the model needs of the op besides its name and arguments, if anything (the simulator's
   * model of an app: the timestamp, id and caller an op reads through tx.now(), tx.random() and
   * tx.user). Ops with equal op, args and ctx are interchangeable; leave it out where the op's
   * effect does not depend on it.
   */
  readonly ctx?: JsonValue;
}

export interface Model<S> {
  readonly init: S;
  /**
   * Applies op to state: the outcome it must return and the next state. Must be pure. `ctx` is
   * the op's HistoryOp.ctx.
   */
  step(state: S, op: string, args: JsonValue, ctx?: JsonValue): { outcome: Outcome; next: S };
  /** A string identifying the state, for memoization. */
  key(state: S): string;
}

export type LinearizabilityResult = { ok: true } | { ok: false; reason: string };

/**
 * Configurations explored before the search gives up (and the checker reports the history as not
 * shown linearizable). Seed 20682 with 5 replicas (46 queue ops, many of them unanswered after
 * crashes) needs between 1 and 3 million; at that size a search takes seconds.
 */
const DEFAULT_MAX_STATES = 4_000_000;

/** Steps of the model a search remembers (its memory stays bounded; past it, it starts over). */
const MAX_REMEMBERED_STEPS = 200_000;

/**
 * The outcome of an op that took effect without a response (HistoryOp.tookEffect): any outcome the
 * model gives matches it. Compared by identity.
 */
const ANY_OUTCOME: Outcome = { ok: false, error: 'took effect, outcome never seen' };

function outcomeEqual(a: Outcome, b: Outcome): boolean {
  if (b === ANY_OUTCOME) return true;
  if (a.ok) return b.ok && jsonEqual(a.value, b.value);
  return !b.ok && a.error === b.error;
}

/** A 32-bit mix of an integer (murmur3's finalizer), for Zobrist hashing of the linearized set. */
function mix32(x: number): number {
  let h = (x + 0x9e3779b9) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when every bit of `a` is set in `b`. */
function subsetOf(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if ((a[i]! & ~b[i]!) !== 0) return false;
  return true;
}

interface Seen {
  readonly completed: Uint32Array;
  readonly pending: Uint32Array;
}

function clip(s: string, max = 160): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function showOutcome(o: Outcome): string {
  return clip(o.ok ? canonicalJson(o.value) : `error '${o.error}'`);
}

function showOp(h: HistoryOp): string {
  return `${h.id} (${h.op} ${clip(canonicalJson(h.args), 120)})`;
}

function showIds(ids: readonly string[], max = 8): string {
  if (ids.length === 0) return 'none';
  if (ids.length <= max) return ids.join(', ');
  return `…, ${ids.slice(-max).join(', ')}`;
}

/**
 * Decides whether `history` (the ops on one object) has a linearization under `model`. On failure
 * the reason names the longest linearizable prefix found and the op that could not be placed after
 * it; a reason starting with 'search limit' means the search gave up after `maxStates`
 * configurations (over all its rounds) without deciding.
 */
export function checkLinearizable<S>(
  given: readonly HistoryOp[],
  model: Model<S>,
  opts: {
    maxStates?: number;
    /** Adds the configurations explored to `states`. */
    explored?: { states: number };
  } = {},
): LinearizabilityResult {
  const counted = { states: 0 };
  try {
    return decide(given, model, opts.maxStates ?? DEFAULT_MAX_STATES, counted);
  } finally {
    if (opts.explored !== undefined) opts.explored.states += counted.states;
  }
}

/** checkLinearizable, counting the configurations it explores into `counted`. */
function decide<S>(
  given: readonly HistoryOp[],
  model: Model<S>,
  maxStates: number,
  counted: { states: number },
): LinearizabilityResult {
  // No outcome to explain: any ops, each placed at its invocation, make a linearization.
  if (given.every((h) => h.completed === null)) return { ok: true };
  const history = settleUnanswered(given);
  const n = history.length;

  // Each op gets an index among the completed ops or among the pending ones (for the bitsets).
  const slot = new Int32Array(n);
  let nCompleted = 0;
  let nPending = 0;
  for (let i = 0; i < n; i++) {
    const h = history[i]!;
    if (!Number.isFinite(h.invokedAt)) throw new RangeError(`${h.id}: invokedAt is not finite`);
    if (h.completed === null) {
      slot[i] = nPending++;
    } else {
      if (!Number.isFinite(h.completed.at) || h.completed.at < h.invokedAt) {
        throw new RangeError(
          `${h.id}: response at ${h.completed.at} precedes invocation at ${h.invokedAt}`,
        );
      }
      slot[i] = nCompleted++;
    }
  }
  if (nCompleted === 0) return { ok: true };

  // Events in time order; at equal times calls come first (so those ops count as concurrent).
  type Ev = { readonly time: number; readonly isCall: boolean; readonly op: number };
  const events: Ev[] = [];
  for (let i = 0; i < n; i++) {
    const h = history[i]!;
    events.push({ time: h.invokedAt, isCall: true, op: i });
    if (h.completed !== null) events.push({ time: h.completed.at, isCall: false, op: i });
  }
  events.sort(
    (a, b) => a.time - b.time || (a.isCall === b.isCall ? 0 : a.isCall ? -1 : 1) || a.op - b.op,
  );

  // The linked list: node 0 is the head sentinel, node k + 1 is events[k]; -1 is the end.
  const size = events.length + 1;
  const next = new Int32Array(size);
  const prev = new Int32Array(size);
  const nodeOp = new Int32Array(size);
  const nodeIsCall = new Uint8Array(size);
  const callNode = new Int32Array(n);
  const returnNode = new Int32Array(n).fill(-1);
  for (let node = 0; node < size; node++) {
    next[node] = node + 1 < size ? node + 1 : -1;
    prev[node] = node - 1;
    if (node === 0) continue;
    const ev = events[node - 1]!;
    nodeOp[node] = ev.op;
    nodeIsCall[node] = ev.isCall ? 1 : 0;
    if (ev.isCall) callNode[ev.op] = node;
    else returnNode[ev.op] = node;
  }
  const unlink = (node: number): void => {
    const p = prev[node]!;
    const q = next[node]!;
    next[p] = q;
    if (q !== -1) prev[q] = p;
  };
  const relink = (node: number): void => {
    const p = prev[node]!;
    const q = next[node]!;
    next[p] = node;
    if (q !== -1) prev[q] = node;
  };
  // The call precedes its return in the list, so relinking in reverse order restores it exactly.
  const lift = (op: number): void => {
    unlink(callNode[op]!);
    if (returnNode[op] !== -1) unlink(returnNode[op]!);
  };
  const unlift = (op: number): void => {
    if (returnNode[op] !== -1) relink(returnNode[op]!);
    relink(callNode[op]!);
  };

  // Unanswered ops with the same op and arguments are interchangeable, so of each such class only
  // the earliest invoked one not yet linearized is ever tried (the linearized ones of a class are
  // then always its first few). `classRank` orders the classes for the commutation rule.
  const classRank = new Int32Array(n);
  const prevInClass = new Int32Array(n).fill(-1);
  const classes = new Map<string, { rank: number; last: number }>();
  for (const ev of events) {
    const h = history[ev.op]!;
    if (!ev.isCall || h.completed !== null) continue;
    const classKey = `${h.op} ${canonicalJson(h.args)} ${canonicalJson(h.ctx ?? null)}`;
    let c = classes.get(classKey);
    if (c === undefined) {
      c = { rank: classes.size, last: -1 };
      classes.set(classKey, c);
    }
    classRank[ev.op] = c.rank;
    prevInClass[ev.op] = c.last;
    c.last = ev.op;
  }

  // The linearized set, split into completed and pending ops, and a Zobrist hash of the former.
  const completedBits = new Uint32Array(Math.ceil(nCompleted / 32));
  const pendingBits = new Uint32Array(Math.ceil(nPending / 32));
  const zobrist = new Uint32Array(nCompleted);
  for (let i = 0; i < nCompleted; i++) zobrist[i] = mix32(i);
  let hash = 0;
  const toggle = (op: number): void => {
    const sl = slot[op]!;
    if (history[op]!.completed === null) {
      pendingBits[sl >>> 5]! ^= 1 << (sl & 31);
    } else {
      completedBits[sl >>> 5]! ^= 1 << (sl & 31);
      hash = (hash ^ zobrist[sl]!) >>> 0;
    }
  };
  const pendingLinearized = (op: number): boolean => {
    const sl = slot[op]!;
    return (pendingBits[sl >>> 5]! & (1 << (sl & 31))) !== 0;
  };
  const completedLinearized = (op: number): boolean => {
    const sl = slot[op]!;
    return (completedBits[sl >>> 5]! & (1 << (sl & 31))) !== 0;
  };
  // HistoryOp.sequence: each op that must be linearized waits for the one before it there.
  const sequencePrev = new Int32Array(n).fill(-1);
  const inSequence: number[] = [];
  for (let i = 0; i < n; i++)
    if (history[i]!.completed !== null && history[i]!.sequence !== undefined) inSequence.push(i);
  inSequence.sort((a, b) => history[a]!.sequence! - history[b]!.sequence! || a - b);
  for (let k = 1; k < inSequence.length; k++) sequencePrev[inSequence[k]!] = inSequence[k - 1]!;

  const stateIds = new Map<string, number>();
  const stateId = (k: string): number => {
    let sid = stateIds.get(k);
    if (sid === undefined) {
      sid = stateIds.size;
      stateIds.set(k, sid);
    }
    return sid;
  };
  let states = 0;
  let best: DeadEnd<S> | null = null;

  // What an op does in a state, remembered: a search that backtracks tries the same ops in the
  // same states along many paths, and a model's step may be costly (the simulator's runs an app).
  const steps = new Map<string, { outcome: Outcome; next: S; key: string }>();
  const step = (state: S, stateKey: string, op: number) => {
    const memo = `${stateId(stateKey)} ${op}`;
    let r = steps.get(memo);
    if (r === undefined) {
      const h = history[op]!;
      const { outcome, next } = model.step(state, h.op, h.args, h.ctx);
      r = { outcome, next, key: model.key(next) };
      if (steps.size >= MAX_REMEMBERED_STEPS) steps.clear();
      steps.set(memo, r);
    }
    return r;
  };

  /**
   * One round of the search, linearizing at most `chainLimit` unanswered ops in a row. Returns
   * the result, and whether the limit cut anything off (when it did, a failure is not final).
   */
  const search = (chainLimit: number): { result: LinearizabilityResult; cut: boolean } => {
    let cut = false;
    // Memo: (state id, hash, obligation) → configurations seen. The obligation is '' after an
    // answered op; after an unanswered one it names that op, the state before it and the run of
    // unanswered ops so far, which decide what may come next.
    const seen = new Map<string, Seen[]>();
    const dominated = (memoKey: string): boolean => {
      const list = seen.get(memoKey);
      if (list === undefined) return false;
      for (const c of list) {
        if (sameWords(c.completed, completedBits) && subsetOf(c.pending, pendingBits)) return true;
      }
      return false;
    };
    /** Records the current configuration; false if it (or one that subsumes it) was seen before. */
    const visit = (k: string, obligation: string): boolean => {
      const base = `${stateId(k)}:${hash}:`;
      if (dominated(base)) return false;
      const memoKey = base + obligation;
      if (obligation !== '' && dominated(memoKey)) return false;
      let list = seen.get(memoKey);
      if (list === undefined) {
        list = [];
        seen.set(memoKey, list);
      }
      list.push({ completed: completedBits.slice(), pending: pendingBits.slice() });
      states++;
      counted.states++;
      return true;
    };

    // A frame per configuration on the current path: its state, the ops that may be linearized
    // next in the order they are tried, and how far it has got through them.
    interface Frame {
      readonly state: S;
      readonly key: string;
      /** How many unanswered ops were linearized in a row just before this configuration. */
      readonly chain: number;
      readonly cands: number[];
      /** The op whose response comes first among those not linearized (-1: none). */
      readonly stuck: number;
      idx: number;
    }
    /**
     * The candidates of the current configuration: ops invoked before the first response still in
     * the list. Answered ones come first, earliest response first (the most constrained); then one
     * unanswered op of each class, latest invoked first (an op that took effect most likely did so
     * soon after its invocation), so that those are only linearized when nothing else works.
     */
    const frameHere = (chain: number, prevOp: number, prevState: S | undefined): Frame => {
      const answered: number[] = [];
      const unanswered: number[] = [];
      let c = next[0]!;
      for (; c !== -1 && nodeIsCall[c] === 1; c = next[c]!) {
        const op = nodeOp[c]!;
        if (history[op]!.completed !== null) {
          if (sequencePrev[op] === -1 || completedLinearized(sequencePrev[op]!)) answered.push(op);
        } else if (prevInClass[op] === -1 || pendingLinearized(prevInClass[op]!))
          unanswered.push(op);
      }
      answered.sort(
        (x, y) =>
          (history[x]!.order ?? Infinity) - (history[y]!.order ?? Infinity) ||
          history[x]!.completed!.at - history[y]!.completed!.at ||
          x - y,
      );
      if (chain < chainLimit) {
        for (let i = unanswered.length - 1; i >= 0; i--) answered.push(unanswered[i]!);
      } else if (!cut) {
        // The bound cuts these off; note it if any of them could have been tried.
        cut = unanswered.some((u) => {
          const h = history[u]!;
          const { outcome, next: after } = model.step(state, h.op, h.args, h.ctx);
          const afterKey = model.key(after);
          if (afterKey === stateKey) return false;
          const p = history[prevOp]!;
          const pRank = classRank[prevOp]!;
          const uRank = classRank[u]!;
          return !skipAfterUnanswered(model, p, pRank, prevState as S, h, uRank, outcome, afterKey);
        });
      }
      const stuck = c === -1 ? -1 : nodeOp[c]!;
      return { state, key: stateKey, chain, cands: answered, stuck, idx: 0 };
    };

    let state = model.init;
    let stateKey = model.key(state);
    let remaining = nCompleted;
    visit(stateKey, '');
    const frames: Frame[] = [frameHere(0, -1, undefined)];

    for (;;) {
      const f = frames[frames.length - 1]!;
      if (f.idx >= f.cands.length) {
        // No candidate can go next: this order is a dead end.
        const depth = frames.length - 1;
        if (best === null || depth > best.prefix.length) {
          const prefix: number[] = [];
          for (let i = 0; i < depth; i++) prefix.push(frames[i]!.cands[frames[i]!.idx]!);
          best = { prefix, state, stuck: f.stuck, candidates: f.cands };
        }
        if (depth === 0) {
          const reason = `not linearizable: ${failureReason(history, model, best)}`;
          return { result: { ok: false, reason }, cut };
        }
        frames.pop();
        const parent = frames[frames.length - 1]!;
        const op = parent.cands[parent.idx]!;
        state = parent.state;
        stateKey = parent.key;
        toggle(op);
        unlift(op);
        if (history[op]!.completed !== null) remaining++;
        parent.idx++;
        continue;
      }

      const op = f.cands[f.idx]!;
      const h = history[op]!;
      const answered = h.completed !== null;
      const { outcome, next: after, key: afterKey } = step(state, stateKey, op);
      if (answered && !outcomeEqual(outcome, h.completed.outcome)) {
        f.idx++;
        continue;
      }
      // An unanswered op that changes nothing need never be linearized.
      if (!answered && afterKey === stateKey) {
        f.idx++;
        continue;
      }
      if (f.chain > 0) {
        const parent = frames[frames.length - 2]!;
        const p = parent.cands[parent.idx]!;
        if (
          skipAfterUnanswered(
            model,
            history[p]!,
            classRank[p]!,
            parent.state,
            h,
            classRank[op]!,
            outcome,
            afterKey,
          )
        ) {
          f.idx++;
          continue;
        }
      }
      const chain = answered ? 0 : f.chain + 1;
      toggle(op);
      if (!visit(afterKey, answered ? '' : `${op}@${stateId(stateKey)}#${chain}`)) {
        toggle(op);
        f.idx++;
        continue;
      }
      if (states > maxStates) {
        const deepest =
          best === null ? '' : `; deepest dead end so far: ${failureReason(history, model, best)}`;
        return {
          result: {
            ok: false,
            reason: `search limit exceeded: explored ${maxStates} configurations of ${n} ops without deciding${deepest}`,
          },
          cut: false,
        };
      }
      state = after;
      stateKey = afterKey;
      lift(op);
      if (answered && --remaining === 0) return { result: { ok: true }, cut };
      frames.push(frameHere(chain, op, f.state));
    }
  };

  // Rounds with a growing bound on runs of unanswered ops: most histories that need them at all
  // need them one at a time, and the bound keeps a failing round from trying every arrangement of
  // them. A failure is final once no candidate was cut off.
  for (let chainLimit = 1; ; chainLimit *= 2) {
    const { result, cut } = search(chainLimit >= nPending ? Infinity : chainLimit);
    if (result.ok || !cut) return result;
    if (result.reason.startsWith('search limit')) return result;
  }
}

/**
 * Ops without a response whose fate is known (HistoryOp.tookEffect) stop being "maybe" ops: one
 * that did not take effect is left out, one that did becomes an op answered, with an outcome that
 * matches any, by the time it is known to have taken effect (HistoryOp.takesEffectBy) or else
 * after everything else. The search then never tries subsets of them.
 */
function settleUnanswered(history: readonly HistoryOp[]): HistoryOp[] {
  let end = 0;
  for (const h of history) end = Math.max(end, h.invokedAt, h.completed?.at ?? 0);
  const out: HistoryOp[] = [];
  for (const h of history) {
    if (h.completed !== null || h.tookEffect === undefined) out.push(h);
    else if (h.tookEffect)
      out.push({
        ...h,
        completed: { at: Math.max(h.takesEffectBy ?? end + 1, h.invokedAt), outcome: ANY_OUTCOME },
      });
  }
  return out;
}

interface DeadEnd<S> {
  /** The ops linearized, in order. */
  readonly prefix: number[];
  readonly state: S;
  /** The op whose response comes first among the rest (-1: none). */
  readonly stuck: number;
  readonly candidates: number[];
}

/**
 * The reduction for the op `y` linearized right after the unanswered op `p` (which was applied to
 * `before`; `y` then returned `outcome` and led to a state with key `afterKey`). `y` is skipped
 * when `p` makes no difference to it (`y` alone from `before` returns the same and reaches the
 * same state: `p` can be left out), or when the two commute (`y` returns the same from `before`,
 * and `p` after `y` reaches the same state) and `y` is answered or of an earlier class than `p`:
 * some linearization without the skipped arrangement does the same. Every linearization can be
 * rearranged into one that is never skipped, by moving unanswered ops later, ordering commuting
 * runs of them by class and dropping the ones that make no difference, so no answer changes.
 */
function skipAfterUnanswered<S>(
  model: Model<S>,
  p: HistoryOp,
  pRank: number,
  before: S,
  y: HistoryOp,
  yRank: number,
  outcome: Outcome,
  afterKey: string,
): boolean {
  const yFirst = model.step(before, y.op, y.args, y.ctx);
  if (y.completed !== null && !outcomeEqual(yFirst.outcome, outcome)) return false;
  if (model.key(yFirst.next) === afterKey) return true;
  if (y.completed === null && pRank <= yRank) return false;
  return model.key(model.step(yFirst.next, p.op, p.args, p.ctx).next) === afterKey;
}

/** Describes the deepest dead end: the prefix, the op that could not follow it and why. */
function failureReason<S>(
  history: readonly HistoryOp[],
  model: Model<S>,
  best: DeadEnd<S>,
): string {
  const prefixIds = best.prefix.map((i) => history[i]!.id);
  const head = `the longest linearizable prefix found has ${prefixIds.length} of ${history.length} ops (${showIds(prefixIds)})`;
  if (best.stuck === -1) return `${head}, and nothing can follow it`;
  const stuck = history[best.stuck]!;
  const recorded = stuck.completed!.outcome;
  const expected = model.step(best.state, stuck.op, stuck.args, stuck.ctx).outcome;
  const stateDesc = `state ${clip(model.key(best.state))}`;
  const why =
    recorded === ANY_OUTCOME
      ? `it took effect without a response, but no order of the remaining ops works from ${stateDesc}`
      : outcomeEqual(expected, recorded)
        ? `it fits ${stateDesc} (returning ${showOutcome(recorded)}), but no order of the remaining ops works from there`
        : `it returned ${showOutcome(recorded)}, but from ${stateDesc} it would return ${showOutcome(expected)}`;
  const others = best.candidates.filter((i) => i !== best.stuck).map((i) => history[i]!.id);
  return (
    `${head}; after it ${showOp(stuck)} cannot be placed: ${why}` +
    `; the ops that could go before it (${showIds(others)}) do not help`
  );
}
