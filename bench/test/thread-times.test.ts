import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  machineMinus,
  machineTimes,
  minus,
  processTimes,
  schedAt,
  threadTimesAvailable,
} from '../src/thread-times.js';

describe('thread-times: what bench:tail reads from /proc', () => {
  it('reads a schedstat line as µs on a CPU, µs waiting for one, and slices', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'schedstat-')), 'schedstat');
    writeFileSync(file, '68978915 1020540 23\n');
    expect(schedAt(file)).toEqual({ runUs: 68978.915, waitUs: 1020.54, slices: 23 });
  });

  it('reads a thread that is gone as nothing, so a delta does not fail mid-run', () => {
    expect(schedAt('/proc/0/task/0/schedstat-none')).toEqual({ runUs: 0, waitUs: 0, slices: 0 });
    expect(processTimes(2 ** 30).main.runUs).toBe(0);
  });

  it.runIf(threadTimesAvailable())(
    "counts this process's own main thread running while it spins",
    () => {
      const before = processTimes(process.pid);
      const end = performance.now() + 50;
      while (performance.now() < end);
      const ran = minus(processTimes(process.pid).main, before.main);
      // The kernel updates the running thread's total at its ticks: at least a few ms show.
      expect(ran.runUs).toBeGreaterThan(0);
      expect(ran.slices).toBeGreaterThanOrEqual(0);
    },
  );

  it.runIf(threadTimesAvailable())('reads the machine as busy, idle and stolen ticks', () => {
    const a = machineTimes();
    const end = performance.now() + 30;
    while (performance.now() < end);
    const d = machineMinus(machineTimes(), a);
    expect(d.total).toBeGreaterThan(0);
    expect(d.busy).toBeGreaterThan(0);
    expect(d.busy).toBeLessThanOrEqual(d.total);
    expect(d.steal).toBeGreaterThanOrEqual(0);
  });
});
