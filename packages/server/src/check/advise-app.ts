import fc from 'fast-check';
import {
  canonicalJson,
  checkAccess,
  checkArgs,
  type AnyOpDefinition,
  type App,
  type JsonValue,
  type OpLevel,
  type User,
} from '@creek/app';
import type { Outcome } from '@creek/replica/core/types.js';
import { UnsupportedSchema } from './arbitraries.js';
import { argumentsOf } from './op-arguments.js';
import {
  apply,
  applyTo,
  brokenInvariants,
  differingKeys,
  runOn,
  type Call,
  type State,
} from './effects.js';

/**
 * The weak-or-strong advisor of `creek check`: for every op of an app, whether it may be called
 * weak, by Gemini's rule (RedBlue §4.2 Theorem 1, §5.3 Theorem 2 and "What can be blue? What must
 * be red?"):
 *
 * - an op may be weak (blue) when its shadow op commutes with every op's, itself included, and it
 *   is invariant safe: applied on any valid state, also one that moved on since the op ran, it
 *   leaves a valid state;
 * - otherwise it must be strong (red): two ops whose shadow ops do not commute are both red, and
 *   so is an op whose shadow op may break an invariant.
 *
 * A weak op's answer is computed on its replica's state, which may lack ops ordered ahead of it
 * elsewhere; what the client does on that answer (hands out the cash) is its shadow op landing on
 * the state those ops made. Shadow ops are read off an op's writes (effects.ts).
 *
 * Each check is a fast-check property over generated states (histories of the app's own ops, as
 * for the determinism check), arguments (from the ops' schemas) and callers (USERS). A failing
 * sample is shrunk: the counterexample reported is as small as fast-check could make it.
 */

/** Who calls, in generated calls: anonymous, a signed-in user, an admin (`role: 'admin'`). */
export const USERS: readonly (User | null)[] = [
  null,
  { id: 'alice', claims: { sub: 'alice' } },
  { id: 'admin', claims: { sub: 'admin', role: 'admin' } },
];

const userNames = USERS.map((u) =>
  u === null
    ? 'anonymous'
    : u.claims.role === undefined
      ? u.id
      : `${u.id} (role ${String(u.claims.role)})`,
).join(', ');

export interface AdviseOptions {
  readonly app: App;
  /** Samples per check (one check per pair of ops, and per ordered pair with invariants). */
  readonly runs: number;
  readonly seed: number;
  /** Called as each op's advice is ready: progress. */
  readonly onOp?: (advice: OpAdvice) => void;
}

/** A call with the answer it got on the state it ran on. */
export interface Answered extends Call {
  readonly answer: Outcome;
}

/** Why an op must be strong, shown on a small state. */
export interface Counterexample {
  /**
   * - `breaks-invariant`: `call` ran on `state`; `other` ran there too and landed first; then
   *   `call`'s shadow op landed and broke `invariants`.
   * - `breaks-in-order`: `call` alone, run on `state`, broke `invariants`: no level fixes that.
   * - `does-not-commute`: `call` and `other` both ran on `state`; their shadow ops applied in
   *   the two orders leave different states.
   */
  readonly kind: 'breaks-invariant' | 'breaks-in-order' | 'does-not-commute';
  /** The calls that built `state` from an empty one, in order (failed ones left out). */
  readonly history: readonly Call[];
  readonly state: readonly (readonly [string, JsonValue])[];
  readonly call: Answered;
  readonly other: Answered | null;
  readonly invariants: readonly string[];
  /**
   * The keys that show it, and their values: in the final state (`breaks-*`), or after `call`
   * then `other` and after `other` then `call` (`does-not-commute`). Undefined: no such key.
   */
  readonly keys: readonly { key: string; values: (JsonValue | undefined)[] }[];
}

export interface OpAdvice {
  readonly op: string;
  /** The level the op declares (`level` in its definition), if any. */
  readonly declared: OpLevel | undefined;
  /** `unchecked`: its arguments cannot be generated, or it never succeeded on a generated state. */
  readonly verdict: 'weak' | 'strong' | 'unchecked';
  /** One line per finding, most important first. */
  readonly reasons: readonly string[];
  /** For `strong`: the first reason, on a small state. */
  readonly counterexample: Counterexample | null;
  /** Ops whose shadow ops do not commute with this one's (itself included). */
  readonly conflicts: readonly string[];
  /**
   * Ops whose place in the order, before or after this one, changes this op's answer (though not
   * what it ends up doing to the state): a weak call's answer may be corrected when they run
   * concurrently.
   */
  readonly answerDependsOn: readonly string[];
  /** Declared weak, and must be strong: `creek check` fails. */
  readonly mismatch: boolean;
}

/** Ops run to build a state, at most. */
const HISTORY = 8;
/** Timestamps (µs) the generated calls run at: the history's, then the two calls'. */
const T0 = 1_767_225_600_000_000;
/** The two calls of a sample run at these timestamps with these ids, as two replicas' calls. */
const AT = [
  { ts: T0 + (HISTORY + 1) * 1_000, id: { replica: 1, eventNo: 1 } },
  { ts: T0 + (HISTORY + 1) * 1_000 + 1, id: { replica: 2, eventNo: 1 } },
] as const;

interface Sample {
  readonly history: readonly Call[];
  readonly a: Call;
  readonly b: Call;
}

/** As the wire carries it: JSON, so undefined fields vanish and there is no -0. */
function wire(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

/** A generated call: its arguments not yet checked by the op's schema. */
interface RawCall {
  readonly op: string;
  readonly args: unknown;
  readonly user: User | null;
}

/** The call as a replica would run it, or null when the replica would refuse it. */
function admitted(app: App, call: RawCall): Call | null {
  const def = app.lookup(call.op)!;
  const checked = checkArgs(call.op, def, wire(call.args));
  if (!checked.ok || checkAccess(app, call.op, call.user) !== null) return null;
  return { op: call.op, args: wire(checked.args), user: call.user };
}

/** One check's finding, and how many of its samples the op under advice succeeded in. */
interface Outcomes {
  finding: Counterexample | null;
  succeeded: number;
  /** Whether the first op's answer changed when the second came first; and the reverse. */
  answerDiffers: [boolean, boolean];
}

/** Advice for every op of the app (not Creek's built-ins), in name order. */
export function adviseApp(options: AdviseOptions): OpAdvice[] {
  const { app } = options;
  const names = Object.keys(app.definitions).sort();
  const calls = new Map<string, fc.Arbitrary<RawCall>>();
  const unsupported = new Map<string, string>();
  for (const op of names) {
    // Callers the op admits only: a refused call would be a sample wasted.
    const users = USERS.filter((u) => checkAccess(app, op, u) === null);
    if (users.length === 0) {
      unsupported.set(op, `none of the generated callers may call it (${userNames})`);
      continue;
    }
    try {
      const args = argumentsOf(app, op, { smallIntegers: true });
      calls.set(op, fc.record({ op: fc.constant(op), args, user: fc.constantFrom(...users) }));
    } catch (err) {
      if (!(err instanceof UnsupportedSchema)) throw err;
      unsupported.set(op, err.message);
    }
  }
  const writers = names.filter((n) => calls.has(n) && app.lookup(n)!.readOnly !== true);
  const history: fc.Arbitrary<RawCall[]> =
    writers.length === 0
      ? fc.constant<RawCall[]>([])
      : fc.array(fc.oneof(...writers.map((n) => calls.get(n)!)), { maxLength: HISTORY });

  const ctx: Context = { app, options, history, calls };
  const commuting = new Map<string, Outcomes>();
  const invariantChecks = new Map<string, Outcomes>();
  const checkable = names.filter((n) => calls.has(n));
  for (const [i, a] of checkable.entries())
    for (const b of checkable.slice(i)) commuting.set(`${a}|${b}`, checkCommutes(ctx, a, b));
  if (Object.keys(app.invariants).length > 0)
    for (const a of checkable)
      for (const b of checkable) invariantChecks.set(`${a}|${b}`, checkInvariants(ctx, a, b));

  const advice: OpAdvice[] = [];
  for (const op of names) {
    const one =
      unsupported.get(op) !== undefined
        ? unchecked(app, op, unsupported.get(op)!)
        : adviceFor(app, op, checkable, commuting, invariantChecks);
    options.onOp?.(one);
    advice.push(one);
  }
  return advice;
}

export interface Context {
  readonly app: App;
  readonly options: AdviseOptions;
  readonly history: fc.Arbitrary<RawCall[]>;
  readonly calls: ReadonlyMap<string, fc.Arbitrary<RawCall>>;
}

function unchecked(app: App, op: string, reason: string): OpAdvice {
  return {
    op,
    declared: app.lookup(op)!.level,
    verdict: 'unchecked',
    reasons: [reason],
    counterexample: null,
    conflicts: [],
    answerDependsOn: [],
    mismatch: false,
  };
}

/** Puts together what the checks found about `op`. */
function adviceFor(
  app: App,
  op: string,
  names: readonly string[],
  commuting: ReadonlyMap<string, Outcomes>,
  invariantChecks: ReadonlyMap<string, Outcomes>,
): OpAdvice {
  const def: AnyOpDefinition = app.lookup(op)!;
  const pair = (other: string): Outcomes =>
    commuting.get(op <= other ? `${op}|${other}` : `${other}|${op}`)!;
  // Itself first: a finding against itself needs no other op to explain.
  const others = [op, ...names.filter((n) => n !== op)];
  const reasons: string[] = [];
  let counterexample: Counterexample | null = null;
  const note = (reason: string, finding: Counterexample | null): void => {
    reasons.push(reason);
    counterexample ??= finding;
  };
  let succeeded = 0;
  let inOrder = false;
  for (const other of others) {
    const found = invariantChecks.get(`${op}|${other}`);
    if (found === undefined) continue;
    succeeded += found.succeeded;
    const f = found.finding;
    if (f?.kind === 'breaks-in-order') {
      // The same finding whatever the other op: said once.
      if (inOrder) continue;
      inOrder = true;
      note(
        `breaks ${quoted(f.invariants)} even run in order: no level fixes that; the op or the invariant is wrong`,
        f,
      );
    } else if (f !== null)
      note(
        `its effect, decided on a state that lacks a concurrent ${other}, breaks ${quoted(f.invariants)}`,
        f,
      );
  }
  const conflicts: string[] = [];
  const answerDependsOn: string[] = [];
  for (const other of others) {
    const found = pair(other);
    if (found.answerDiffers[op <= other ? 0 : 1]) answerDependsOn.push(other);
    if (found.finding === null) continue;
    conflicts.push(other);
    note(
      other === op
        ? 'two concurrent calls of it do not commute: their effects in the two orders differ'
        : `it does not commute with ${other}: both must be strong (Gemini §5.3, rule 1)`,
      found.finding.call.op === op ? found.finding : swapped(found.finding),
    );
  }
  for (const other of others) succeeded += pair(other).succeeded;
  const declared = def.level;
  if (reasons.length === 0 && def.readOnly !== true && succeeded === 0)
    return unchecked(
      app,
      op,
      'it never succeeded on a generated state and arguments: give its arguments a schema creek check can fill, or check it by hand',
    );
  const verdict = reasons.length === 0 ? 'weak' : 'strong';
  return {
    op,
    declared,
    verdict,
    reasons:
      reasons.length === 0
        ? [
            def.readOnly === true
              ? 'read-only: it changes nothing, so it commutes with every op and breaks no invariant'
              : 'its effect commutes with every op and, landing on a state that moved on, broke no invariant',
          ]
        : reasons,
    counterexample,
    conflicts,
    answerDependsOn: answerDependsOn.filter((o) => !conflicts.includes(o)),
    mismatch: declared === 'weak' && verdict === 'strong',
  };
}

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** A commuting finding told from the other op's side. */
function swapped(f: Counterexample): Counterexample {
  return {
    ...f,
    call: f.other!,
    other: f.call,
    keys: f.keys.map(({ key, values }) => ({ key, values: [...values].reverse() })),
  };
}

/** Each check's own stream of samples, from the advice's seed. */
function checkSeed(seed: number, what: string): number {
  let h = seed | 0;
  for (let i = 0; i < what.length; i++) h = Math.imul(h ^ what.charCodeAt(i), 0x9e3779b1);
  return h | 0;
}

/** The state `history` builds from an empty one: each call's effect where it succeeded. */
function build(app: App, history: readonly Call[]): { state: State; kept: Call[] } {
  const state = new Map<string, JsonValue>();
  const kept: Call[] = [];
  for (const [i, call] of history.entries()) {
    const ran = runOn(app.lookup(call.op)!, call, state, T0 + i * 1_000, {
      replica: 0,
      eventNo: i + 1,
    });
    if (!ran.outcome.ok) continue;
    kept.push(call);
    applyTo(state, ran.effect);
  }
  return { state, kept };
}

/** Runs the two calls of a sample on `state`, as two replicas would, concurrently. */
function runBoth(app: App, s: Sample, state: State) {
  return { a: runAs(app, s.a, state, 0), b: runAs(app, s.b, state, 1) };
}

/** Runs the sample's first (0) or second (1) call on `state`. */
function runAs(app: App, call: Call, state: State, which: 0 | 1) {
  return runOn(app.lookup(call.op)!, call, state, AT[which].ts, AT[which].id);
}

/**
 * Samples of a state and a call of each of `a` and `b`, all admitted. Calls that meet on the same
 * data are what the checks are after, and independent draws seldom meet (a withdrawal from the
 * account a deposit paid into, by the user who opened it): so half the time the second call has
 * the first one's caller (two sessions of one user), an op meets its very same call (a double
 * booking, a double spend), and each step of the history takes the first call's caller and the
 * values of the fields it names alike (`account`, `event`).
 */
export function samples(ctx: Context, a: string, b: string): fc.Arbitrary<Sample | null> {
  const coins = fc.array(fc.boolean(), { minLength: HISTORY + 2, maxLength: HISTORY + 2 });
  return fc
    .record({ history: ctx.history, a: ctx.calls.get(a)!, b: ctx.calls.get(b)!, coins })
    .map(({ history, a: ca, b: cb, coins }) => {
      const first = admitted(ctx.app, ca);
      if (first === null) return null;
      const like = (raw: RawCall, coin: boolean): Call | null =>
        coin
          ? (admitted(ctx.app, {
              op: raw.op,
              args: aligned(raw.args, first.args),
              user: first.user,
            }) ?? admitted(ctx.app, raw))
          : admitted(ctx.app, raw);
      const other = a === b && coins[0]! ? ca : cb;
      const second = like(other, coins[1]!);
      if (second === null) return null;
      const steps = history.flatMap((raw, i) => like(raw, coins[i + 2]!) ?? []);
      return { history: steps, a: first, b: second };
    });
}

/**
 * `args` with the values of the fields `like` names alike: each string, number or boolean field
 * of `args`, at any depth (`profiles[].user`), takes the value of a field of the same name and
 * type in `like`, found at any depth too.
 */
function aligned(args: unknown, like: JsonValue): unknown {
  const values = new Map<string, JsonValue>();
  const collect = (v: JsonValue): void => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (typeof v === 'object' && v !== null)
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'object' && x !== null) collect(x);
        else if (!values.has(k)) values.set(k, x);
      }
  };
  collect(like);
  const align = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(align);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const same = values.get(k);
      out[k] = same !== undefined && typeof same === typeof x ? same : align(x);
    }
    return out;
  };
  return align(args);
}

/** Whether `a`'s and `b`'s shadow ops commute; whether `a`'s answer depends on their order. */
function checkCommutes(ctx: Context, a: string, b: string): Outcomes {
  const out: Outcomes = { finding: null, succeeded: 0, answerDiffers: [false, false] };
  const property = fc.property(samples(ctx, a, b), (sample) => {
    fc.pre(sample !== null);
    const { state, kept } = build(ctx.app, sample.history);
    const ran = runBoth(ctx.app, sample, state);
    if (ran.a.outcome.ok) out.succeeded++;
    const ab = apply(apply(state, ran.a.effect), ran.b.effect);
    const ba = apply(apply(state, ran.b.effect), ran.a.effect);
    // Each run again after the other's effect: does its answer change?
    const changed = (which: 0 | 1, call: Call, on: State, first: Outcome): boolean =>
      canonicalJson(runAs(ctx.app, call, on, which).outcome as unknown as JsonValue) !==
      canonicalJson(first as unknown as JsonValue);
    if (changed(0, sample.a, apply(state, ran.b.effect), ran.a.outcome))
      out.answerDiffers[0] = true;
    if (changed(1, sample.b, apply(state, ran.a.effect), ran.b.outcome))
      out.answerDiffers[1] = true;
    const keys = differingKeys(ab, ba);
    if (keys.length === 0) return true;
    out.finding = {
      kind: 'does-not-commute',
      history: kept,
      state: [...state],
      call: { ...sample.a, answer: ran.a.outcome },
      other: { ...sample.b, answer: ran.b.outcome },
      invariants: [],
      keys: keys.map((key) => ({ key, values: [ab.get(key), ba.get(key)] })),
    };
    return false;
  });
  fc.check(property, propertyOptions(ctx, `commutes ${a} ${b}`));
  return out;
}

/**
 * Whether `a`'s shadow op, decided on a valid state, keeps the invariants when it lands after a
 * concurrent `b`'s (Definition 8), and when it lands where it was decided (Definition 9).
 */
function checkInvariants(ctx: Context, a: string, b: string): Outcomes {
  const out: Outcomes = { finding: null, succeeded: 0, answerDiffers: [false, false] };
  const { invariants } = ctx.app;
  const property = fc.property(samples(ctx, a, b), (sample) => {
    fc.pre(sample !== null);
    const { state, kept } = build(ctx.app, sample.history);
    fc.pre(brokenInvariants(invariants, state).length === 0);
    const ran = runBoth(ctx.app, sample, state);
    if (ran.a.outcome.ok) out.succeeded++;
    const call = { ...sample.a, answer: ran.a.outcome };
    const inOrder = apply(state, ran.a.effect);
    const brokenInOrder = brokenInvariants(invariants, inOrder);
    const found = (
      kind: Counterexample['kind'],
      broken: string[],
      final: State,
      other: Counterexample['other'],
    ): false => {
      out.finding = {
        kind,
        history: kept,
        state: [...state],
        call,
        other,
        invariants: broken,
        keys: differingKeys(state, final).map((key) => ({ key, values: [final.get(key)] })),
      };
      return false;
    };
    if (brokenInOrder.length > 0) return found('breaks-in-order', brokenInOrder, inOrder, null);
    const moved = apply(state, ran.b.effect);
    // b alone must leave a valid state: if it does not, b is the op to blame, not a.
    fc.pre(brokenInvariants(invariants, moved).length === 0);
    const final = apply(moved, ran.a.effect);
    const broken = brokenInvariants(invariants, final);
    if (broken.length === 0) return true;
    return found('breaks-invariant', broken, final, { ...sample.b, answer: ran.b.outcome });
  });
  fc.check(property, propertyOptions(ctx, `invariants ${a} ${b}`));
  return out;
}

function propertyOptions(ctx: Context, what: string): fc.Parameters<[Sample | null]> {
  return { seed: checkSeed(ctx.options.seed, what), numRuns: ctx.options.runs };
}
