/**
 * `npm run robustness -- [--seed S] [--duration-s N] [--runs K] [--replicas 3|5]
 * [--nemesis kill,freeze,partition,wipe,replace|all] [--json]`: runs of real replica processes
 * under a seeded nemesis, each checked for linearizability, lost or duplicated acknowledged ops,
 * and convergence (docs/robustness.md). Progress on stderr, verdicts on stdout; exit 1 when a run
 * found a violation, 2 for a bad flag.
 */
import { randomInt } from 'node:crypto';
import { FlagError, parseFlags, USAGE, type Flags } from './flags.js';
import { runOnce, type RunResult } from './run.js';

const log = (line: string): void => void process.stderr.write(`robustness: ${line}\n`);

function flags(): Flags {
  try {
    const f = parseFlags(process.argv.slice(2), () => randomInt(0, 2 ** 31 - 1));
    if (f === 'help') {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    return f;
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`robustness: ${err.message}\n`);
    process.exit(2);
  }
}

function verdictLine(r: RunResult): string {
  const c = r.counts;
  const head = `seed ${r.seed}: ${r.ok ? 'ok' : 'VIOLATIONS'} in ${r.seconds} s — ${c.ops} ops (${c.strong} strong, ${c.weak} weak; ${c.acknowledged} acknowledged, ${c.failed} failed, ${c.indeterminate} indeterminate; of those that write, ${c.resolvedTookEffect} took effect, ${c.resolvedNotTaken} did not, ${c.unresolved} unsettled); ${c.linearizable} of ${c.objects} objects linearizable; acknowledged lost: ${c.acknowledgedLost}; weak ops lost with a wiped or replaced replica: ${c.lostWithReplica}; writes never known committed by their clients: ${r.unconfirmed}; faults: ${r.faults.length}`;
  if (r.ok) return r.savedTo === null ? head : `${head}\n  record: ${r.savedTo}`;
  return [head, ...r.violations.map((v) => `  - ${v}`), `  record: ${r.savedTo}`].join('\n');
}

async function main(): Promise<void> {
  const f = flags();
  log(
    `${f.runs} run(s) of ${f.durationS} s, ${f.replicas} replicas, nemesis ${f.nemesis.join(',')}, seeds ${f.seed}..${f.seed + f.runs - 1}`,
  );
  const results: RunResult[] = [];
  for (let k = 0; k < f.runs; k++) {
    const seed = f.seed + k;
    log(`run ${k + 1}/${f.runs}, seed ${seed}`);
    const r = await runOnce({
      seed,
      durationS: f.durationS,
      replicas: f.replicas,
      nemesis: f.nemesis,
      keep: f.keep,
      log,
    });
    results.push(r);
    if (!f.json) console.log(verdictLine(r));
    else log(verdictLine(r));
  }
  const failed = results.filter((r) => !r.ok);
  const summary = `${results.length - failed.length} of ${results.length} runs clean${failed.length === 0 ? '' : `; failed seeds: ${failed.map((r) => r.seed).join(', ')}`}`;
  if (f.json) console.log(JSON.stringify({ ok: failed.length === 0, summary, runs: results }));
  else console.log(summary);
  process.exit(failed.length === 0 ? 0 : 1);
}

await main();
