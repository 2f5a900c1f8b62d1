import type { JsonValue } from '@creek/app';
import type { Outcome } from '@creek/replica/core/types.js';
import type { Answered, Counterexample, OpAdvice } from '../check/advise-app.js';
import type { Call } from '../check/effects.js';

/**
 * How `creek check` prints the weak-or-strong advice (check/advise-app.ts): one line per op with
 * its verdict, its declared level and the reasons; under each op that must be strong, the
 * counterexample, on the smallest state fast-check found.
 */

/** Longest JSON shown for a value: enough to reproduce, short enough to read. */
const SHOWN = 200;

function show(value: JsonValue | undefined): string {
  const json = value === undefined ? '(none)' : JSON.stringify(value);
  return json.length <= SHOWN ? json : `${json.slice(0, SHOWN)}… (${json.length} characters)`;
}

function caller(call: Call): string {
  return call.user === null ? 'anonymously' : `as ${call.user.id}`;
}

function showCall(call: Call): string {
  return `${call.op} ${show(call.args)} ${caller(call)}`;
}

function showAnswer(outcome: Outcome): string {
  return outcome.ok ? `answered ${show(outcome.value)}` : `failed: ${outcome.error}`;
}

function showAnswered(a: Answered): string {
  return `${showCall(a)}: ${showAnswer(a.answer)}`;
}

function describeCounterexample(c: Counterexample): string[] {
  const lines: string[] = [];
  const state =
    c.state.length === 0 ? 'empty' : c.state.map(([k, v]) => `${k} = ${show(v)}`).join(', ');
  lines.push(`      state:  ${state}`);
  if (c.history.length > 0)
    lines.push(`              (made by: ${c.history.map(showCall).join('; ')})`);
  if (c.kind === 'breaks-in-order') {
    lines.push(`      run on it: ${showAnswered(c.call)}`);
  } else if (c.kind === 'breaks-invariant') {
    lines.push(`      one replica runs ${showAnswered(c.call)}`);
    lines.push(`      another runs     ${showAnswered(c.other!)}`);
    lines.push(`      the second lands first, then the first's effect lands on what it made:`);
  } else {
    lines.push(`      one replica runs ${showAnswered(c.call)}`);
    lines.push(`      another runs     ${showAnswered(c.other!)}`);
  }
  if (c.kind === 'does-not-commute')
    for (const { key, values } of c.keys)
      lines.push(
        `      ${key}: ${show(values[0])} if the first lands first, ${show(values[1])} if the second does`,
      );
  else {
    lines.push(
      `      ${c.keys.map(({ key, values }) => `${key} = ${show(values[0])}`).join(', ')}`,
    );
    lines.push(`      which breaks: ${c.invariants.map((n) => `'${n}'`).join(', ')}`);
  }
  return lines;
}

/** The lines of one op's advice. */
export function describeAdvice(a: OpAdvice): string[] {
  const declared = a.declared === undefined ? '' : ` (declared ${a.declared})`;
  const label = a.mismatch ? 'MISMATCH' : a.verdict === 'unchecked' ? 'UNCHECKED' : a.verdict;
  const lines = [`  ${label.padEnd(9)} ${a.op}${declared}: ${a.reasons[0]}`];
  for (const reason of a.reasons.slice(1)) lines.push(`            also: ${reason}`);
  if (a.mismatch) lines.push('            declared weak, and must be strong: call it strong');
  if (a.verdict === 'weak' && a.answerDependsOn.length > 0)
    lines.push(
      `            its answer depends on whether it runs before or after ${a.answerDependsOn.join(', ')}: a weak call's answer may be corrected`,
    );
  if (a.counterexample !== null) lines.push(...describeCounterexample(a.counterexample));
  return lines;
}
