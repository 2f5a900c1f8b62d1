/**
 * bench:latency's report: the sequential and closed-loop tables, the CPU per op, and the issue's
 * targets beside what was measured, as printed and kept in bench/results/.
 */
import type { Results } from '../results.js';
import type { Cell } from './cells.js';
import type { Kind } from './connection.js';
import type { Flags } from './flags.js';
import { headroom, int, ms, ratio, table, verdict } from './format.js';
import type { Summary } from './measurement.js';
import { SEQUENTIAL_ROUNDS, type Sequential } from './sequential.js';

/** The targets: printed next to the results, not asserted. */
const TARGETS = {
  weakP50VsEcho: 1.5,
  strongP50VsEcho: 4,
  weakOpsPerSec: 20_000,
  strongOpsPerSec: 5_000,
};

/**
 * The sequential tables: each kind's p50 and p99 beside the echo's and its floor's, and where a
 * Creek op's time goes (the client's time against the time inside the replica it talks to).
 */
export function printSequential(
  out: Results,
  r: Sequential,
  /** The replica the client talked to, and whether it was a follower. */
  where: { target: number; follower: number | undefined },
): void {
  const { seq, floors, inside, perRound } = r;
  const { target, follower } = where;
  const e = seq.echo;
  /** A sequential-latency row: p50 and p99, each also as a ratio to the echo's. */
  const row = (
    label: string,
    x: { p50: number; p99: number },
    errors: string,
    target = '',
  ): string[] => [
    label,
    ms(x.p50),
    ms(x.p99),
    ratio(x.p50 / e.p50),
    ratio(x.p99 / e.p99),
    errors,
    target,
  ];
  out.print(
    `\nSequential latency, 1 outstanding, ${perRound * SEQUENTIAL_ROUNDS} ops each in ${SEQUENTIAL_ROUNDS} interleaved rounds (client on ${follower === undefined ? 'the leader' : 'a follower'})`,
  );
  out.print(
    table(
      [
        ['', 'p50 ms', 'p99 ms', 'p50/echo', 'p99/echo', 'errors', 'target (issue)'],
        row('echo round trip', e, '-'),
        row('floor: durable reply', floors.durable, String(floors.durable.errors)),
        row('floor: durable relay', floors.relay, String(floors.relay.errors)),
        row(
          'weak → tentative',
          seq.weak,
          String(seq.weak.errors),
          `p50 ≤ ${TARGETS.weakP50VsEcho}× echo: ${verdict(seq.weak.p50 <= TARGETS.weakP50VsEcho * e.p50)}`,
        ),
        row(
          'strong → stable',
          seq.strong,
          String(seq.strong.errors),
          `p50 ≤ ${TARGETS.strongP50VsEcho}× echo: ${verdict(seq.strong.p50 <= TARGETS.strongP50VsEcho * e.p50)}`,
        ),
        row('invoke → stable', seq.invoke, String(seq.invoke.errors)),
        row('  (its tentative)', { p50: seq.invoke.tentP50, p99: seq.invoke.tentP99 }, ''),
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  out.print(
    `\n  strong: a strong op that asks for its stable view alone (invokeStrong); invoke: one that` +
      `\n  also gets its tentative view first (invoke), one more frame to the client per op.` +
      `\n\n  Floors (bench/src/floor-server.ts): no Creek, only what an answer needs on this stack.` +
      `\n  durable reply: parse the frame, commit one SQLite row, answer (least for a weak op);` +
      `\n  durable relay: client → A → B → A → client with a commit at each of A, B, A (least for a` +
      `\n  stable answer from a replica that needs one other replica's durable vote).` +
      `\n  weak p50 is ${ratio(seq.weak.p50 / floors.durable.p50)} its floor, strong p50 ${ratio(seq.strong.p50 / floors.relay.p50)} its floor.` +
      `\n  No server on this stack and machine answers faster than its floor, so what a target leaves` +
      `\n  for all of Creek's own work on the critical path (validation, execution, consensus logic)` +
      `\n  is target − floor: weak ${headroom(TARGETS.weakP50VsEcho * e.p50 - floors.durable.p50)},` +
      ` strong ${headroom(TARGETS.strongP50VsEcho * e.p50 - floors.relay.p50)}.`,
  );
  out.print(
    `\n  Where the time goes (means, ms): the client's time vs the time inside replica ${target}, from` +
      `\n  its /metrics histogram (invoke frame arrives → view frame leaves)`,
  );
  out.print(
    table(
      [
        ['', 'client', 'inside', 'rest (ws, parse, scheduling)', 'echo mean'],
        ...(
          [
            ['weak → tentative', seq.weak.mean, inside.weak],
            ['strong → stable', seq.strong.mean, inside.strong],
            ['invoke → stable', seq.invoke.mean, inside.invoke],
            ['invoke → tentative', seq.invoke.tentMean, inside.invokeTentative],
          ] as const
        ).map(([label, client, ins]) => [label, ms(client), ms(ins), ms(client - ins), ms(e.mean)]),
      ],
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );
}

/** The closed-loop table: each cell's throughput and latency, beside the echo's at its count. */
export function printClosedLoop(out: Results, flags: Flags, loop: readonly Cell[]): void {
  out.print(
    `\nClosed loop, ${flags.seconds} s per cell after ${flags.warmup} s warm-up, one connection`,
  );
  const echoAt = (n: number): Summary =>
    loop.find((x) => x.kind === 'echo' && x.outstanding === n)!.s;
  out.print(
    table(
      [
        ['', 'outstanding', 'ops/s', 'vs echo', 'p50 ms', 'p99 ms', 'p50/echo', 'errors'],
        ...loop.map(({ kind, outstanding, s }) => [
          kind === 'echo' ? 'echo' : kind === 'weak' ? 'weak → tentative' : 'strong → stable',
          String(outstanding),
          int(s.opsPerSec),
          kind === 'echo' ? '' : ratio(s.opsPerSec / echoAt(outstanding).opsPerSec),
          ms(s.p50),
          ms(s.p99),
          kind === 'echo' ? '' : ratio(s.p50 / echoAt(outstanding).p50),
          kind === 'echo' ? '' : String(s.errors),
        ]),
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
}

/**
 * The CPU each closed-loop cell cost per completed op, by process, and how many cores were busy:
 * whether an op's latency is waiting or computing (Linux only: it reads /proc).
 */
export function printCpu(
  out: Results,
  loop: readonly Cell[],
  /** Which replica led, which one the client talked to, and the cores of this machine. */
  where: { leader: number | null; target: number; cores: number },
): void {
  const { leader, target, cores } = where;
  const role = (i: number): string => (i === leader ? 'leader' : i === target ? 'origin' : 'other');
  out.print(
    `\nCPU per completed op in the closed loop (µs of user + system time, from /proc); cores busy:` +
      `\n  all of it over the cell's wall time (this machine has ${cores}: near ${cores}, ops wait for CPU)`,
  );
  out.print(
    table(
      [
        ['', 'outstanding', 'client', 'servers', 'total', 'cores busy'],
        ...loop.map(({ kind, outstanding, s, cpu, n }) => {
          const others = cpu.othersMicros;
          const total = cpu.selfMicros + others.reduce<number>((a, b) => a + (b ?? 0), 0);
          const per = (us: number | null): string => (us === null ? '?' : int(us / n));
          const servers =
            kind === 'echo'
              ? `echo ${per(others[0] ?? null)}`
              : others.map((us, i) => `${role(i)} ${per(us)}`).join(' · ');
          return [
            kind === 'echo' ? 'echo' : kind === 'weak' ? 'weak → tentative' : 'strong → stable',
            String(outstanding),
            per(cpu.selfMicros),
            servers,
            per(total),
            (total / ((n / s.opsPerSec) * 1e6)).toFixed(2),
          ];
        }),
      ],
      ['l', 'r', 'r', 'l', 'r', 'r'],
    ),
  );
}

/** The targets beside what was measured: the best throughput over the cells. */
export function printTargets(
  out: Results,
  seq: Record<Kind, Summary>,
  loop: readonly Cell[],
): void {
  const e = seq.echo;
  const best = (kind: Kind): { opsPerSec: number; outstanding: number } =>
    loop
      .filter((x) => x.kind === kind)
      .reduce(
        (a, b) =>
          b.s.opsPerSec > a.opsPerSec
            ? { opsPerSec: b.s.opsPerSec, outstanding: b.outstanding }
            : a,
        {
          opsPerSec: -1,
          outstanding: 0,
        },
      );
  const bw = best('weak');
  const bs = best('strong');
  out.print('\nTargets (from the issue; printed, not asserted)');
  out.print(
    table(
      [
        [
          'weak p50 ≤ 1.5× echo RTT',
          `${ratio(seq.weak.p50 / e.p50)}`,
          verdict(seq.weak.p50 <= TARGETS.weakP50VsEcho * e.p50),
        ],
        [
          'strong p50 ≤ 4× echo RTT',
          `${ratio(seq.strong.p50 / e.p50)}`,
          verdict(seq.strong.p50 <= TARGETS.strongP50VsEcho * e.p50),
        ],
        [
          `≥ ${int(TARGETS.weakOpsPerSec)} weak ops/s`,
          `${int(bw.opsPerSec)} (${bw.outstanding} outstanding)`,
          verdict(bw.opsPerSec >= TARGETS.weakOpsPerSec),
        ],
        [
          `≥ ${int(TARGETS.strongOpsPerSec)} strong ops/s`,
          `${int(bs.opsPerSec)} (${bs.outstanding} outstanding)`,
          verdict(bs.opsPerSec >= TARGETS.strongOpsPerSec),
        ],
      ],
      ['l', 'r', 'l'],
    ),
  );
}
