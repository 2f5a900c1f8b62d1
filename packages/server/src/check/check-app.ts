import fc from 'fast-check';
import {
  canonicalJson,
  checkArgs,
  type AnyOpDefinition,
  type App,
  type JsonValue,
} from '@creek/app';
import { UnsupportedSchema } from './arbitraries.js';
import { argumentsOf } from './op-arguments.js';
import { AppInstance } from './app-instance.js';
import type { Invocation, RunResult } from './check-messages.js';

/**
 * `creek check`'s engine: runs every op of an app twice, in each of two fresh instances of the
 * app, on the same generated state and arguments, and reports the ops whose results or writes
 * differ, or that reached for a source the execution guard refuses.
 *
 * Two instances are two worker threads (app-instance.ts), like two replicas: only the first runs
 * the ops that build each state, so module-level state that depends on history (a counter, a cache,
 * a Map filled in arrival order) shows as a difference between them; running each op twice in each
 * shows state that changes from run to run. The second runs start at least a millisecond after the
 * first, so a clock read that slipped past the guard (captured before the op ran) differs too.
 *
 * fast-check generates the samples and, once one shows a difference, shrinks it to a smaller one
 * that still does: the arguments and state reported are as small as it could make them.
 */

export interface CheckOptions {
  /** The app's module, loaded by each instance as a replica loads it. */
  readonly appPath: string;
  /** The same app, loaded here: its ops and their schemas. */
  readonly app: App;
  /** Samples per op. */
  readonly runs: number;
  readonly seed: number;
  /** Called as each op's check finishes: progress. */
  readonly onOp?: (report: OpReport) => void;
}

/** One op's runs on one sample: the results of its four runs, A1 A2 (instance A) B1 B2. */
export interface Finding {
  /** The arguments, as a client sends them. */
  readonly args: JsonValue;
  /** The ops run (in instance A) to build the state the op ran on, in order. */
  readonly before: readonly { op: string; args: JsonValue }[];
  /** How many keys that state held. */
  readonly stateKeys: number;
  readonly results: readonly { label: string; result: RunResult }[];
  /** The execution guard's refusal, when a run reached for a refused source. */
  readonly refused: string | null;
}

export type OpReport =
  | {
      readonly op: string;
      readonly verdict: 'deterministic';
      readonly runs: number;
      /** Of those, the runs where the op succeeded (the rest failed the same way every time). */
      readonly succeeded: number;
      /** Wall time of its check, ms. */
      readonly ms: number;
    }
  | {
      readonly op: string;
      readonly verdict: 'nondeterministic';
      readonly runs: number;
      readonly finding: Finding;
    }
  | { readonly op: string; readonly verdict: 'unchecked'; readonly reason: string };

/** Sample the op's runs use: the state's history, the arguments, the timestamp and the id. */
interface Sample {
  readonly before: { op: string; args: unknown }[];
  readonly args: unknown;
  readonly ts: number;
  readonly id: { replica: number; eventNo: number };
}

/** Ops run to build a state, at most. */
const HISTORY = 10;

/** As the wire carries it: JSON, so undefined fields vanish and there is no -0. */
function wire(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

/** The arguments as the replica runs the op with them: parsed by its schema, or null if refused. */
function parsed(name: string, def: AnyOpDefinition, input: unknown): JsonValue | null {
  const checked = checkArgs(name, def, wire(input));
  return checked.ok ? wire(checked.args) : null;
}

/** Checks every op of the app (not Creek's built-ins); one report per op, in name order. */
export async function checkApp(options: CheckOptions): Promise<OpReport[]> {
  const { app } = options;
  const names = Object.keys(app.definitions).sort();
  const generators = new Map<string, fc.Arbitrary<unknown>>();
  const unsupported = new Map<string, string>();
  for (const name of names) {
    try {
      generators.set(name, argumentsOf(app, name));
    } catch (err) {
      if (!(err instanceof UnsupportedSchema)) throw err;
      unsupported.set(name, err.message);
    }
  }
  // States come from histories of the app's own ops, mostly ops that write; read-only ones too,
  // since a read may change what the module holds (a cache, a list of what it saw).
  const step = (op: string) => generators.get(op)!.map((args) => ({ op, args }));
  const historyOps = names
    .filter((n) => generators.has(n))
    .map((op) => ({ weight: app.lookup(op)!.readOnly === true ? 1 : 4, arbitrary: step(op) }));
  const history: fc.Arbitrary<{ op: string; args: unknown }[]> =
    historyOps.length === 0
      ? fc.constant([])
      : fc.array(fc.oneof(...historyOps), { maxLength: HISTORY });

  const [a, b] = await Promise.all([
    AppInstance.start('A', options.appPath),
    AppInstance.start('B', options.appPath),
  ]);
  try {
    const reports: OpReport[] = [];
    for (const name of names) {
      const generator = generators.get(name);
      const report: OpReport =
        generator === undefined
          ? { op: name, verdict: 'unchecked', reason: unsupported.get(name)! }
          : await checkOp(name, app.lookup(name)!, generator, history, [a, b], options);
      reports.push(report);
      options.onOp?.(report);
    }
    return reports;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

async function checkOp(
  name: string,
  def: AnyOpDefinition,
  generator: fc.Arbitrary<unknown>,
  history: fc.Arbitrary<{ op: string; args: unknown }[]>,
  [a, b]: readonly [AppInstance, AppInstance],
  options: CheckOptions,
): Promise<OpReport> {
  const samples: fc.Arbitrary<Sample> = fc.record({
    before: history,
    args: generator,
    // Timestamps in µs from 2020 to 2030, and ids as replicas number them.
    ts: fc.integer({ min: 1_577_836_800, max: 1_893_456_000 }).map((s) => s * 1_000_000),
    id: fc.record({
      replica: fc.integer({ min: 0, max: 6 }),
      eventNo: fc.integer({ min: 1, max: 1_000_000 }),
    }),
  });
  /** The last sample that showed a difference: after shrinking, the smallest found. */
  let last: Finding | null = null;
  let valid = 0;
  let succeeded = 0;

  const property = fc.asyncProperty(samples, async (sample) => {
    const args = parsed(name, def, sample.args);
    fc.pre(args !== null); // arguments the schema refuses never reach a replica
    valid++;
    const before = sample.before.flatMap(({ op, args }, i) => {
      const checked = parsed(op, options.app.lookup(op)!, args);
      return checked === null
        ? []
        : [
            {
              op,
              args: checked,
              ts: sample.ts - 1_000 * (HISTORY - i),
              id: { replica: 0, eventNo: i + 1 },
            },
          ];
    });
    const state = await a.build(before);
    await b.adopt(state);
    const invocation: Invocation = { op: name, args: args!, ts: sample.ts, id: sample.id };
    const results = await fourRuns(invocation, a, b);
    const refused = results.find((r) => r.result.refused !== null)?.result.refused ?? null;
    const distinct = new Set(results.map((r) => canonicalJson(comparable(r.result))));
    if (distinct.size === 1 && refused === null) {
      if (results[0]!.result.outcome.ok) succeeded++;
      return true;
    }
    last = {
      args: wire(sample.args),
      before: before.map(({ op, args }) => ({ op, args })),
      stateKeys: state.length,
      results,
      refused,
    };
    return false;
  });

  const started = performance.now();
  const details = await fc.check(property, {
    seed: opSeed(options.seed, name),
    numRuns: options.runs,
  });
  const ms = Math.round(performance.now() - started);
  if (!details.failed) {
    if (valid === 0)
      return {
        op: name,
        verdict: 'unchecked',
        reason: 'no generated arguments passed its schema (a refinement creek check cannot model?)',
      };
    return { op: name, verdict: 'deterministic', runs: details.numRuns, succeeded, ms };
  }
  // (A cast: TypeScript does not see that the property, a closure, assigned it.)
  const finding = last as Finding | null;
  if (finding !== null && details.counterexample !== null)
    return { op: name, verdict: 'nondeterministic', runs: details.numRuns, finding };
  // Failed without a counterexample: too few arguments passed the schema, or an instance died.
  const why = details.errorInstance instanceof Error ? details.errorInstance.message : '';
  return {
    op: name,
    verdict: 'unchecked',
    reason:
      valid < details.numSkips
        ? `too few generated arguments passed its schema (${valid} of ${valid + details.numSkips}): a refinement creek check cannot model?`
        : `the check could not run: ${why}`,
  };
}

/**
 * Each op's own stream of samples, from the check's seed: ops with alike arguments would otherwise
 * all run on the same histories and arguments.
 */
function opSeed(seed: number, op: string): number {
  let h = seed | 0;
  for (let i = 0; i < op.length; i++) h = Math.imul(h ^ op.charCodeAt(i), 0x9e3779b1);
  return h | 0;
}

/** What must be equal between runs: the outcome and the writes (not the refusal's wording). */
function comparable(r: RunResult): JsonValue {
  return {
    outcome: r.outcome as unknown as JsonValue,
    writes: r.writes.map(([k, v]) => [k, v === undefined ? { deleted: true } : v]),
  };
}

/**
 * Runs the op twice in each instance: the first runs side by side, the second ones once the
 * clock has moved on by at least a millisecond.
 */
async function fourRuns(
  invocation: Invocation,
  a: AppInstance,
  b: AppInstance,
): Promise<{ label: string; result: RunResult }[]> {
  const [a1, b1] = await Promise.all([a.run(invocation), b.run(invocation)]);
  await new Promise((resolve) => setTimeout(resolve, 2));
  const [a2, b2] = await Promise.all([a.run(invocation), b.run(invocation)]);
  return [
    { label: 'A1', result: a1 },
    { label: 'A2', result: a2 },
    { label: 'B1', result: b1 },
    { label: 'B2', result: b2 },
  ];
}
