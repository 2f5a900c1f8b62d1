/**
 * TPC-C executions per second through one replica's core: the inline executor (one execution at a
 * time, on the main thread) against the worker-thread executor with 1…N workers, at each
 * contention level (1, 5 and 20 warehouses by default). Creek §4.4 ("concurrent execution").
 *
 *   npm run bench:tpcc-scaling [-- --warehouses 1,5,20 --workers 1,2 --txns 4000 --window 32
 *                                  --scale tiny|reduced --rounds 3 --weight today|paper|paper5]
 *
 * One Replica (no network, no disk; tpcc-core-run.ts): the population is loaded through
 * `tpcc.load` ops, then `--txns` transactions of the standard mix (Payment strong, ordered by an
 * in-process sequencer; the rest weak) are kept `--window` at a time in flight, each counted done
 * at its first answer. `--weight` gives every transaction extra deterministic work (the TPC-C
 * app's weight.ts): `today` none, `paper` about the Creek paper's 0.37 ms per transaction, `paper5`
 * five times that (§6.3); or a number of rounds.
 *
 * Per configuration: transactions per second, the execution ratio (executions per finalized op),
 * conflicts of executions started beside earlier ones, mirror reads found stale, and the main
 * thread's CPU time per job (Linux only). For the inline executor also the time spent executing
 * per job; for the worker modes the main thread's CPU per job divided by that inline execution
 * cost: what handing a job to a worker costs the main thread, against doing it there (issue
 * goal: at most 0.25). After each configuration the replica's state, every transaction executed
 * and validated, is checked against the TPC-C consistency conditions (§3.3.2, 1-10 and 12); a
 * violation fails the run (exit status 1). Rounds alternate the order of the modes; medians are
 * printed. Progress on stderr, the table on stdout and in a dated record (CREEK_BENCH_RESULTS=off:
 * none).
 */
import { availableParallelism } from 'node:os';
import { REDUCED, scaleOf, TINY } from '../../packages/examples/src/tpcc/scale.js';
import { flagPairs } from './cli-flags.js';
import { median } from './stats.js';
import { recordResults } from './results.js';
import { measureCore, type CoreMeasure } from './tpcc-core-run.js';
import { parseWeight, TODAY, type WeightFlag } from './tpcc-weight-flag.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('tpcc-scaling', 'markdown');

interface Flags {
  warehouses: number[];
  workers: number[];
  txns: number;
  window: number;
  scale: 'tiny' | 'reduced';
  rounds: number;
  /** The weight's name (or its rounds, as given) and its rounds of work per transaction. */
  weight: WeightFlag;
}
const USAGE =
  'npm run bench:tpcc-scaling [-- --warehouses 1,5,20 --workers 1,2 --txns 4000 --window 32 --scale tiny|reduced --rounds 3 --weight today|paper|paper5|ROUNDS]';

const progress = (line: string): void => void process.stderr.write(`bench:tpcc-scaling: ${line}\n`);

function parse(argv: readonly string[]): Flags {
  const f: Flags = {
    warehouses: [1, 5, 20],
    workers: [1, Math.min(2, availableParallelism())],
    txns: 4000,
    window: 32,
    scale: 'tiny',
    rounds: 3,
    weight: TODAY,
  };
  const fail = (message: string): never => {
    console.error(`bench:tpcc-scaling: ${message}`);
    process.exit(2);
  };
  const names = ['warehouses', 'workers', 'txns', 'window', 'scale', 'rounds', 'weight'];
  for (const [name, value] of flagPairs(argv, USAGE, (n) => names.includes(n), fail)) {
    if (name === 'scale') {
      if (value !== 'tiny' && value !== 'reduced') fail('--scale must be tiny or reduced');
      f.scale = value as Flags['scale'];
      continue;
    }
    if (name === 'weight') {
      const w = parseWeight(value);
      f.weight = typeof w === 'string' ? fail(w) : w;
      continue;
    }
    const list = value.split(',').map(Number);
    const max = name === 'txns' ? 10_000_000 : name === 'warehouses' ? 100 : 64;
    if (list.some((n) => !Number.isInteger(n) || n < 1 || n > max))
      fail(`--${name} must be whole numbers from 1 to ${max}, comma-separated where a list`);
    if (name === 'warehouses') f.warehouses = list;
    else if (name === 'workers') f.workers = [...new Set(list)].sort((a, b) => a - b);
    else f[name as 'txns' | 'window' | 'rounds'] = list[0]!;
  }
  return f;
}

const us = (x: number | null): string => (x === null ? '-' : x.toFixed(0));
const medianOf = (xs: (number | null)[]): number | null =>
  xs.some((x) => x === null) ? null : median(xs as number[]);

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const modes = [0, ...flags.workers];
  const label = (w: number): string => (w === 0 ? 'inline' : `${w} worker${w > 1 ? 's' : ''}`);
  const rows: string[] = [];
  const violated: string[] = [];
  for (const w of flags.warehouses) {
    const scale = scaleOf(flags.scale === 'tiny' ? TINY : REDUCED, w);
    const results = new Map<number, CoreMeasure[]>(modes.map((m) => [m, []]));
    for (let round = 1; round <= flags.rounds; round++) {
      const order = round % 2 === 1 ? modes : [...modes].reverse();
      for (const mode of order) {
        const r = await measureCore({
          scale,
          workers: mode,
          txns: flags.txns,
          window: flags.window,
          work: flags.weight.work,
        });
        results.get(mode)!.push(r);
        if (r.violations.count > 0)
          violated.push(
            `${w} warehouse(s), ${label(mode)}, round ${round}: ${r.violations.count} violations, e.g. ${r.violations.first}`,
          );
        progress(
          `${w} warehouse(s), round ${round}/${flags.rounds}, ${label(mode)}: ${r.txPerSec.toFixed(0)} tx/s, execution ratio ${r.executionRatio.toFixed(2)}, ${r.conflicts} conflicts, ${r.staleReads} stale mirror reads, main thread ${us(r.mainCpuPerJobUs)} µs CPU per job, other threads ${us(r.otherCpuPerJobUs)}${r.executePerJobUs === null ? '' : ` (executing ${us(r.executePerJobUs)} µs)`}`,
        );
      }
    }
    const inline = median(results.get(0)!.map((r) => r.txPerSec));
    const inlineExec = medianOf(results.get(0)!.map((r) => r.executePerJobUs));
    for (const mode of modes) {
      const rs = results.get(mode)!;
      const tx = median(rs.map((r) => r.txPerSec));
      const main = medianOf(rs.map((r) => r.mainCpuPerJobUs));
      const others = medianOf(rs.map((r) => r.otherCpuPerJobUs));
      const share =
        mode === 0 || main === null || inlineExec === null ? '-' : (main / inlineExec).toFixed(2);
      rows.push(
        `| ${w} | ${label(mode)} | ${tx.toFixed(0)} | ${(tx / inline).toFixed(2)}× | ${median(rs.map((r) => r.executionRatio)).toFixed(2)} | ${median(rs.map((r) => r.conflicts))} | ${median(rs.map((r) => r.staleReads))} | ${us(main)} | ${us(others)} | ${mode === 0 ? us(inlineExec) : '-'} | ${share} |`,
      );
    }
  }
  out.print(
    `TPC-C through one replica's core (${flags.scale} scale, weight ${flags.weight.name} (${flags.weight.work} rounds per transaction), ${flags.txns} transactions, ${flags.window} in flight, medians of ${flags.rounds} rounds, ${availableParallelism()} cores)`,
  );
  out.print(
    '| warehouses | executor | tx/s | vs inline | execution ratio | conflicts | stale mirror reads | main-thread CPU µs/job | other threads CPU µs/job (workers, V8 helpers) | inline execution µs/job | main CPU per job ÷ inline execution |',
  );
  out.print('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) out.print(row);
  out.print('');
  out.print(
    violated.length === 0
      ? 'TPC-C consistency (§3.3.2, conditions 1-10 and 12) after every configuration: all hold.'
      : `TPC-C consistency FAILED:\n${violated.map((v) => `- ${v}`).join('\n')}`,
  );
  out.save();
  if (violated.length > 0) process.exit(1);
}

await main();
