import type { LoadOptions, LoadReport } from './load.js';
import { formatSummary, summarize } from '../shared/stats.js';

export interface RunContext {
  readonly replicas: number;
  readonly delayMs: number;
  /** False when the example uses a running cluster (its delays are unknown). */
  readonly local: boolean;
  readonly load: LoadOptions;
}

/** Correctables §6.3.2, Figure 11: mean latency of fetchAdsByUserId before saturation. */
const PAPER = 'paper, §6.3.2: mean 100 ms strong-only → 60 ms speculative, −40 %';

const pct = (ours: number, base: number): string => {
  const d = ((ours - base) / base) * 100;
  return `${d < 0 ? '−' : '+'}${Math.abs(d).toFixed(1)} %`;
};

/** The summary `npm run example:ads` prints. */
export function formatReport(r: LoadReport, ctx: RunContext): string {
  const spec = summarize(r.speculative.latencies);
  const strong = summarize(r.strongOnly.latencies);
  const first = summarize(r.speculative.firstAds);
  const { misspeculated, runs, aborts } = r.speculative;
  const where = ctx.local
    ? `${ctx.replicas} local replicas, ${ctx.delayMs} ms one-way between replicas`
    : `a running cluster of ${ctx.replicas} replicas`;
  const o = ctx.load;
  const lines = [
    `ad serving: ${where}; ads read ${o.adReads}ly`,
    `load: ${o.fetches} fetches measured after ${o.warmup} warm-up, ${o.concurrency} readers alternating ` +
      `speculative and strong-only; ${o.writesPerSec} weak profile writes/s in the background ` +
      `(${r.writes.sent} sent, ${r.writes.failed} failed); ${(r.durationMs / 1000).toFixed(1)} s`,
    `  speculative   ${formatSummary(spec)}`,
    `  strong-only   ${formatSummary(strong)}`,
    `  speculative vs strong-only: mean ${pct(spec.mean, strong.mean)}, p99 ${pct(spec.p99, strong.p99)}  (${PAPER})`,
    `  first ads on screen (speculative): mean ${first.mean.toFixed(1)} ms, p99 ${first.p99.toFixed(1)} ms`,
    `  mis-speculation: ${misspeculated} of ${spec.n} speculative fetches ` +
      `(${((100 * misspeculated) / Math.max(1, spec.n)).toFixed(1)} %) got a final profile that differed ` +
      `from one they speculated on; ${runs} speculation runs, ${aborts} aborted`,
    r.inconsistent === 0
      ? '  consistency: every speculative result was made from the stable profile'
      : `  consistency: ${r.inconsistent} speculative results were NOT made from the stable profile (a bug)`,
  ];
  if (r.writes.firstError !== undefined) lines.push(`  first write error: ${r.writes.firstError}`);
  return lines.join('\n');
}
