/**
 * CPU time of processes, for benchmarks that must say whether a latency is spent waiting or
 * computing: when the processes of a run use as much CPU per op as the machine has cores times the
 * op's wall time, the op is bound by CPU, and only less work per op makes it faster.
 *
 * Other processes are read from Linux's /proc/<pid>/stat (user + system time, in clock ticks of
 * 1/CLK_TCK s, usually 10 ms: sample over seconds, not milliseconds); this process from
 * process.cpuUsage (µs). Where /proc is absent (macOS, Windows) `available` is false and readings
 * are null.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export const available = existsSync('/proc/self/stat');

/** Clock ticks per second of /proc times (sysconf CLK_TCK); 100 where getconf is missing. */
const ticksPerSecond = ((): number => {
  if (!available) return 100;
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time of process `pid` so far, in µs; null if it cannot be read. */
export function processCpuMicros(pid: number | undefined): number | null {
  if (!available || pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')': state is
    // field 3, utime and stime are fields 14 and 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1e6) / ticksPerSecond : null;
  } catch {
    return null;
  }
}

/** User + system CPU time of this process so far, in µs. */
export function selfCpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** CPU time of this process and of `pids` between `start()` and `stop()`, in µs each. */
export class CpuWindow {
  private self0 = 0;
  private others0: (number | null)[] = [];
  selfMicros = 0;
  /** Per pid, in the order given; null where it could not be read. */
  othersMicros: (number | null)[] = [];

  constructor(private readonly pids: readonly (number | undefined)[]) {}

  start(): void {
    this.self0 = selfCpuMicros();
    this.others0 = this.pids.map(processCpuMicros);
  }

  stop(): void {
    this.selfMicros = selfCpuMicros() - this.self0;
    this.othersMicros = this.pids.map((pid, i) => {
      const now = processCpuMicros(pid);
      const then = this.others0[i];
      return now === null || then === null || then === undefined ? null : now - then;
    });
  }
}
