import type { ReplicaOptions } from '@creek/replica/core/replica.js';
import { opKey } from '@creek/replica/core/op-id.js';
import type { RecordingSnapshot } from '@creek/replica/core/snapshot.js';
import type { ExecutionResult } from '@creek/replica/core/types.js';
import type { Executor } from '@creek/replica/exec/executor.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import { MirrorFeed } from '@creek/replica/exec/mirror-feed.js';
import type { ReadTrace } from '@creek/replica/exec/mirror-messages.js';
import { MirrorStore } from '@creek/replica/exec/mirror-store.js';
import type { HostOptions } from '@creek/replica/host/options.js';
import { ExecutingSpans } from './executing-spans.js';
import { preferredLeaderOf } from './leader-placement.js';
import { plantedApp } from './nondeterminism.js';
import type { SimProcess, StepHost } from './process.js';
import type { RunState } from './run-state.js';
import { TRANSFER_PACING } from '../geo/index.js';
import { paxosTimers } from './wan.js';

/** HostOptions.transferChunkChars in simulated runs: a few Reqs or a few dozen keys a chunk. */
const SIM_TRANSFER_CHUNK_CHARS = 600;

/**
 * How a simulated process's host is configured: the options the seed's parameters and the
 * config's unsafe switches make, and an executor per incarnation that finishes executions out of
 * order after seeded delays.
 */
/**
 * Workers the simulated ones stand for, each with its mirror. A worker takes its own jobs' writes
 * at once (MirrorStore.installOwn) and the others' only once the host installed them, so with two
 * a job runs beside writes it cannot see yet, as it does on a real pool.
 */
const SIM_WORKERS = 2;

export class SimHostOptions {
  private readonly inline: InlineExecutor;
  private readonly replicaOptions: Omit<ReplicaOptions, 'id'>;

  constructor(
    private readonly run: RunState,
    private readonly step: StepHost,
  ) {
    const { app, params } = run;
    // The executors' ops note the caller they run as (RunState.callers, inside `around`).
    this.inline = new InlineExecutor(run.callers.observe(app));
    this.replicaOptions = {
      app,
      noopIntervalMs: params.noopIntervalMs,
      adoptAfterMs: params.adoptAfterMs,
      traceOrder: true,
      executionSlots: params.execution.slots,
      speculative: params.execution.speculative,
      ...(run.config.smr === true ? { orderOnArrival: true } : {}),
      deferExecution: params.execution.deferTurnMs !== null,
      ...(run.config.invariants === true || run.config.unsafeOverdraw === true
        ? { checkInvariants: true }
        : {}),
      ...(run.config.unsafeUnchainedAdoption === true ? { unsafeUnchainedAdoption: true } : {}),
    };
  }

  /** The options of a host of replica `id` (by default, one that executes inline). */
  of(
    id: number,
    executor: Executor = this.inline,
    storeObserver?: MirrorFeed,
    seeds: readonly number[] | null = this.run.procs[id]?.seeds ?? null,
  ): HostOptions {
    const { config, params } = this.run;
    const replicaOptions = this.replicaOptions;
    const { wan, minDelayMs } = params.network;
    const timers = paxosTimers(
      config.unsafeElectionBelowRtt === true,
      wan ?? null,
      minDelayMs,
      config.replicas,
    );
    const preferred = params.preferredLeader ?? null;
    const closes = config.closesOff === true ? { closesAllowed: () => false } : {};
    const paxos: NonNullable<HostOptions['paxos']> = {
      ...timers,
      ...(params.quorumReads ? { quorumReads: true } : {}),
      ...(config.unsafeQuorumReadSingleAnswer === true
        ? { unsafeQuorumReadSingleAnswer: true }
        : {}),
      ...(preferred === null ? {} : { preferredLeader: preferredLeaderOf(preferred, id) }),
      ...(preferred !== null && config.unsafeRunWhenDeposed === true
        ? { unsafeRunWhenDeposed: true }
        : {}),
      ...(config.unsafeLeaveOnlyInForce === true ? { unsafeLeaveOnlyInForce: true } : {}),
    };
    return {
      id,
      // CAB's options: on a WAN profile, the WAN timers (geo/timers.ts), else the host's
      // defaults; quorum reads and a preferred leader where the run has them. One object: each
      // spread of its own would replace the others'.
      ...(Object.keys(paxos).length === 0 ? {} : { paxos }),
      // A replica added during the run knows whom to ask, not the genesis configuration.
      ...(seeds === null ? { replicas: this.run.ids } : { replicas: seeds, join: true }),
      ...(config.unsafeGenesisQuorum === true ? { unsafeGenesisQuorum: true } : {}),
      ...(config.unsafeReadWithoutQuorum === true ? { unsafeReadWithoutQuorum: true } : {}),
      replica: storeObserver === undefined ? replicaOptions : { ...replicaOptions, storeObserver },
      executor,
      ...closes,
      checkpointEvery: params.checkpointEvery,
      ...(config.unsafeSpeculateWhileBehind === true
        ? { catchUpHold: Number.POSITIVE_INFINITY }
        : config.catchUpHold === undefined
          ? {}
          : { catchUpHold: config.catchUpHold }),
      ...(config.unsafeHoldWhileCutOff === true
        ? { catchUpStallMs: Number.POSITIVE_INFINITY }
        : {}),
      // Small chunks, so that the simulated states travel in several, which the network may lose,
      // duplicate and reorder (the default fills a chunk with 300,000 characters).
      transferChunkChars: SIM_TRANSFER_CHUNK_CHARS,
      // On a WAN profile, the WAN pacing, as `creek start --network wan` gives it.
      ...(wan === undefined || wan === null ? {} : { transferPacing: TRANSFER_PACING.wan }),
      ...(config.unsafeInstallIncomplete === true ? { unsafeInstallIncomplete: true } : {}),
      ...(config.unsafeSkipDivergenceCheck === true ? { unsafeSkipDivergenceCheck: true } : {}),
    };
  }

  /** Options of a live host of `p`: its executor, and the mirrors' feed when seeds use them. */
  live(p: SimProcess): HostOptions {
    if (!this.run.params.execution.mirror) return this.of(p.id, this.concurrentExecutor(p, null));
    const feed = new MirrorFeed(SIM_WORKERS);
    return this.of(p.id, this.concurrentExecutor(p, feed), feed);
  }

  /**
   * The executor of one incarnation of a process: it runs each job at once (so the job reads the
   * snapshot of its start) and hands the result to the host after a seeded delay, as a worker
   * would; results of an incarnation that crashed are dropped with it.
   */
  private concurrentExecutor(p: SimProcess, feed: MirrorFeed | null): Executor {
    const run = this.run;
    // With the planted nondeterministic op, each process loads the app itself, as real ones do:
    // the op's result depends on which process runs it.
    const inline =
      run.config.nondeterministic === true ? new InlineExecutor(plantedApp(p.id)) : this.inline;
    const incarnation = p.incarnation;
    const mirrors =
      feed === null ? [] : Array.from({ length: SIM_WORKERS }, () => new MirrorStore());
    const step = this.step;
    const executing = new ExecutingSpans(run, p.id);
    return {
      execute(job) {
        // Jobs of list entries (a read has no id) are what a tentative answer waits for.
        const entry = job.id !== null;
        if (entry) executing.started();
        let result: ExecutionResult;
        let traces: readonly ReadTrace[] = [];
        /** The writer whose writes the mirror took as its own (MirrorStore.installOwn). */
        let own: string | null = null;
        // Which worker: jobs alternate, so each sees the writes of half the jobs before it at once.
        const worker = job.jobId % SIM_WORKERS;
        const mirror = mirrors[worker];
        /** Stores the feed had been attached when the job started (MirrorFeed.resets). */
        const resets = feed?.resets;
        if (feed !== null && mirror !== undefined && job.rank !== undefined && job.retry !== true) {
          // As a worker: the store's changes so far, then the job on the mirror.
          mirror.apply(feed.take(worker));
          run.counts.mirrorExecutions++;
          const snapshot = mirror.reader(job.rank);
          result = run.callers.around(p.id, job, () => inline.execute({ ...job, snapshot }));
          traces = snapshot.reads;
          // As a worker: the jobs after it read its writes until the host's own installation of
          // them comes back.
          if (job.id !== null) mirror.installOwn(opKey(job.id), job.jobId, job.rank, result.writes);
          own = job.id === null ? null : opKey(job.id);
        } else result = run.callers.around(p.id, job, () => inline.execute(job));
        run.events.push(run.now + run.prngs.exec.float(0, run.params.execution.maxMs), () => {
          if (entry) executing.finished();
          if (!p.up || p.incarnation !== incarnation) return;
          // What it read, resolved when the result arrives, as the worker pool does.
          const snapshot = job.snapshot as RecordingSnapshot;
          const reads = snapshot.reads;
          if (run.config.unsafeTrustMirrorReads === true) {
            // The planted bug: each read recorded as what the job's position sees now.
            for (const t of traces) {
              if (t[0] === 'key') snapshot.get(t[1]);
              else snapshot.scan(t[1]);
            }
            traces = [];
          }
          for (const t of traces) {
            const read = feed!.resolve(t);
            if (read.stale === true) run.counts.staleMirrorReads++;
            reads.push(read);
          }
          if (own !== null)
            feed!.ownResult(
              worker,
              job.jobId,
              own,
              result.writes.map(([key]) => key),
              resets!,
            );
          step(p, { kind: 'executed', result });
          feed?.ownResultDone();
        });
        return undefined;
      },
    };
  }
}
