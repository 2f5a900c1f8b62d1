import { resolve } from 'node:path';
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { App, JsonValue } from '@creek/app';
import { adviseApp } from '../check/advise-app.js';
import { checkApp, type Finding, type OpReport } from '../check/check-app.js';
import { checkGenerators } from '../check/op-arguments.js';
import type { RunResult } from '../check/check-messages.js';
import { loadApp } from '../exec/load-app.js';
import { describeAdvice } from './advice-output.js';
import { text, wholeNumber } from './config.js';
import { commandUsage, readSettings, type OptionSpecs } from './settings.js';

/**
 * `creek check --app app.js`: catches a nondeterministic op before it is deployed (check/).
 * Prints one line per op as it is checked, the arguments and runs that show each difference, and
 * then says which ops may be weak and which must be strong (advice-output.ts), and exits 1 when
 * an op is nondeterministic or could not be checked, or one declared weak must be strong.
 */

export const CHECK_OPTIONS = {
  app: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'module whose default export is defineApp({...}): the app to check',
  },
  runs: {
    type: 'string',
    value: 'N',
    help: 'generated states and arguments per op, 1-100000 (default 100)',
  },
  'pair-runs': {
    type: 'string',
    value: 'N',
    help: 'generated states and calls per pair of ops, for the weak-or-strong advice, 1-100000 (default 200)',
  },
  seed: {
    type: 'string',
    value: 'N',
    help: 'seed of the generated states and arguments, to repeat a check (default: a new one)',
  },
} as const satisfies OptionSpecs;

export const CHECK_USAGE = commandUsage(
  'check',
  `Runs every op of an app twice, in each of two fresh instances of it, on the same generated
states and arguments, and reports the ops whose results or writes differ, with the arguments
that show it, and the ops that reach for a clock, a random source or a timer (which replicas
refuse). Then says which ops may be called weak and which must be strong, by Gemini's rule
(RedBlue §5.3): an op may be weak when its effect commutes with every op's and, decided on a
state that lacks a concurrent op, breaks none of the app's invariants; for each op that must be
strong it prints a counterexample. Exit 0 when every op is deterministic and no op declared
weak (op({ level: 'weak' })) must be strong; 1 otherwise, or when an op could not be checked.`,
  CHECK_OPTIONS,
);

const CheckSettingsSchema = z.object({
  app: text('a module file'),
  runs: wholeNumber(1, 100_000, 'a whole number from 1 to 100000').default(100),
  'pair-runs': wholeNumber(1, 100_000, 'a whole number from 1 to 100000').default(200),
  seed: wholeNumber(0, 2 ** 31 - 1, 'a whole number from 0 to 2147483647').optional(),
});

/** Longest JSON shown for a value: enough to reproduce, short enough to read. */
const SHOWN = 240;

function show(value: JsonValue | undefined): string {
  const json = value === undefined ? 'undefined' : JSON.stringify(value);
  return json.length <= SHOWN ? json : `${json.slice(0, SHOWN)}… (${json.length} characters)`;
}

function showResult(r: RunResult): string {
  const outcome = r.outcome.ok ? `ok ${show(r.outcome.value)}` : `failed: ${r.outcome.error}`;
  const writes =
    r.writes.length === 0
      ? 'no writes'
      : `writes ${show(r.writes.map(([k, v]) => [k, v === undefined ? '(deleted)' : v]))}`;
  return `${outcome}; ${writes}`;
}

function describeFinding(f: Finding): string[] {
  const lines = [`      args:   ${show(f.args)}`];
  if (f.before.length === 0) lines.push('      state:  empty');
  else {
    lines.push(`      state:  ${f.stateKeys} keys, written by these ops in order:`);
    for (const { op, args } of f.before) lines.push(`                ${op} ${show(args)}`);
  }
  if (f.refused !== null) lines.push(`      refused by the execution guard: ${f.refused}`);
  // Runs with the same result are shown once.
  const groups = new Map<string, string[]>();
  for (const { label, result } of f.results) {
    const text = showResult(result);
    groups.set(text, [...(groups.get(text) ?? []), label]);
  }
  if (groups.size > 1 || f.refused === null)
    for (const [text, labels] of groups) lines.push(`      ${labels.join(' ').padEnd(12)}${text}`);
  return lines;
}

/** The lines of one op's report. */
export function describeReport(r: OpReport): string[] {
  if (r.verdict === 'deterministic')
    return [
      `  ok        ${r.op} (${r.runs} runs, ${r.succeeded} succeeded, ${(r.ms / 1000).toFixed(1)} s)`,
    ];
  if (r.verdict === 'unchecked') return [`  UNCHECKED ${r.op}: ${r.reason}`];
  const what =
    r.finding.refused !== null
      ? 'reaches for a source replicas refuse'
      : 'results differ between runs on the same state and arguments';
  return [`  FAILED    ${r.op}: ${what}`, ...describeFinding(r.finding)];
}

/** `creek check`. */
export async function check(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('check', argv, env, CHECK_OPTIONS, CheckSettingsSchema);
  if (read.help) {
    process.stdout.write(CHECK_USAGE);
    return;
  }
  const s = read.settings;
  const app = await loadApp(s.app);
  // An op's own generator is the app's code: a broken one is an error in the app, said first.
  checkGenerators(app);
  const seed = s.seed ?? randomInt(2 ** 31 - 1);
  const ops = Object.keys(app.definitions).length;
  console.log(
    `creek check: ${ops} ops of ${s.app}, ${s.runs} generated states and arguments each (seed ${seed});`,
  );
  console.log(
    '  each op runs twice (1, 2) in each of two instances of the app (A, B) on the same state and arguments',
  );
  const reports = await checkApp({
    appPath: resolve(s.app),
    app,
    runs: s.runs,
    seed,
    onOp: (r) => {
      for (const line of describeReport(r)) console.log(line);
    },
  });
  const failed = reports.filter((r) => r.verdict === 'nondeterministic');
  const unchecked = reports.filter((r) => r.verdict === 'unchecked');
  if (failed.length === 0 && unchecked.length === 0)
    console.log(`creek check: every op is deterministic in ${s.runs} runs each`);
  if (failed.length > 0)
    console.log(
      `creek check: ${failed.length} of ${ops} ops are nondeterministic (${failed.map((r) => r.op).join(', ')}): replicas running them would disagree`,
    );
  if (unchecked.length > 0)
    console.log(
      `creek check: ${unchecked.length} of ${ops} ops could not be checked (${unchecked.map((r) => r.op).join(', ')})`,
    );
  const advised = advise(app, s['pair-runs'], seed);
  if (failed.length > 0 || unchecked.length > 0 || !advised) {
    console.log(`creek check: repeat this check with --seed ${seed}`);
    process.exitCode = 1;
  }
}

/** The weak-or-strong advice, printed; false when an op declared weak must be strong. */
function advise(app: App, runs: number, seed: number): boolean {
  const invariants = Object.keys(app.invariants);
  console.log(
    `creek check: weak or strong, by Gemini's rule (RedBlue §5.3), ${runs} generated states and calls per pair of ops;`,
  );
  console.log(
    invariants.length === 0
      ? '  the app states no invariants (defineApp(ops, { invariants })): only commutativity is checked'
      : `  invariants: ${invariants.join('; ')}`,
  );
  const advice = adviseApp({
    app,
    runs,
    seed,
    onOp: (a) => {
      for (const line of describeAdvice(a)) console.log(line);
    },
  });
  const weak = advice.filter((a) => a.verdict === 'weak').map((a) => a.op);
  const strong = advice.filter((a) => a.verdict === 'strong').map((a) => a.op);
  console.log(
    `creek check: may be weak: ${weak.join(', ') || 'none'}; must be strong: ${strong.join(', ') || 'none'}`,
  );
  const mismatched = advice.filter((a) => a.mismatch).map((a) => a.op);
  if (mismatched.length === 0) return true;
  console.log(
    `creek check: ${mismatched.join(', ')} ${mismatched.length === 1 ? 'is' : 'are'} declared weak and must be strong: a weak call can break what is shown above`,
  );
  return false;
}
