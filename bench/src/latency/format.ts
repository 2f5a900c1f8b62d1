/**
 * bench:latency's formatting: how its figures are written (ms, ratios, counts, verdicts), its
 * progress lines, and its plain-text tables.
 */
import type { WakeCost } from '../wake-cost.js';

/** Milliseconds: three decimals below 10 ms (a loopback round trip is a fraction of one). */
export const ms = (x: number): string =>
  Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(3) : x.toFixed(1);
export const ratio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '-');
export const int = (x: number): string =>
  Number.isFinite(x) ? Math.round(x).toLocaleString('en') : '-';
export const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
/** A progress line: on stdout only, not in the record (the report goes through `out.print`). */
export const progress = (line: string): void => console.log(`· ${line}`);

/** Columns padded to their widest cell, each aligned left or right, the table indented by two. */
export function table(rows: string[][], align: ('l' | 'r')[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map(
      (r) =>
        '  ' +
        r
          .map((cell, c) =>
            align[c] === 'r' ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!),
          )
          .join('   ')
          .trimEnd(),
    )
    .join('\n');
}

/** A target's room above its floor, in µs ('none' when the floor is at or above the target). */
export const headroom = (ms: number): string => (ms > 0 ? `${int(ms * 1000)} µs` : 'none');

/** One line: the CPU a wake costs here, by how long the process slept (wake-cost.ts). */
export function wakeLine(wakes: readonly WakeCost[]): string {
  const each = wakes
    .map((w) => `${int(w.cpuMicrosPerWake)} µs after ${w.sleptMs} ms asleep`)
    .join(' · ');
  return `CPU to wake a sleeping process (an empty timer callback): ${each}`;
}
