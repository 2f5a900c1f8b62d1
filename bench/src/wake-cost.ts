/**
 * What it costs this machine to wake a process that was asleep, for benchmarks that compare a
 * replicated op with a bare echo: the CPU time of an empty timer callback, by how long the process
 * slept before it.
 *
 * A child Node process of its own (so nothing else of the benchmark runs in it) chains
 * `setTimeout(tick, sleptMs)` for a while per sleep length and divides its user + system time
 * (process.cpuUsage) by the wakes. The callback does nothing, so what is measured is the wake
 * itself: the kernel's switch into the process, and whatever the process pays to become warm again
 * (caches, TLB, and on a virtual machine the hypervisor's share). On bare metal this is a few
 * microseconds and hardly depends on the sleep; on a small virtual machine it can cost more than a
 * whole echo round trip and grow with the sleep, and then every process an op wakes (each replica
 * on its path, each lazy peer) costs the op that much, however little it does once awake.
 */
import { spawn } from 'node:child_process';

export interface WakeCost {
  /** How long the process slept before each wake (the timer's delay), ms. */
  readonly sleptMs: number;
  /** Wakes measured. */
  readonly wakes: number;
  /** Mean time from one wake to the next, ms (the delay plus timer slack and the wake itself). */
  readonly periodMs: number;
  /** Mean user + system CPU time per wake, µs. */
  readonly cpuMicrosPerWake: number;
}

/**
 * Plain CommonJS, run with `node -e` (no loader): argv[1] is the JSON of { sleeps, seconds }. For
 * each sleep length it first sleeps that way for a fifth of the time (the process settles into
 * the pattern), then measures, and prints one JSON line per length.
 */
const PROBE = `
const { sleeps, seconds } = JSON.parse(process.argv[1]);
const { performance } = require('node:perf_hooks');
function run(sleptMs, ms) {
  return new Promise((resolve) => {
    const end = performance.now() + ms;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let wakes = 0;
    const tick = () => {
      wakes++;
      if (performance.now() < end) return void setTimeout(tick, sleptMs);
      const cpu = process.cpuUsage(cpu0);
      resolve({ wakes, elapsed: performance.now() - t0, cpu: cpu.user + cpu.system });
    };
    setTimeout(tick, sleptMs);
  });
}
(async () => {
  for (const sleptMs of sleeps) {
    await run(sleptMs, seconds * 200);
    const r = await run(sleptMs, seconds * 1000);
    console.log(JSON.stringify({ sleptMs, wakes: r.wakes, periodMs: r.elapsed / r.wakes, cpuMicrosPerWake: r.cpu / r.wakes }));
  }
})();
`;

/**
 * Measures each sleep length in `sleeps` (ms, each > 0) for `seconds` (plus a fifth of that to
 * settle), one after the other in one child process. Rejects if the child fails or says nothing
 * usable.
 */
export function measureWakeCost(sleeps: readonly number[], seconds: number): Promise<WakeCost[]> {
  if (sleeps.length === 0 || sleeps.some((s) => !(s > 0) || !Number.isFinite(s)))
    return Promise.reject(
      new Error(`sleeps must be positive numbers of ms, got [${sleeps.join(', ')}]`),
    );
  if (!(seconds > 0)) return Promise.reject(new Error(`seconds must be positive, got ${seconds}`));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', PROBE, JSON.stringify({ sleeps, seconds })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const rows = out
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as WakeCost);
      if (code !== 0 || rows.length !== sleeps.length)
        return reject(
          new Error(
            `the wake-cost probe exited with ${signal ?? `code ${code}`} after ${rows.length} of ${sleeps.length} results${err === '' ? '' : `: ${err.trim()}`}`,
          ),
        );
      resolve(rows);
    });
  });
}
