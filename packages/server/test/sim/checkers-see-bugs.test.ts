import { afterEach, describe, expect, it, vi } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { ExecutionPipeline } from '@creek/replica/core/execution.js';
import { ReplicaContext } from '@creek/replica/core/replica-context.js';
import type { ExecutionJob } from '@creek/replica/core/types.js';
import { VersionStore } from '@creek/replica/core/version-store.js';
import { MirrorFeed, writerName } from '@creek/replica/exec/mirror-feed.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { Gossip } from '@creek/replica/gossip/gossip.js';
import { runSimulation, type FaultMode } from '../../src/sim/simulation.js';

/**
 * The checkers are only worth something if they fail when the replica is wrong. Each test plants a
 * bug in the replica and expects the simulator to report it within a few seeds.
 */
function violationsOver(
  seeds: number[],
  replicas = 3,
  unsafeSendBeforeDurable = false,
  faults: FaultMode = unsafeSendBeforeDurable ? 'crash' : 'all',
): string[] {
  return seeds.flatMap((seed) => {
    try {
      return runSimulation({ seed, replicas, faults, unsafeSendBeforeDurable }).violations;
    } catch (err) {
      // The replica's own invariant checks count as detection too.
      return [`crash: ${(err as Error).message}`];
    }
  });
}

const SEEDS = Array.from({ length: 12 }, (_, i) => i + 1);

describe('the simulator catches planted bugs', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sanity: the unmodified replica passes these seeds', () => {
    expect(violationsOver(SEEDS)).toEqual([]);
  });

  it('skipping needed re-executions breaks serial equivalence (checkers c and e)', () => {
    // "Validate" every stale execution without looking at what it read.
    vi.spyOn(
      ExecutionPipeline.prototype as unknown as { stillValid: () => boolean },
      'stillValid',
    ).mockReturnValue(true);
    const v = violationsOver(SEEDS);
    expect(v.some((x) => x.startsWith('(c)'))).toBe(true);
    expect(v.some((x) => x.startsWith('(e)'))).toBe(true);
  });

  it('accepting a concurrent execution without validating it breaks serial equivalence (checkers c and e)', () => {
    // Executions started beyond the frontier (while earlier ones ran) are taken as valid without
    // looking at what they read; every other execution is still validated.
    const stillValid = (
      ExecutionPipeline.prototype as unknown as { stillValid: (e: unknown) => boolean }
    ).stillValid;
    vi.spyOn(
      ExecutionPipeline.prototype as unknown as {
        stillValid: (e: { exec: { ahead: boolean } }) => boolean;
      },
      'stillValid',
    ).mockImplementation(function (this: ExecutionPipeline, e) {
      return e.exec.ahead || stillValid.call(this, e);
    });
    const v = violationsOver(SEEDS);
    expect(v.some((x) => x.startsWith('(c)'))).toBe(true);
    expect(v.some((x) => x.startsWith('(e)'))).toBe(true);
  });

  it('taking a mirror read of an older execution for the writer’s newer version is caught', () => {
    // Resolve what a mirror read by writer alone, as the worker pool first did: a writer executed
    // again has a new version with other values, which the stale read is then taken for.
    vi.spyOn(MirrorFeed.prototype, 'resolve').mockImplementation(function (this: MirrorFeed, t) {
      const store = (this as unknown as { store: VersionStore }).store;
      const find = (key: string, writer: string) =>
        store.versionBy(key, (e) => writerName(e) === writer);
      if (t[0] === 'key')
        return { kind: 'key', key: t[1], version: t[2] === null ? null : find(t[1], t[2]) };
      return { kind: 'scan', prefix: t[1], versions: t[2].flatMap(([k, w]) => find(k, w) ?? []) };
    });
    const seeds = Array.from({ length: 40 }, (_, i) => i + 1);
    const v = violationsOver(seeds);
    expect(v.some((x) => /^\((c|e)\)/.test(x))).toBe(true);
  });

  it("stabilizing every known op, as the paper's context does, can break invocation order (checker d)", () => {
    // The causal context with dots includes an origin's weak ops behind its pending strong op.
    vi.spyOn(DottedVersionVector.prototype, 'prefixes').mockImplementation(function (
      this: DottedVersionVector,
    ) {
      return this.clone();
    });
    const v = violationsOver(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(v.some((x) => x.startsWith('(d)'))).toBe(true);
  });

  it('forgetting to re-sort version chains after a reordering commit is caught', () => {
    vi.spyOn(VersionStore.prototype, 'reposition').mockImplementation(() => undefined);
    const v = violationsOver(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(v.length).toBeGreaterThan(0);
  });

  it('answering promises and accepts before their writes are durable breaks safety under crashes', () => {
    // The same driver, but messages leave before the writes they depend on are durable; a crash then
    // loses acceptor state (and Reqs) that others already relied on.
    // A replica restarted after such a crash finds its own ops at peers that its disk lacks: it
    // halts rather than number ops with their ids (lost ops it once sent), or the run breaks a
    // guarantee outright.
    const seeds = Array.from({ length: 30 }, (_, i) => i + 1);
    const v = violationsOver(seeds, 3, true);
    expect(
      v.some((x) => /^\((a|b|c|d|e)\)|^checker failed|^halt: .* has lost ops it once sent/.test(x)),
    ).toBe(true);
  });

  it('a replica whose disk was lost that picks its incarnation without its peers reuses op ids', () => {
    // It takes its slot's first origin again, whatever ops of it its peers hold.
    vi.spyOn(Gossip.prototype, 'knownOrigins').mockReturnValue(new Set());
    const v = violationsOver(
      Array.from({ length: 20 }, (_, i) => i + 1),
      3,
      false,
      'crash',
    );
    expect(v.some((x) => x.startsWith('op id reused'))).toBe(true);
  });

  it('answering strong ops stably from the speculative order is not linearizable', () => {
    // The replica calls its first tentative response of a strong op "stable".
    type Respond = (
      tag: number,
      id: unknown,
      level: string,
      outcome: unknown,
      trace?: unknown,
    ) => void;
    const proto = ReplicaContext.prototype as unknown as { respond: Respond };
    const original = proto.respond;
    vi.spyOn(proto, 'respond').mockImplementation(function (
      this: unknown,
      tag,
      id,
      level,
      outcome,
      trace,
    ) {
      original.call(this, tag, id, level === 'tentative' ? 'stable' : level, outcome, trace);
    });
    const v = violationsOver(SEEDS);
    expect(v.some((x) => x.startsWith('(linearizability)'))).toBe(true);
  });

  it('ignoring client sessions applies resubmitted ops twice (checker f)', () => {
    // An executor that runs every submission, as if ops carried no session.
    const execute = InlineExecutor.prototype.execute;
    vi.spyOn(InlineExecutor.prototype, 'execute').mockImplementation(function (
      this: InlineExecutor,
      job: ExecutionJob,
    ) {
      const { session: _ignored, ...withoutSession } = job;
      return execute.call(this, withoutSession);
    });
    const v = violationsOver(SEEDS);
    expect(v.some((x) => x.startsWith('(f)'))).toBe(true);
  });
});
