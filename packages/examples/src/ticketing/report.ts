import { formatSummary, summarize } from '../shared/stats.js';
import type { Purchase } from './purchase.js';
import type { SaleResult } from './sale.js';

/**
 * The figures §6.3.2 reports, per run and over all runs: whether every ticket was sold exactly
 * once in the final state, how many sales the final view revoked, and purchase latency above the
 * threshold (sold on the preliminary view) against below it (sold on the final view).
 */
export interface Latencies {
  /** Above the threshold: until the preliminary view the sale was made on. */
  readonly above: number[];
  /** The same purchases until their final view: what they would have cost without speculation. */
  readonly aboveFinal: number[];
  /** Below the threshold: until the final view, for customers who got a ticket. */
  readonly below: number[];
}

export function latencies(purchases: readonly Purchase[]): Latencies {
  const early = purchases.filter((p) => p.soldOn === 'preliminary');
  return {
    above: early.map((p) => p.saleMs),
    aboveFinal: early.map((p) => p.finalMs),
    below: purchases.filter((p) => p.soldOn === 'final' && p.final !== null).map((p) => p.saleMs),
  };
}

export function revoked(r: SaleResult): number {
  return r.audit.outcomes.reissued + r.audit.outcomes.withdrawn;
}

export function formatRun(r: SaleResult, threshold: number): string {
  const a = r.audit;
  const o = a.outcomes;
  const early = o.confirmed + o.reissued + o.withdrawn;
  const lat = latencies(r.purchases);
  const state = a.ok
    ? `every ticket sold exactly once: ${a.recorded} of ${a.stocked} recorded, ${a.sold} held by` +
      ` customers' final views; 0 sold twice, 0 oversold, 0 lost, ${a.left} left`
    : `FAILED: ${a.problems.join('; ')}`;
  return [
    `  final state: ${state}`,
    `  sold on the preliminary view (> ${threshold} left): ${early} — ${o.confirmed} confirmed,` +
      ` ${revoked(r)} revoked by the final view (${o.reissued} got another ticket,` +
      ` ${o.withdrawn} got none: sold out)`,
    `  sold on the final view (≤ ${threshold} left): ${o.sold}; turned away (final view: sold out):` +
      ` ${o['sold-out']}`,
    `  latency above threshold (sale on preliminary view): ${formatSummary(summarize(lat.above))}`,
    `    the same purchases until their final view:       ${formatSummary(summarize(lat.aboveFinal))}`,
    `  latency below threshold (sale on final view):      ${formatSummary(summarize(lat.below))}`,
    `  ${r.purchases.length} purchases in ${(r.wallMs / 1000).toFixed(2)} s`,
  ].join('\n');
}

export function formatOverall(runs: readonly SaleResult[], threshold: number): string {
  const all = runs.flatMap((r) => r.purchases);
  const lat = latencies(all);
  const sum = (f: (r: SaleResult) => number): number => runs.reduce((n, r) => n + f(r), 0);
  const failed = runs.flatMap((r, i) => (r.audit.ok ? [] : [i + 1]));
  return [
    `overall, ${runs.length} runs:`,
    `  final state: ${runs.length - failed.length} of ${runs.length} runs sold every ticket exactly` +
      ` once (${sum((r) => r.audit.recorded)} of ${sum((r) => r.audit.stocked)} tickets recorded)` +
      (failed.length > 0 ? `; FAILED: run ${failed.join(', ')}` : ''),
    `  revoked by the final view per run: ${stats(runs.map(revoked))}`,
    `    got none (sold out; the kind the paper counts): ${stats(runs.map((r) => r.audit.outcomes.withdrawn))}`,
    `    got another ticket instead:                      ${stats(runs.map((r) => r.audit.outcomes.reissued))}`,
    `  latency above threshold (> ${threshold} left, preliminary view): ${formatSummary(summarize(lat.above))}`,
    `    the same purchases until their final view:            ${formatSummary(summarize(lat.aboveFinal))}`,
    `  latency below threshold (≤ ${threshold} left, final view):      ${formatSummary(summarize(lat.below))}`,
  ].join('\n');
}

/** Per-run counts, their mean and maximum. */
function stats(perRun: readonly number[]): string {
  const mean = perRun.reduce((a, b) => a + b, 0) / perRun.length;
  return `${perRun.join(', ')} (mean ${mean.toFixed(1)}, max ${Math.max(...perRun)})`;
}
