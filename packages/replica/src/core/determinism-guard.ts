/**
 * The execution guard: while an op's `run` executes, the usual sources of nondeterminism throw
 * a NondeterminismError that names the safe alternative, instead of handing each replica its own
 * clock reading or random number (and so each replica its own state, silently).
 *
 * Why swap the globals around each run rather than wrap them for good: between ops the process
 * is the replica's own (its timers, its clock, the libraries it uses), and they must see the
 * original functions, not a wrapper that checks a flag on every call. The swaps are written out one
 * by one, not looped over a table: each is then a plain property store the engine keeps fast, and
 * the whole guard costs a few tens of nanoseconds per run (`npm run bench:core` measures it).
 *
 * This is the one module of the replica that touches these globals, and it never reads time or
 * randomness from them: it only puts them out of reach of app code, and back.
 *
 * What it cannot catch (a clock captured before the op ran, `node:crypto` imported directly, a
 * module-level counter, iteration over a Map filled in arrival order) is what `creek check` finds
 * by running every op twice in two module instances.
 */

/** The error a guarded source throws inside an op: the op fails, the same way on every replica. */
export class NondeterminismError extends Error {
  override readonly name = 'NondeterminismError';
}

const CLOCK = 'each replica would read its own clock';
const DICE = 'each replica would draw different numbers';
const LATER =
  'an op runs to completion at its place in the order, and a callback run later would act outside it';
const TIMER_INSTEAD = 'Do the work in run itself; schedule follow-up work from the client.';

/** How many times a guarded source refused on this thread, and the last refusal's message. */
let refused = 0;
let lastRefusal: string | undefined;

/**
 * Refusals so far on this thread, and the last one's message: a guarded source an op called, even
 * if the op caught the error. `creek check` reports an op that reached for one.
 */
export function guardRefusals(): { readonly count: number; readonly last: string | undefined } {
  return { count: refused, last: lastRefusal };
}

/** A function that throws the refusal (made once: a fresh closure per run would cost). */
function refuse(what: string, why: string, instead: string): () => never {
  const message = `${what} is not allowed inside an op: ${why}, so replicas would disagree. ${instead}`;
  return () => {
    refused++;
    lastRefusal = message;
    throw new NondeterminismError(message);
  };
}

const RANDOM = refuse('Math.random()', DICE, 'Use tx.random(): seeded by the op id.');
const PERFORMANCE_NOW = refuse('performance.now()', CLOCK, "Use tx.now(): the op's timestamp.");
const RANDOM_UUID = refuse(
  'crypto.randomUUID()',
  'each replica would make a different id',
  'Derive ids from tx.random() (or from the arguments).',
);
const GET_RANDOM_VALUES = refuse(
  'crypto.getRandomValues()',
  DICE,
  'Derive the values from tx.random().',
);
const SET_TIMEOUT = refuse('setTimeout()', LATER, TIMER_INSTEAD);
const SET_INTERVAL = refuse('setInterval()', LATER, TIMER_INSTEAD);
const SET_IMMEDIATE = refuse('setImmediate()', LATER, TIMER_INSTEAD);
const QUEUE_MICROTASK = refuse('queueMicrotask()', LATER, TIMER_INSTEAD);

/** The globals the guard swaps, as this package (compiled without DOM or Node types) sees them. */
interface Globals {
  Date: unknown;
  setTimeout?: unknown;
  setInterval?: unknown;
  setImmediate?: unknown;
  queueMicrotask?: unknown;
  performance?: { now?: unknown };
  crypto?: { randomUUID?: unknown; getRandomValues?: unknown };
}
const g = globalThis as unknown as Globals;
const math = Math as { random: unknown };

/** Everything one install swapped, to put back. */
interface Saved {
  random: unknown;
  Date: unknown;
  setTimeout: unknown;
  setInterval: unknown;
  setImmediate: unknown;
  queueMicrotask: unknown;
  performance: { now?: unknown } | undefined;
  performanceNow: unknown;
  crypto: { randomUUID?: unknown; getRandomValues?: unknown } | undefined;
  randomUUID: unknown;
  getRandomValues: unknown;
}

/**
 * Runs `fn` with the guard installed, and restores every global afterwards, whether `fn` returns
 * or throws (and even if the op reassigned one of them meanwhile). A guarded run inside another
 * saves the outer guard's replacements and puts them back, so the outer run stays guarded.
 */
export function guarded<T>(fn: () => T): T {
  const saved = install();
  try {
    return fn();
  } finally {
    restore(saved);
  }
}

function install(): Saved {
  const performance = g.performance;
  const crypto = g.crypto;
  const saved: Saved = {
    random: math.random,
    Date: g.Date,
    setTimeout: g.setTimeout,
    setInterval: g.setInterval,
    setImmediate: g.setImmediate,
    queueMicrotask: g.queueMicrotask,
    performance,
    performanceNow: performance?.now,
    crypto,
    randomUUID: crypto?.randomUUID,
    getRandomValues: crypto?.getRandomValues,
  };
  math.random = RANDOM;
  g.Date = guardedDate(saved.Date);
  // Absent in this runtime (setImmediate in a browser): nothing to take away.
  if (saved.setTimeout !== undefined) g.setTimeout = SET_TIMEOUT;
  if (saved.setInterval !== undefined) g.setInterval = SET_INTERVAL;
  if (saved.setImmediate !== undefined) g.setImmediate = SET_IMMEDIATE;
  if (saved.queueMicrotask !== undefined) g.queueMicrotask = QUEUE_MICROTASK;
  // An inherited method (performance.now in Node, crypto's in browsers) is shadowed by an own
  // property of the object at the first run, which then holds the original method between runs:
  // adding and deleting the property at every run changed the object's shape each time, which
  // cost more than the rest of the guard together and slowed every performance.now() call.
  if (saved.performanceNow !== undefined) performance!.now = PERFORMANCE_NOW;
  if (saved.randomUUID !== undefined) crypto!.randomUUID = RANDOM_UUID;
  if (saved.getRandomValues !== undefined) crypto!.getRandomValues = GET_RANDOM_VALUES;
  return saved;
}

function restore(s: Saved): void {
  math.random = s.random;
  g.Date = s.Date;
  if (s.setTimeout !== undefined) g.setTimeout = s.setTimeout;
  if (s.setInterval !== undefined) g.setInterval = s.setInterval;
  if (s.setImmediate !== undefined) g.setImmediate = s.setImmediate;
  if (s.queueMicrotask !== undefined) g.queueMicrotask = s.queueMicrotask;
  if (s.performanceNow !== undefined) s.performance!.now = s.performanceNow;
  if (s.randomUUID !== undefined) s.crypto!.randomUUID = s.randomUUID;
  if (s.getRandomValues !== undefined) s.crypto!.getRandomValues = s.getRandomValues;
}

type DateConstructorLike = (new (...args: unknown[]) => object) & {
  readonly prototype: object;
  UTC: unknown;
  parse: unknown;
};

/** The guarded Date, and the Date it stands for: built again only if that one is replaced. */
let guardedFor: unknown = undefined;
let guardedDateCtor: unknown = undefined;

/**
 * `Date` with the clock taken out: `new Date(tx.now())`, `Date.UTC`, `Date.parse` and
 * `instanceof Date` work; `Date.now()`, `new Date()` and `Date()` (both read the clock) throw.
 */
function guardedDate(original: unknown): unknown {
  if (original === guardedFor) return guardedDateCtor;
  if (typeof original !== 'function') return original;
  const Real = original as DateConstructorLike;
  const noArgs = refuse('new Date() without arguments', CLOCK, 'Use new Date(tx.now()).');
  const asFunction = refuse('Date()', CLOCK, 'Use new Date(tx.now()).toString().');
  function Date(this: unknown, ...args: unknown[]): object {
    if (new.target === undefined) return asFunction();
    if (args.length === 0) return noArgs();
    return Reflect.construct(Real, args, new.target) as object;
  }
  // Dates made inside and outside the op share one prototype, so instanceof holds both ways.
  Date.prototype = Real.prototype;
  Object.assign(Date, {
    now: refuse('Date.now()', CLOCK, "Use tx.now(): the op's timestamp."),
    UTC: Real.UTC,
    parse: Real.parse,
  });
  guardedFor = original;
  guardedDateCtor = Date;
  return Date;
}
