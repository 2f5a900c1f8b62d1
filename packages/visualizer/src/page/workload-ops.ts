import type { JsonValue } from '@creek/app';

/**
 * What the workload invokes: the built-in counter (weak `kv.put`, strong `kv.increment` on the
 * chosen keys) or one of the app's ops, with arguments made from a JSON template.
 */
export type WorkloadOps =
  | { readonly kind: 'builtin' }
  | { readonly kind: 'app'; readonly op: string; readonly template: JsonValue };

/** Ops every Creek app has (`kv.*`, `queue.*`) or the cluster reserves (`creek.*`). */
const BUILT_IN = /^(kv|queue|creek)\./;

/** The app's own ops among those a replica offers, in name order. */
export function appOps(offered: readonly string[]): string[] {
  return offered.filter((o) => !BUILT_IN.test(o)).sort();
}

/**
 * Reads the arguments template the panel was given: JSON, in which `"$key"` inside a string
 * becomes one of the chosen keys (`k0` … `k<N-1>`) and the string `"$n"` the op's number.
 */
export function parseTemplate(
  text: string,
): { ok: true; template: JsonValue } | { ok: false; problem: string } {
  try {
    const template = JSON.parse(text === '' ? '{}' : text) as JsonValue;
    return { ok: true, template };
  } catch (e) {
    return { ok: false, problem: `the arguments are not JSON: ${(e as Error).message}` };
  }
}

/** The arguments of one op: the template with `$key` and `$n` filled in. */
export function argsFor(template: JsonValue, key: string, n: number): JsonValue {
  if (typeof template === 'string') return template === '$n' ? n : template.replaceAll('$key', key);
  if (Array.isArray(template)) return template.map((t) => argsFor(t, key, n));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, argsFor(v, key, n)]));
  return template;
}
