import { FAULT_MODES, PLANTED_BUG_NAMES, type FaultMode, type PlantedBug } from '@creek/server/sim';
import type { RunRequest } from './replay.js';

/**
 * The run a URL names (`?seed=42&replicas=5&faults=all`, and `&bug=NAME` to plant one of the
 * simulator's planted bugs), or why it names none.
 */
export type UrlRun = { ok: true; request: RunRequest } | { ok: false; problem: string | null };

/**
 * Reads `seed`, `replicas` and `faults` from a query string. No seed: no run yet (problem null).
 * A bad value is a problem the page shows, never a run of something else.
 */
export function runFromQuery(search: string): UrlRun {
  const q = new URLSearchParams(search);
  const seedText = q.get('seed');
  if (seedText === null) return { ok: false, problem: null };
  const seed = Number(seedText);
  if (!/^\d+$/.test(seedText) || !Number.isSafeInteger(seed))
    return { ok: false, problem: `seed must be a whole number of 0 or more, not "${seedText}"` };
  const replicasText = q.get('replicas') ?? '3';
  const replicas = Number(replicasText);
  if (!/^\d+$/.test(replicasText) || replicas < 1 || replicas > 7)
    return { ok: false, problem: `replicas must be 1 to 7, not "${replicasText}"` };
  const faults = q.get('faults') ?? 'all';
  if (!(FAULT_MODES as readonly string[]).includes(faults))
    return {
      ok: false,
      problem: `faults must be one of ${FAULT_MODES.join(', ')}, not "${faults}"`,
    };
  const bug = q.get('bug');
  if (bug !== null && !(PLANTED_BUG_NAMES as readonly string[]).includes(bug))
    return {
      ok: false,
      problem: `bug must be one of ${PLANTED_BUG_NAMES.join(', ')}, not "${bug}"`,
    };
  return {
    ok: true,
    request: { seed, replicas, faults: faults as FaultMode, bug: bug as PlantedBug | null },
  };
}

/** The query string that names `r`: what `npm run sim` prints for a failing seed. */
export function queryOf(r: RunRequest): string {
  return `?seed=${r.seed}&replicas=${r.replicas}&faults=${r.faults}${r.bug === null ? '' : `&bug=${r.bug}`}`;
}

/**
 * The `npm run sim` flags that run `r` in a terminal: on uniform delays, as the page runs it
 * (the terminal's default).
 */
export function simFlagsOf(r: RunRequest): string {
  return `--seed ${r.seed} --replicas ${r.replicas} --faults ${r.faults}${r.bug === null ? '' : ` --plant ${r.bug}`}`;
}
