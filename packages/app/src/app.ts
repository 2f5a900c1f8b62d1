import { z } from 'zod';
import type { JsonValue } from './json.js';
import type { User } from './user.js';

/**
 * The transaction an operation runs in. Reads see a consistent snapshot at the op's position in
 * `committed · tentative`; writes become visible atomically when the op finishes. Everything here
 * is deterministic: the same op at the same position gives the same result on every replica.
 */
export interface Tx {
  get(key: string): JsonValue | undefined;
  put(key: string, value: JsonValue): void;
  delete(key: string): void;
  /** Keys starting with `prefix` and their values, sorted by key, including this op's own writes. */
  scan(prefix: string): Array<[string, JsonValue]>;
  /** The op's HLC timestamp, in milliseconds since the epoch. Equal on every replica. */
  now(): number;
  /** A number in [0, 1) from a generator seeded by the op id. Equal on every replica. */
  random(): number;
  /**
   * Who invoked the op: null for an anonymous caller, else the user the replica the client is
   * connected to verified from the client's token. It travels with the op, so every replica and
   * every re-execution sees the same user.
   */
  readonly user: User | null;
}

export interface OpDefinition<
  A extends z.ZodType = z.ZodType,
  R = unknown,
  RO extends boolean = boolean,
> {
  /** Zod schema for the arguments; checked before the op is ordered. */
  readonly args: A;
  /**
   * The op only reads: it may be watched (a live query), and when weak it is answered from local
   * state and never gossiped. Its type keeps the literal, so a client typed from the app accepts
   * only read-only ops in `watch`.
   */
  readonly readOnly?: RO;
  /**
   * Once the cluster verifies user tokens, ops are closed to anonymous callers: `public: true`
   * lets anyone call this one (no effect while the cluster verifies no tokens).
   */
  readonly public?: boolean;
  /**
   * Once the cluster verifies user tokens: who may call the op, among signed-in users (anonymous
   * callers never may). Checked at the replica the client is connected to, before the op is
   * ordered; a refused op never takes effect. Not for `public` ops.
   */
  readonly access?: (user: User) => boolean;
  /**
   * The consistency level the app means clients to call this op with. Only a declaration: a
   * client still chooses per call (`invokeWeak`, `invokeStrong`). `creek check` compares it with
   * its own verdict and fails when an op declared `'weak'` must be strong.
   */
  readonly level?: OpLevel;
  /**
   * Arguments for `creek check` to call the op with, where the schema says too little (an id that
   * must name a row other ops made, a date range whose end follows its start): given fast-check's
   * module, returns an arbitrary of arguments, e.g. `(fc) => fc.record({ account: fc.constantFrom('a', 'b'), amount: fc.integer({ min: 1, max: 50 }) })`.
   * `creek check` uses it in place of the arbitrary it derives from `args`, and refuses one that
   * throws, returns no arbitrary, or yields arguments `args` refuses. Never called by a replica.
   */
  readonly generate?: ArgsGenerator;
  /**
   * Must be synchronous and deterministic. A thrown error becomes a failed result with its message.
   * While it runs, the clock, `Math.random`, `crypto`'s random values and the timers throw: use
   * `tx.now()` and `tx.random()`.
   */
  run(tx: Tx, args: z.output<A>): R;
}

/**
 * Declares one operation; exists so that `args` types flow into `run`. Throws at once when `run`
 * is an `async` function: an op must be synchronous. (A run that returns a Promise some other
 * way fails at its first execution.)
 */
export function op<A extends z.ZodType, R extends JsonValue | void, RO extends boolean = false>(
  def: OpDefinition<A, R, RO>,
): NoInfer<OpDefinition<A, R, RO>> {
  if (isAsync(def.run)) throw new Error(asyncRunError('op(...)'));
  return def;
}

/**
 * Whether `fn` is an `async` function (or async generator): it returns a Promise, always. Checked
 * by its constructor's name, which is what distinguishes them without calling them (a transpiled
 * async function is a plain one, and is caught when it first returns a Promise).
 */
function isAsync(fn: unknown): boolean {
  if (typeof fn !== 'function') return false;
  const kind = (fn as { constructor?: { name?: unknown } }).constructor?.name;
  return kind === 'AsyncFunction' || kind === 'AsyncGeneratorFunction';
}

/**
 * Why an async run is refused: each replica runs an op at one place in the order, all at once;
 * whatever followed an `await` would run later, interleaved with other ops, differently on each
 * replica.
 */
function asyncRunError(what: string): string {
  return (
    `${what}: run is an async function, and an op must be synchronous: each replica runs it at ` +
    'one place in the order, and what follows an await would run later, at a different point on ' +
    'each replica. Remove async/await from run; tx.get, tx.put and tx.scan are synchronous.'
  );
}

/**
 * An op's generator of arguments for `creek check` (OpDefinition.generate). `fc` is fast-check's
 * module, handed over by `creek check`: an app needs no fast-check of its own, and this package
 * does not depend on it, so `fc` is untyped here (annotate it `typeof import('fast-check')` for
 * checked use). Returns a fast-check arbitrary of the op's arguments.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fast-check's module, see above
export type ArgsGenerator = (fc: any) => unknown;

/** Weak: answered at once from the replica's order, maybe corrected later; strong: ordered first. */
export type OpLevel = 'weak' | 'strong';
export const OP_LEVELS = ['weak', 'strong'] as const;

/** What an invariant reads: a state, as an op's `tx` reads it, without writing. */
export interface StateReader {
  get(key: string): JsonValue | undefined;
  /** Keys starting with `prefix` and their values, sorted by key. */
  scan(prefix: string): Array<[string, JsonValue]>;
}

/**
 * A property every state of the app must have (a balance is never negative): true when `read`'s
 * state has it. Synchronous and deterministic, like an op's `run`.
 */
export type Invariant = (read: StateReader) => boolean;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a definition of any op type
export type AnyOpDefinition = OpDefinition<any, any>;
export type OpDefinitions = Record<string, AnyOpDefinition>;

/** An application: its ops plus the built-in data types. `D` carries the types for the client. */
export interface App<D extends OpDefinitions = OpDefinitions> {
  readonly definitions: D;
  lookup(name: string): AnyOpDefinition | undefined;
  names(): string[];
  /** Who may call op `name` once the cluster verifies user tokens (see access.ts). */
  accessOf(name: string): OpAccess | undefined;
  /** The app's invariants, by name (AppOptions.invariants); `creek check` checks them. */
  readonly invariants: Readonly<Record<string, Invariant>>;
}

/**
 * Who may call the built-in `kv.*` and `queue.*` ops once the cluster verifies user tokens:
 * anyone, signed-in users, or no end user (the default: they read and write any key, so an app
 * whose own ops check who calls them would be open through them).
 */
export type BuiltinAccess = 'public' | 'signed-in' | 'none';
export const BUILTIN_ACCESS = ['public', 'signed-in', 'none'] as const;

export interface AppOptions {
  /** Who may call the built-in data types' ops once auth is on (default 'none'). */
  readonly builtins?: BuiltinAccess;
  /**
   * Who may use shared contexts (`client.joinContext`, the `creek.context.*` ops) once auth is on
   * (default: as `builtins`): everyone, signed-in users, no end user, or the signed-in users a
   * check lets into each context (`(user, id) => boolean`: its members). A member of a context can
   * make the others wait on ops it names, so an app opens one only to whom it trusts with that.
   */
  readonly contexts?: BuiltinAccess | ContextAccess;
  /**
   * Properties every state must have, by name. `creek check` looks for ops that, run weak on a
   * state that missed a concurrent op, would break one.
   */
  readonly invariants?: Readonly<Record<string, Invariant>>;
}

/**
 * Whether a signed-in user may use shared context `id` (AppOptions.contexts): read its frontier
 * and merge ops into it. Runs at the replica the user's client is connected to, before the op is
 * ordered, as an op's `access` does; a check that throws refuses.
 */
export type ContextAccess = (user: User, id: string) => boolean;

/** Who may call one op once the cluster verifies user tokens. */
export type OpAccess =
  | { readonly kind: 'public' }
  | { readonly kind: 'signed-in' }
  | { readonly kind: 'user'; readonly check: (user: User) => boolean }
  /** A shared context's built-in: signed-in users the app's check lets into the context named. */
  | { readonly kind: 'context'; readonly check: ContextAccess }
  /** A built-in the app keeps closed to end users (AppOptions.builtins 'none'). */
  | { readonly kind: 'closed' };

export const RESERVED_PREFIXES = ['kv.', 'queue.', 'creek.'] as const;

const OP_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * Built-ins every caller may invoke whatever the app opens: `creek.abandon` decides only about the
 * caller's own session, whose records are the caller's user's alone.
 */
const ALWAYS_OPEN: ReadonlySet<string> = new Set(['creek.abandon']);

/** The built-ins of shared contexts, opened by AppOptions.contexts. */
const CONTEXT_OPS_PREFIX = 'creek.context.';

/**
 * An app of `definitions` beside `builtins`. Not part of the package's API: apps are declared
 * with `defineApp` (define-app.ts), which passes the built-in ops every replica and client
 * expects; an app made with other built-ins would not match its cluster's.
 */
export function createApp<D extends OpDefinitions>(
  definitions: D,
  builtins: OpDefinitions,
  options: AppOptions = {},
): App<D> {
  const builtinAccess = options.builtins ?? 'none';
  if (!(BUILTIN_ACCESS as readonly string[]).includes(builtinAccess))
    throw new Error(
      `builtins: must be one of ${BUILTIN_ACCESS.join(', ')}, not ${JSON.stringify(builtinAccess)}`,
    );
  const contextAccess: unknown = options.contexts ?? builtinAccess;
  if (
    typeof contextAccess !== 'function' &&
    !(BUILTIN_ACCESS as readonly unknown[]).includes(contextAccess)
  )
    throw new Error(
      `contexts: must be one of ${BUILTIN_ACCESS.join(', ')} or a function (user, id) => boolean, not ${JSON.stringify(contextAccess)}`,
    );
  const contextOpAccess: OpAccess =
    typeof contextAccess === 'function'
      ? { kind: 'context', check: contextAccess as ContextAccess }
      : builtinAccessOf(contextAccess as BuiltinAccess);
  const table = new Map<string, AnyOpDefinition>(Object.entries(builtins));
  const access = new Map<string, OpAccess>();
  for (const name of table.keys())
    access.set(
      name,
      ALWAYS_OPEN.has(name)
        ? { kind: 'public' }
        : name.startsWith(CONTEXT_OPS_PREFIX)
          ? contextOpAccess
          : builtinAccessOf(builtinAccess),
    );
  for (const [name, def] of Object.entries(definitions)) {
    if (!OP_NAME.test(name))
      throw new Error(`invalid operation name '${name}': use letters, digits, '_', '.', '-'`);
    if (RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
      throw new Error(
        `operation name '${name}' uses a reserved prefix (${RESERVED_PREFIXES.join(', ')})`,
      );
    }
    if (!(def.args instanceof z.ZodType))
      throw new Error(`operation '${name}': args must be a Zod schema`);
    if (typeof def.run !== 'function')
      throw new Error(`operation '${name}': run must be a function`);
    if (isAsync(def.run)) throw new Error(asyncRunError(`operation '${name}'`));
    const level: unknown = def.level;
    if (level !== undefined && !(OP_LEVELS as readonly unknown[]).includes(level))
      throw new Error(`operation '${name}': level must be 'weak' or 'strong'`);
    const generate: unknown = def.generate;
    if (generate !== undefined && typeof generate !== 'function')
      throw new Error(
        `operation '${name}': generate must be a function (fc) => an arbitrary of its arguments`,
      );
    table.set(name, def);
    access.set(name, opAccessOf(name, def));
  }
  const invariants: unknown = options.invariants ?? {};
  if (typeof invariants !== 'object' || invariants === null)
    throw new Error('invariants: must be an object of named functions (read) => boolean');
  for (const [name, check] of Object.entries(invariants))
    if (typeof check !== 'function')
      throw new Error(`invariant '${name}': must be a function (read) => boolean`);
  return {
    definitions,
    lookup: (name) => table.get(name),
    names: () => [...table.keys()].sort(),
    accessOf: (name) => access.get(name),
    invariants: invariants as Readonly<Record<string, Invariant>>,
  };
}

function builtinAccessOf(a: BuiltinAccess): OpAccess {
  return a === 'public'
    ? { kind: 'public' }
    : a === 'signed-in'
      ? { kind: 'signed-in' }
      : { kind: 'closed' };
}

/** An app op's access, from its `public` and `access` fields (checked here, once, at load). */
function opAccessOf(name: string, def: AnyOpDefinition): OpAccess {
  const isPublic: unknown = def.public;
  const check: unknown = def.access;
  if (isPublic !== undefined && typeof isPublic !== 'boolean')
    throw new Error(`operation '${name}': public must be true or false`);
  if (check !== undefined && typeof check !== 'function')
    throw new Error(`operation '${name}': access must be a function (user) => boolean`);
  if (isPublic === true && check !== undefined)
    throw new Error(
      `operation '${name}': public lets anyone call it, access limits who may: give one of them`,
    );
  if (isPublic === true) return { kind: 'public' };
  if (check !== undefined) return { kind: 'user', check: check as (user: User) => boolean };
  return { kind: 'signed-in' };
}

export type ArgsCheck = { ok: true; args: unknown } | { ok: false; error: string };

/** Checks arguments against an op's schema; the error names each offending field. */
export function checkArgs(name: string, def: AnyOpDefinition, args: unknown): ArgsCheck {
  const parsed = (def.args as z.ZodType).safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)';
    return `${field}: ${issue.message}`;
  });
  return { ok: false, error: `invalid arguments for '${name}': ${problems.join('; ')}` };
}
