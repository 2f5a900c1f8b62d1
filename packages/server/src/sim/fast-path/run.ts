import { profileNamed, TIMERS } from '../../geo/index.js';
import { EventQueue } from '../event-queue.js';
import { Prng } from '../prng.js';
import { WanLinks, type WanProfileName } from '../wan.js';
import { checkFastPath, type FastPathOpRecord } from './checker.js';
import { FastPathReplica, type FastPathMessage, type FastPathOp, type Step } from './replica.js';

/**
 * One seeded, fault-free run of the fast-path prototype (sim/fast-path/replica.ts) over a WAN
 * profile: one replica per region, a client next to each that asks for strong ops on a shared set
 * of keys at random times, every message delayed by its link's one-way delay with the profile's
 * jitter (sim/wan.ts, as the simulator's WAN seeds). Conflicts come from the ops themselves: two
 * ops on one key whose rounds overlap. The run ends once every op is committed and executed
 * everywhere; the checker (sim/fast-path/checker.ts) then judges it.
 */
export interface FastPathConfig {
  readonly seed: number;
  readonly profile: WanProfileName;
  /** Replicas, one per region of the profile in order (default: as many as it has regions). */
  readonly replicas?: number;
  /** Keys the ops draw from, uniformly: fewer keys, more conflicts. */
  readonly keys: number;
  /** Ops per second each region's client asks for (exponential gaps). */
  readonly ratePerRegion: number;
  /** Simulated ms during which clients ask for ops. */
  readonly workloadMs: number;
  /** The planted bug (FastPathOptions.unsafeIgnoreChangedDeps). */
  readonly unsafeIgnoreChangedDeps?: boolean;
}

export type { FastPathOpRecord } from './checker.js';

export interface FastPathRun {
  readonly config: FastPathConfig;
  readonly replicas: number;
  readonly ops: readonly FastPathOpRecord[];
  /** Per replica, the op ids in the order it executed them. */
  readonly executions: readonly (readonly string[])[];
  readonly violations: readonly string[];
  readonly messages: number;
  /** Simulated ms at which the last event ran. */
  readonly endedAt: number;
}

type Event =
  | { readonly kind: 'ask'; readonly replica: number }
  | {
      readonly kind: 'deliver';
      readonly from: number;
      readonly to: number;
      readonly message: FastPathMessage;
    };

/** Runs `config`; throws on a config it cannot run. */
export function runFastPath(config: FastPathConfig): FastPathRun {
  const profile = profileNamed(config.profile);
  const n = config.replicas ?? profile.regions.length;
  // EPaxos's quorums are for N = 2F + 1: with an even count, two fast quorums need not meet.
  if (!Number.isInteger(n) || n < 1 || n > 15 || n % 2 === 0)
    throw new Error(`replicas must be an odd number from 1 to 15 (2F + 1), got ${n}`);
  if (!Number.isInteger(config.keys) || config.keys < 1) throw new Error('keys must be ≥ 1');
  if (!(config.ratePerRegion > 0)) throw new Error('ratePerRegion must be > 0');
  if (!(config.workloadMs > 0)) throw new Error('workloadMs must be > 0');

  const links = new WanLinks({ profile: config.profile, scale: 1, timers: TIMERS.wan });
  const delays = Prng.named(config.seed, 'fast-path-delays');
  const asks = Prng.named(config.seed, 'fast-path-asks');
  const replicas = Array.from(
    { length: n },
    (_, i) =>
      new FastPathReplica(i, n, { unsafeIgnoreChangedDeps: config.unsafeIgnoreChangedDeps }),
  );
  const events = new EventQueue<Event>();
  const ops = new Map<string, FastPathOpRecord>();
  const asked = new Array<number>(n).fill(0);
  let messages = 0;
  let now = 0;

  const meanGapMs = 1000 / config.ratePerRegion;
  for (let r = 0; r < n; r++) events.push(asks.exponential(meanGapMs), { kind: 'ask', replica: r });

  // Where each replica's execution list was read up to, to see what a step executed.
  const executedSeen = new Array<number>(n).fill(0);
  const apply = (at: number, step: Step): void => {
    for (const { to, message } of step.sends) {
      messages++;
      events.push(now + links.delay(at, to, delays.next()), {
        kind: 'deliver',
        from: at,
        to,
        message,
      });
    }
    for (const c of step.committed) {
      const rec = ops.get(c.id)!;
      rec.committedAt = now;
      rec.fast = c.fast;
    }
    const executed = replicas[at]!.executed;
    for (let i = executedSeen[at]!; i < executed.length; i++) {
      const rec = ops.get(executed[i]!)!;
      if (rec.op.origin === at) rec.executedAt = now;
    }
    executedSeen[at] = executed.length;
  };

  for (let e = events.pop(); e !== undefined; e = events.pop()) {
    now = e.at;
    const ev = e.event;
    if (ev.kind === 'ask') {
      if (now > config.workloadMs) continue;
      const count = asked[ev.replica]!;
      asked[ev.replica] = count + 1;
      const op: FastPathOp = {
        id: `${ev.replica}.${count}`,
        origin: ev.replica,
        key: `k${asks.int(0, config.keys - 1)}`,
      };
      ops.set(op.id, { op, proposedAt: now, committedAt: null, executedAt: null, fast: null });
      apply(ev.replica, replicas[ev.replica]!.propose(op));
      events.push(now + asks.exponential(meanGapMs), ev);
    } else {
      apply(ev.to, replicas[ev.to]!.receive(ev.from, ev.message));
    }
  }

  const records = [...ops.values()];
  const executions = replicas.map((r) => r.executed);
  return {
    config,
    replicas: n,
    ops: records,
    executions,
    violations: checkFastPath(records, replicas),
    messages,
    endedAt: now,
  };
}
