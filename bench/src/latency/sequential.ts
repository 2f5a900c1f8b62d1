/**
 * bench:latency's sequential phase: one op outstanding, for the echo, the floors and each kind of
 * Creek op, with the time the op spent inside the replica the client talks to (its /metrics).
 */
import { settle, type Cluster } from './cluster.js';
import type { Conn, Kind } from './connection.js';
import type { Flags } from './flags.js';
import { ms, progress } from './format.js';
import { closedLoop, mergeResults, summarize, type Result, type Summary } from './measurement.js';

/** Sequential measurements are split in this many interleaved rounds. */
export const SEQUENTIAL_ROUNDS = 10;

/** The connections measured one op at a time: the floors' beside the echo's and Creek's. */
export interface SequentialConns {
  readonly echo: Conn;
  readonly floor: Conn;
  readonly relay: Conn;
  readonly creek: Conn;
}

export interface Sequential {
  /** Ops measured per kind in each of the SEQUENTIAL_ROUNDS rounds. */
  readonly perRound: number;
  readonly seq: Record<Kind, Summary>;
  readonly floors: { durable: Summary; relay: Summary };
  /** Mean ms inside the replica the client talks to, over the measured ops. */
  readonly inside: { weak: number; strong: number; invoke: number; invokeTentative: number };
}

/**
 * Sequential latency, one outstanding, in interleaved rounds: this machine's speed drifts
 * (the echo's p50 moved between 0.05 and 0.12 ms from one run to the next), so each kind is
 * measured a little in every round, in a rotating order, rather than all at once. Closes the
 * floor connections, which nothing measures after this.
 */
export async function measureSequential(
  flags: Flags,
  conns: SequentialConns,
  cluster: Cluster,
  /** The replica the Creek connection talks to, whose /metrics give the time inside it. */
  target: number,
): Promise<Sequential> {
  const { echo, floor, relay, creek } = conns;
  type SeqKind = 'echo' | 'durable' | 'relay' | 'weak' | 'strong' | 'invoke';
  const seqKinds: readonly SeqKind[] = ['echo', 'durable', 'relay', 'weak', 'strong', 'invoke'];
  const connOf: Record<SeqKind, Conn> = {
    echo,
    durable: floor,
    relay,
    weak: creek,
    strong: creek,
    invoke: creek,
  };
  const isCreek = (k: SeqKind): k is Exclude<Kind, 'echo'> =>
    k === 'weak' || k === 'strong' || k === 'invoke';
  // The floors answer any frame: they are driven like the echo.
  const frameKind = (k: SeqKind): Kind => (isCreek(k) ? k : 'echo');
  const perRound = Math.max(1, Math.ceil(flags.ops / SEQUENTIAL_ROUNDS));
  const parts = Object.fromEntries(seqKinds.map((k) => [k, [] as Result[]])) as Record<
    SeqKind,
    Result[]
  >;
  /** Sum and count of the target replica's own times (ms), over the measured ops. */
  const insideSum = { weak: [0, 0], strong: [0, 0], invoke: [0, 0], invokeTentative: [0, 0] };
  for (const kind of seqKinds) {
    progress(`sequential ${kind}: ${flags.warmup} s warm-up`);
    await closedLoop(connOf[kind], frameKind(kind), 1, {
      warmupSeconds: 0,
      seconds: flags.warmup,
    });
    if (isCreek(kind)) await settle(cluster);
  }
  progress(
    `sequential: ${SEQUENTIAL_ROUNDS} rounds of ${perRound} ops per kind (${seqKinds.join(', ')})`,
  );
  for (let round = 0; round < SEQUENTIAL_ROUNDS; round++) {
    for (let j = 0; j < seqKinds.length; j++) {
      const kind = seqKinds[(round + j) % seqKinds.length]!;
      // The replica's histogram is read around the measured ops only.
      const before = isCreek(kind) ? await cluster.serverTimes(target) : null;
      parts[kind].push(
        await closedLoop(connOf[kind], frameKind(kind), 1, { warmupSeconds: 0, ops: perRound }),
      );
      if (before !== null) {
        const after = await cluster.serverTimes(target);
        const add = (into: number[], l: 'tentative' | 'stable'): void => {
          into[0]! += after[l].sum - before[l].sum;
          into[1]! += after[l].n - before[l].n;
        };
        if (kind === 'weak') add(insideSum.weak, 'tentative');
        else if (kind === 'strong') add(insideSum.strong, 'stable');
        else {
          add(insideSum.invoke, 'stable');
          add(insideSum.invokeTentative, 'tentative');
        }
        await settle(cluster);
      }
    }
    if ((round + 1) % 5 === 0 || round + 1 === SEQUENTIAL_ROUNDS)
      progress(`  round ${round + 1}/${SEQUENTIAL_ROUNDS}`);
  }
  floor.close();
  relay.close();
  const seqAll = Object.fromEntries(
    seqKinds.map((k) => [k, summarize(mergeResults(parts[k]))]),
  ) as Record<SeqKind, Summary>;
  const seq: Record<Kind, Summary> = {
    echo: seqAll.echo,
    weak: seqAll.weak,
    strong: seqAll.strong,
    invoke: seqAll.invoke,
  };
  const floors = { durable: seqAll.durable, relay: seqAll.relay };
  /** Mean ms inside the replica the client talks to, over the measured ops. */
  const meanOf = ([sum, n]: number[]): number => sum! / n!;
  const inside = {
    weak: meanOf(insideSum.weak),
    strong: meanOf(insideSum.strong),
    invoke: meanOf(insideSum.invoke),
    invokeTentative: meanOf(insideSum.invokeTentative),
  };
  for (const kind of seqKinds) {
    const x = seqAll[kind];
    progress(
      `  ${kind}: p50 ${ms(x.p50)} ms, p99 ${ms(x.p99)} ms` +
        (kind === 'invoke' ? ` (first tentative view: p50 ${ms(x.tentP50)} ms)` : '') +
        (x.errors > 0 ? `, ${x.errors} errors: ${creek.firstError}` : ''),
    );
  }

  return { perRound, seq, floors, inside };
}
