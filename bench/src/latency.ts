/**
 * Client-observed latency and throughput of a real local Creek cluster, next to a bare WebSocket
 * echo measured in the same run.
 *
 *   npm run bench:latency [-- --replicas 3 --ops N --seconds S --warmup W --keys K]
 *
 * Starts `--replicas` real `creek start` processes on 127.0.0.1 (as `creek dev` does: cluster
 * secret, client token, SQLite without fsync) and a bare `ws` echo server in its own process that
 * answers every message with the same bytes. A client in this process connects to a follower (not
 * the leader, found through GET /status) and invokes kv.increment on K keys:
 *
 *  - echo baseline: round trip of a message as large as an invoke frame (the invoke frame itself);
 *  - floors (floor-server.ts), sequential: a server that parses the frame, commits one SQLite row
 *    and answers (the least a weak op can cost on this stack), and a relay in front of it that
 *    commits on the way in and again on the way back (4 hops, 3 commits: the least a stable answer
 *    costs when a second replica's durable vote is needed); each op's ratio to its floor is shown;
 *  - sequential latency, one op outstanding, N ops after W s of warm-up, taken in 10 rounds that
 *    interleave echo, floors, weak and strong (the machine's speed drifts): a weak op is done at its
 *    first (tentative) view, a strong op at its stable view or confirm. "strong" asks for the stable
 *    view alone (`tentative: false`, as the SDK's invokeStrong does); "invoke" is a strong op that
 *    also gets its tentative view first (the SDK's invoke), whose latency is shown too;
 *  - closed loop with 1, 16 and 64 ops outstanding on one connection, for echo, weak and strong:
 *    each completion issues the next op; W s of warm-up are discarded, then S s are measured.
 *    Throughput counts completions inside the measured window, latency the ops completed in it.
 *    Between cells the cluster is left to settle (every weak op committed) so cells don't overlap.
 *    Each cell also reports the CPU time (cpu-time.ts, Linux /proc) this client and each server
 *    process spent per completed op, and how many cores were busy on average: whether an op's
 *    latency is waiting or computing.
 *
 * All processes — the replicas, the echo server and this client — share this machine's cores (with
 * whatever else runs on it), so every figure includes that contention. An echo keeps two processes
 * busy; a Creek op keeps the client and every replica busy (the origin answers and gossips, the
 * others execute; a strong op also goes through the leader), so on a machine with fewer cores than
 * processes the ops compete for cores in a way the echo does not. The targets are printed
 * next to the results; they are not asserted.
 *
 * Before anything starts, the run measures what waking a sleeping process costs this machine
 * (wake-cost.ts: the CPU of an empty timer callback after 1, 5 and 25 ms asleep). An echo wakes two
 * processes per round trip, each after a sleep of one round trip; a Creek op wakes more of them, and
 * its lazy peers after longer sleeps. On a machine where one such wake costs more than a whole echo
 * round trip, no ratio to the echo can be small; the header and the targets show it.
 *
 * CREEK_BENCH_REPLICA_NODE_ARGS adds Node flags to the replica processes, e.g.
 * '--cpu-prof --cpu-prof-dir=/tmp/prof' to see where a replica's time goes.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { available as cpuAvailable } from './cpu-time.js';
import { measureWakeCost, type WakeCost } from './wake-cost.js';
import { recordResults, type Results } from './results.js';
import { measureCells } from './latency/cells.js';
import {
  alive,
  children,
  installExitHandlers,
  isStopping,
  printTail,
  shutdown,
} from './latency/children.js';
import { Cluster, startEcho, startFloors, type Server } from './latency/cluster.js';
import { Conn } from './latency/connection.js';
import { parseArgs, type Flags } from './latency/flags.js';
import { progress, wakeLine } from './latency/format.js';
import { printClosedLoop, printCpu, printSequential, printTargets } from './latency/report.js';
import { measureSequential, type SequentialConns } from './latency/sequential.js';

const STARTUP_TIMEOUT_MS = 45_000;
/** Sleep lengths (ms) at which the cost of waking a process is measured, and for how long each. */
const WAKE_SLEEPS_MS = [1, 5, 25] as const;
const WAKE_SECONDS = 1;

async function main(): Promise<void> {
  const flags = parseArgs(process.argv.slice(2));
  /** The report: stdout, and the dated record in bench/results/ (progress lines stay out of it). */
  const out = recordResults('latency', 'text');
  const cpus = os.cpus();
  const cores = cpus.length;
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  printMachine(out, flags, cores, model);

  // The cluster's start-up time below counts from here: it includes the wake-cost probe.
  const t0 = performance.now();
  const wakes = await measureWakes(out);
  const up = await bringUp(flags, t0);
  const { cluster, echoServer, leader, follower, target } = up;

  const conns = await openConns(flags, up);
  const frameBytes = Buffer.byteLength(conns.creek.frame('weak', 0).text);
  out.print(
    `  invoke frame ${frameBytes} bytes (kv.increment on ${flags.keys} keys); echo messages are that frame`,
  );
  out.print(
    `  sequential: ${flags.ops} ops each; closed loop: ${flags.seconds} s per cell after ${flags.warmup} s warm-up\n`,
  );
  const sequential = await measureSequential(flags, conns, cluster, target);
  const loop = await measureCells(flags, conns, echoServer, cluster);

  conns.echo.close();
  conns.creek.close();

  printSequential(out, sequential, { target, follower });
  printClosedLoop(out, flags, loop);
  if (cpuAvailable) printCpu(out, loop, { leader, target, cores });
  printTargets(out, sequential.seq, loop);
  if (wakes !== null) out.print(`\n  ${wakeLine(wakes)}`);
  out.print(
    `\n  ${cores} cores (${model}), node ${process.version}, load average at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; total ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  out.save();
  await shutdown(0);
}

/** The header: this machine, its load, and what shares its cores with the measured processes. */
function printMachine(out: Results, flags: Flags, cores: number, model: string): void {
  out.print('Creek latency benchmark: a local cluster against a bare WebSocket echo');
  out.print(
    `  machine: ${cores} cores, ${model}; ${os.platform()} ${os.release()}; node ${process.version}`,
  );
  out.print(
    `  load average at start: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out.print(
    `  ${flags.replicas} replicas + echo server + this client share the ${cores} cores: figures include that contention`,
  );
}

/**
 * What waking a sleeping process costs this machine, measured before anything starts (a quiet
 * machine); null if the probe failed, which does not end the run.
 */
async function measureWakes(out: Results): Promise<WakeCost[] | null> {
  progress('measuring what it costs this machine to wake a sleeping process (quiet machine first)');
  const wakes = await measureWakeCost(WAKE_SLEEPS_MS, WAKE_SECONDS).catch((err: unknown) => {
    console.error(`bench:latency: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  if (wakes !== null) out.print(`  ${wakeLine(wakes)}`);
  return wakes;
}

/** What the benchmark runs against, once every replica names the same leader. */
interface Up {
  readonly cluster: Cluster;
  readonly echoServer: Server;
  readonly floorUrls: { durable: string; relay: string };
  readonly leader: number | null;
  /** A replica other than the leader; undefined with one replica. */
  readonly follower: number | undefined;
  /** The replica the client talks to: the follower if there is one. */
  readonly target: number;
}

/**
 * Starts the cluster, the echo server and the floor servers together, and waits for a leader;
 * ends the run, with every child's last output, if none is agreed in STARTUP_TIMEOUT_MS.
 */
async function bringUp(flags: Flags, t0: number): Promise<Up> {
  progress(`starting ${flags.replicas} replicas (creek start) and the echo server on 127.0.0.1`);
  const cluster = new Cluster(flags.replicas);
  const [echoServer, floorUrls] = await Promise.all([startEcho(), startFloors(), cluster.start()]);
  const leader = await cluster.awaitLeader(STARTUP_TIMEOUT_MS);
  if (leader === null) {
    const s = await cluster.statuses();
    console.error(
      `bench:latency: the cluster did not come up: no leader agreed by every replica within ${
        STARTUP_TIMEOUT_MS / 1000
      } s\n  statuses: ${JSON.stringify(s.map((x) => (x === null ? null : { id: x.id, leader: x.leader })))}`,
    );
    for (const c of children) printTail(c);
    await shutdown(1);
  }
  const follower = Array.from({ length: flags.replicas }, (_, i) => i).find((i) => i !== leader);
  const target = follower ?? leader!;
  progress(
    `cluster up in ${((performance.now() - t0) / 1000).toFixed(1)} s: leader ${leader}, client on ` +
      (follower === undefined
        ? `replica ${target} (the leader: there is no follower)`
        : `follower ${target}`),
  );
  return { cluster, echoServer, floorUrls, leader, follower, target };
}

/** One connection to each server; the Creek one to the target replica. */
async function openConns(flags: Flags, up: Up): Promise<SequentialConns> {
  const { cluster, echoServer, floorUrls, target } = up;
  const echo = await Conn.open(echoServer.url, { keys: flags.keys });
  // Floor servers answer like the echo (no hello), with a view-sized frame.
  const floor = await Conn.open(floorUrls.durable, { keys: flags.keys });
  const relay = await Conn.open(floorUrls.relay, { keys: flags.keys });
  const creek = await Conn.open(cluster.clientUrl(target), {
    token: cluster.token,
    keys: flags.keys,
  });
  return { echo, floor, relay, creek };
}

installExitHandlers();
main().catch(async (err: unknown) => {
  if (isStopping()) return; // Ctrl-C or a dead child: shutdown() is already under way
  console.error(`bench:latency: ${err instanceof Error ? err.message : String(err)}`);
  for (const c of children) if (!alive(c)) printTail(c);
  await shutdown(1);
});
