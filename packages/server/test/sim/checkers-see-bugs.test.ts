import { afterEach, describe, expect, it, vi } from 'vitest';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { ExecutionPipeline } from '@creek/replica/core/execution.js';
import { ReplicaContext } from '@creek/replica/core/replica-context.js';
import type { ExecutionJob } from '@creek/replica/core/types.js';
import { VersionStore } from '@creek/replica/core/version-store.js';
import { MirrorFeed, writerName } from '@creek/replica/exec/mirror-feed.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { Gossip } from '@creek/replica/gossip/gossip.js';
import type { Output } from '@creek/replica/core/types.js';
import { Replica } from '@creek/replica/core/replica.js';
import { expectCaughtBy, plantedRuns, seeds } from './planted.js';

/**
 * The checkers are only worth something if they fail when the replica is wrong. Each test plants a
 * bug in the replica and names the checker that must catch it on every seed of a set (listed with
 * the share of seeds 1–100 it fires on, measured when the test was written), with no run ended by
 * an exception or a checker that failed (planted.ts): a checker that stopped working cannot hide
 * behind a crash or another checker.
 */
const SEEDS = seeds(12);

describe('the simulator catches planted bugs', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sanity: the unmodified replica passes these seeds', () => {
    expect(plantedRuns(SEEDS, {})).toEqual(
      SEEDS.map((seed) => ({ seed, violations: [], threw: null })),
    );
  });

  it('skipping needed re-executions breaks serial equivalence (checkers c and e)', () => {
    // "Validate" every stale execution without looking at what it read.
    vi.spyOn(
      ExecutionPipeline.prototype as unknown as { stillValid: () => boolean },
      'stillValid',
    ).mockReturnValue(true);
    // Seeds 1–20: the replicas' own divergence detection on all 20 (their states differ; the
    // checker finds the divergence reported in a run of deterministic ops), (c) on 17, (e) on 13.
    expectCaughtBy(plantedRuns(SEEDS, {}), '(divergence)');
    expectCaughtBy(plantedRuns([2, 3, 4, 5, 7, 8, 9, 10, 11, 12], {}), '(c)');
    expectCaughtBy(plantedRuns([2, 4, 5, 6, 7, 11, 12, 13], {}), '(e)');
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
    // Seeds 1–20: divergence detection on all 20, (e) on 10, (c) on 6.
    expectCaughtBy(plantedRuns(SEEDS, {}), '(divergence)');
    expectCaughtBy(plantedRuns([1, 5, 6, 7, 10, 12, 13, 14], {}), '(e)');
    expectCaughtBy(plantedRuns([1, 7, 8, 12], {}), '(c)');
  });

  it('taking a mirror read of an older execution for the writer’s newer version is caught', () => {
    // Resolve what a mirror read by writer alone, as the worker pool first did: a writer executed
    // again has a new version with other values, which the stale read is then taken for.
    vi.spyOn(MirrorFeed.prototype, 'resolve').mockImplementation(function (this: MirrorFeed, t) {
      const store = (this as unknown as { store: VersionStore }).store;
      const find = (key: string, writer: string) =>
        store.versionBy(key, (v) => writerName(v.writer) === writer);
      if (t[0] === 'key')
        return { kind: 'key', key: t[1], version: t[2] === null ? null : find(t[1], t[2]) };
      return { kind: 'scan', prefix: t[1], versions: t[2].flatMap(([k, w]) => find(k, w) ?? []) };
    });
    // Seeds 1–200: divergence detection on 13, (e) on 8, (c) on 4 (a mirror read of a re-executed
    // writer is rare).
    expectCaughtBy(plantedRuns([27, 45, 115, 168], {}), '(divergence)');
    expectCaughtBy(plantedRuns([27, 53, 108, 180], {}), '(e)');
    expectCaughtBy(plantedRuns([27, 45, 62, 115], {}), '(c)');
  });

  it("taking a worker's read of its own earlier job's writes for that writer's newest version is caught", () => {
    // A worker reads the writes of the job before it on the same worker before the main thread
    // installed them (MirrorStore.installOwn). Resolve such a read to the writer's newest version
    // rather than to the installation of that job's result: when the core rolled the result back
    // and ran the writer again with other values, the read is taken for the new version, and the
    // execution that made it is accepted without failing validation.
    const resolve = MirrorFeed.prototype.resolve;
    vi.spyOn(MirrorFeed.prototype, 'resolve').mockImplementation(function (this: MirrorFeed, t) {
      const store = (this as unknown as { store: VersionStore }).store;
      const newest = (key: string, writer: string) =>
        store.versionBy(key, (v) => writerName(v.writer) === writer);
      const installed = (key: string, install: number) => store.installedAs(key, install);
      if (t[0] === 'key' && t[2] !== null && t[3] < 0)
        return { kind: 'key', key: t[1], version: newest(t[1], t[2]) };
      if (t[0] === 'scan' && t[2].some(([, , install]) => install < 0))
        return {
          kind: 'scan',
          prefix: t[1],
          versions: t[2].flatMap(
            ([k, w, install]) => (install < 0 ? newest(k, w) : installed(k, install)) ?? [],
          ),
        };
      return resolve.call(this, t);
    });
    // Seeds 1–400 (half of them read mirrors): divergence detection on 8, (e) on 7.
    expectCaughtBy(plantedRuns([116, 136, 168, 200], {}), '(divergence)');
    expectCaughtBy(plantedRuns([104, 108, 180, 208], {}), '(e)');
  });

  it("stabilizing every known op, as the paper's context does, can break invocation order (checker d)", () => {
    // The causal context with dots includes an origin's weak ops behind its pending strong op.
    vi.spyOn(DottedVersionVector.prototype, 'prefixes').mockImplementation(function (
      this: DottedVersionVector,
    ) {
      return this.clone();
    });
    // Seeds 1–100: (d) on 80.
    expectCaughtBy(plantedRuns([1, 2, 3, 4, 5, 6, 7, 8, 11, 12], {}), '(d)');
  });

  it("forgetting to re-sort version chains after a reordering commit trips the version store's own check", () => {
    vi.spyOn(VersionStore.prototype, 'reposition').mockImplementation(() => undefined);
    // Seeds 1–20: on 7 the version store finds a chain out of order and throws, which ends the
    // run before any checker sees it (the run fails); on 2 the replicas' divergence detection
    // catches it first; on the others no reordering commit moved a written key.
    const runs = plantedRuns([1, 5, 11, 12, 16, 17, 20], {});
    expect(runs.map((r) => r.threw)).toEqual(
      runs.map(() => expect.stringMatching(/^version store: no version of '[^']+' to remove$/)),
    );
  });

  it('answering promises and accepts before their writes are durable breaks safety under crashes', () => {
    // The same driver, but messages leave before the writes they depend on are durable; a crash then
    // loses acceptor state (and Reqs) that others already relied on.
    // A replica restarted after such a crash finds its own ops at peers that its disk lacks: it
    // halts rather than number ops with their ids (lost ops it once sent), or the run breaks a
    // guarantee outright.
    // Seeds 1–100 under crashes: caught on 17, by (a) agreement on 3 (4, 27, 92), by op ids
    // reused on 7, and on others by (d), (e) and halts.
    const config = { faults: 'crash', unsafeSendBeforeDurable: true } as const;
    expectCaughtBy(plantedRuns([4, 27], config), '(a)');
    expectCaughtBy(plantedRuns([4, 27, 45, 64, 69], config), 'op id reused');
  });

  it('under send-before-durable the record keeps a Req that left its replica before its write was durable', () => {
    // A crash drops from the record the Reqs whose writes it lost, as ops that never left their
    // replica. With this bug some had: peers committed them, or answers that depended on them
    // reached clients, and a checker then failed with "no Req recorded" (seeds 1–100 under
    // crashes: on these 10). Kept, they are judged: the replica halts having lost ops it sent,
    // reuses their ids, or its answers fail (a), (c) or (e); on 50, 61, 67 and 86 nothing broke.
    const config = { faults: 'crash', unsafeSendBeforeDurable: true } as const;
    const runs = plantedRuns([5, 32, 46, 50, 53, 61, 67, 80, 81, 86, 92], config);
    expect(
      runs.map((r) => [
        r.seed,
        r.threw,
        r.violations.filter((v) => v.startsWith('checker failed')),
      ]),
    ).toEqual(runs.map((r) => [r.seed, null, []]));
    expectCaughtBy(
      runs.filter((r) => [32, 46, 53, 80, 92].includes(r.seed)),
      'halt: ',
    );
    expectCaughtBy(
      runs.filter((r) => [5, 81].includes(r.seed)),
      '(e)',
    );
  });

  it('a replica whose disk was lost that picks its incarnation without its peers reuses op ids', () => {
    // It takes its slot's first origin again, whatever ops of it its peers hold.
    vi.spyOn(Gossip.prototype, 'knownOrigins').mockReturnValue(new Set());
    // Seeds 1–100 under crashes: on 39 (those where a disk is lost while peers hold its ops).
    expectCaughtBy(
      plantedRuns([1, 7, 10, 13, 14, 15, 17, 18], { faults: 'crash' }),
      'op id reused',
    );
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
    // Seeds 1–20: (c) on 18, linearizability on 7, the partition checker on 7.
    expectCaughtBy(plantedRuns([3, 5, 12, 13, 16], {}), '(linearizability)');
    expectCaughtBy(plantedRuns([1, 2, 3, 4, 5, 6, 7], {}), '(c)');
  });

  it('a replica that gives no tentative answer leaves its clients waiting in a minority (the partition checker)', () => {
    // Its ops answer once committed, as without speculation: a minority's wait until the heal,
    // though its replica sits idle there (RunRecord.executing: what excuses a wait). Seeds 1–12:
    // the partition checker on 8.
    type Respond = (tag: number, id: unknown, level: string, ...rest: unknown[]) => void;
    const proto = ReplicaContext.prototype as unknown as { respond: Respond };
    const original = proto.respond;
    vi.spyOn(proto, 'respond').mockImplementation(function (
      this: unknown,
      tag,
      id,
      level,
      ...rest
    ) {
      if (level !== 'tentative') original.call(this, tag, id, level, ...rest);
    });
    expectCaughtBy(plantedRuns([3, 4, 5, 7], { faults: 'all' }), '(partition) ');
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
    // Seeds 1–100: (f) on 20 (those whose exactly-once probes were resubmitted), (b) on all.
    expectCaughtBy(plantedRuns([8, 11, 16, 24], {}), '(f)');
    expectCaughtBy(plantedRuns(SEEDS, {}), '(b)');
  });

  it('a commit record that lists two ops of a batch in another order than they were committed is caught by agreement (a)', () => {
    // Replica 1 writes its commit records with the first two ops of a batch swapped (ops of two
    // origins): its order in memory is right, what its disk says is not, as a codec that reorders
    // a list would make it.
    const deliver = Replica.prototype.deliverStrong;
    vi.spyOn(Replica.prototype, 'deliverStrong').mockImplementation(function (this: Replica, id) {
      const out = deliver.call(this, id);
      if (this.id !== 1) return out;
      return out.map((o): Output => {
        if (o.type !== 'persist' || o.record.kind !== 'commit' || o.record.ids.length < 2) return o;
        const [x, y, ...rest] = o.record.ids;
        if (x!.replica === y!.replica) return o;
        return { ...o, record: { kind: 'commit', ids: [y!, x!, ...rest] } };
      });
    });
    // Seeds 1–40 without faults: (a) on all 40, (d) on 39 (the swapped pair breaks an origin's
    // order as the disk tells it). Under partitions, seed 3 is caught by (a) alone.
    expectCaughtBy(plantedRuns(SEEDS, { faults: 'none' }), '(a)');
    const alone = plantedRuns([3], { faults: 'partition' });
    expectCaughtBy(alone, '(a)');
    expect(alone.flatMap((r) => r.violations.filter((v) => !v.startsWith('(a)')))).toEqual([]);
  });
});
