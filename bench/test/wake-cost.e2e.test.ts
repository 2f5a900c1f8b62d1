import { describe, expect, it } from 'vitest';
import { measureWakeCost } from '../src/wake-cost.js';

/** The probe bench:latency prints: one result per sleep length, from a child that really slept. */
describe('measureWakeCost', () => {
  it('reports wakes, their period and their CPU for each sleep length, in order', async () => {
    const rows = await measureWakeCost([5, 20], 0.3);
    expect(rows.map((r) => r.sleptMs)).toEqual([5, 20]);
    for (const r of rows) {
      expect(r.wakes).toBeGreaterThan(0);
      // The process did sleep between wakes: a Node timer fires no earlier than its delay less the
      // millisecond its loop clock truncates.
      expect(r.periodMs).toBeGreaterThanOrEqual(r.sleptMs - 1);
      expect(Number.isFinite(r.cpuMicrosPerWake)).toBe(true);
      expect(r.cpuMicrosPerWake).toBeGreaterThan(0);
    }
  });

  it('refuses sleep lengths that are not positive numbers, and a non-positive duration', async () => {
    await expect(measureWakeCost([], 1)).rejects.toThrow(/positive numbers of ms/);
    await expect(measureWakeCost([0], 1)).rejects.toThrow(/positive numbers of ms/);
    await expect(measureWakeCost([Number.NaN], 1)).rejects.toThrow(/positive numbers of ms/);
    await expect(measureWakeCost([1], 0)).rejects.toThrow(/seconds must be positive/);
  });
});
