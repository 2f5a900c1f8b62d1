/**
 * bench:latency's closed-loop phase: for echo, weak and strong, a cell per count of ops
 * outstanding on one connection, each with the CPU time every process spent in it.
 */
import { CpuWindow } from '../cpu-time.js';
import { settle, type Cluster, type Server } from './cluster.js';
import type { Conn, Kind } from './connection.js';
import type { Flags } from './flags.js';
import { int, ms, progress } from './format.js';
import { closedLoop, summarize, type Summary } from './measurement.js';

/** Ops outstanding per cell: one, as in the sequential phase, then more, for the throughput. */
const OUTSTANDING = [1, 16, 64] as const;

/** One closed-loop cell. */
export interface Cell {
  readonly kind: Kind;
  readonly outstanding: number;
  readonly s: Summary;
  /** The CPU time of this process and the servers over the measured window. */
  readonly cpu: CpuWindow;
  /** Ops completed in the measured window. */
  readonly n: number;
}

/**
 * Every cell, echo first; between Creek cells the cluster is left to settle so that one cell's
 * tentative ops are not committed during the next.
 */
export async function measureCells(
  flags: Flags,
  conns: { readonly echo: Conn; readonly creek: Conn },
  echoServer: Server,
  cluster: Cluster,
): Promise<Cell[]> {
  const { echo, creek } = conns;
  const loop: Cell[] = [];
  for (const kind of ['echo', 'weak', 'strong'] as const) {
    for (const outstanding of OUTSTANDING) {
      const conn = kind === 'echo' ? echo : creek;
      const cpu = new CpuWindow(kind === 'echo' ? [echoServer.pid] : cluster.pids);
      const r = await closedLoop(
        conn,
        kind,
        outstanding,
        { warmupSeconds: flags.warmup, seconds: flags.seconds },
        cpu,
      );
      const s = summarize(r);
      loop.push({ kind, outstanding, s, cpu, n: r.completed });
      progress(
        `${kind} × ${outstanding} outstanding: ${int(s.opsPerSec)} ops/s, p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms` +
          (s.errors > 0 ? `, ${s.errors} errors: ${creek.firstError}` : ''),
      );
      if (kind !== 'echo') await settle(cluster);
    }
  }
  return loop;
}
