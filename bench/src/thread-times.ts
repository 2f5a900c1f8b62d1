/**
 * Where a process's time goes, from Linux's per-thread scheduler statistics
 * (`/proc/<pid>/task/<tid>/schedstat`: nanoseconds on a CPU, nanoseconds runnable but waiting for
 * one, and time slices). A Node process's main thread has the process id as its thread id; its
 * other threads are V8's helpers (parallel and concurrent garbage collection, background
 * compilation) and libuv's pool.
 *
 * "Waiting" is run-queue delay: the thread was ready (a frame had arrived, a timer had fired) and
 * no CPU was free. On a machine with fewer cores than busy processes it is what a tail is made of.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface SchedTimes {
  /** Time on a CPU, µs. */
  readonly runUs: number;
  /** Time ready to run but waiting for a CPU, µs. */
  readonly waitUs: number;
  /** Times the thread was put on a CPU. */
  readonly slices: number;
}

export interface ProcessTimes {
  readonly main: SchedTimes;
  /** Every other thread of the process, summed. */
  readonly others: SchedTimes;
  /**
   * Times the main thread gave up its CPU to wait (for a socket, a timer): each is a sleep and a
   * wake, which costs a virtual machine far more than the callback it runs.
   */
  readonly mainSleeps: number;
}

const ZERO: SchedTimes = { runUs: 0, waitUs: 0, slices: 0 };

/** Whether this machine exposes per-thread scheduler statistics (Linux with schedstats). */
export function threadTimesAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);
}

/** The path of a thread's schedstat file; read it with `schedAt`, cheap enough to read per op. */
export function mainThreadFile(pid: number): string {
  return `/proc/${pid}/task/${pid}/schedstat`;
}

/** One schedstat file; ZERO if the thread is gone. */
export function schedAt(file: string): SchedTimes {
  let text: string;
  try {
    text = readFileSync(file, 'latin1');
  } catch {
    return ZERO;
  }
  const [run, wait, slices] = text.trim().split(' ').map(Number);
  return { runUs: (run ?? 0) / 1000, waitUs: (wait ?? 0) / 1000, slices: slices ?? 0 };
}

/** The main thread's and the other threads' times of process `pid`. */
export function processTimes(pid: number): ProcessTimes {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { main: ZERO, others: ZERO, mainSleeps: 0 };
  }
  let others = ZERO;
  for (const tid of tids) {
    if (tid === String(pid)) continue;
    others = plus(others, schedAt(`/proc/${pid}/task/${tid}/schedstat`));
  }
  return { main: schedAt(mainThreadFile(pid)), others, mainSleeps: voluntarySwitches(pid) };
}

/** `voluntary_ctxt_switches` of the main thread of `pid`; 0 if it is gone. */
function voluntarySwitches(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'latin1');
    const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

export function plus(a: SchedTimes, b: SchedTimes): SchedTimes {
  return { runUs: a.runUs + b.runUs, waitUs: a.waitUs + b.waitUs, slices: a.slices + b.slices };
}

export function minus(a: SchedTimes, b: SchedTimes): SchedTimes {
  return { runUs: a.runUs - b.runUs, waitUs: a.waitUs - b.waitUs, slices: a.slices - b.slices };
}

export function processMinus(a: ProcessTimes, b: ProcessTimes): ProcessTimes {
  return {
    main: minus(a.main, b.main),
    others: minus(a.others, b.others),
    mainSleeps: a.mainSleeps - b.mainSleeps,
  };
}

/** The whole machine's time (/proc/stat's first line), in clock ticks. */
export interface MachineTimes {
  readonly total: number;
  /** Every state but idle, I/O wait and steal. */
  readonly busy: number;
  /** Time a virtual CPU was ready but the hypervisor ran something else. */
  readonly steal: number;
}

export function machineTimes(): MachineTimes {
  const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = v.map((x) => x || 0);
  const busy = user! + nice! + system! + irq! + softirq!;
  return { total: busy + idle! + iowait! + steal!, busy, steal: steal! };
}

export function machineMinus(a: MachineTimes, b: MachineTimes): MachineTimes {
  return { total: a.total - b.total, busy: a.busy - b.busy, steal: a.steal - b.steal };
}
