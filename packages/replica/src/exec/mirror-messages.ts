import type { JsonValue, User } from '@creek/app';
import type { Rank } from '../core/rank.js';
import type { OpId } from '../core/op-id.js';
import type { Outcome, SessionStamp, Write } from '../core/types.js';

/**
 * What the main thread and an execution worker say to each other (worker-pool-executor.ts and
 * execution-worker.ts). A worker keeps a mirror of the replica's version store (mirror-store.ts),
 * brought up to date with the changes made since its last job, sent together with the next job:
 * a worker that runs no job costs nothing, and its reads never wait for the main thread.
 *
 * Writers are named by op key (`replica.eventNo`), or BASE for a checkpoint's finalized state.
 */
export type MirrorUpdate =
  /** The replica made a new store (it recovered): forget everything. */
  | readonly ['reset']
  /**
   * A writer's versions were installed; `undefined` values are deletes. `install` numbers this
   * installation: a writer executed again installs new versions under a new number, and a read
   * names the number it saw, so a read of an older execution's value is never taken for one of
   * the newer.
   */
  | readonly ['install', writer: string, install: number, rank: Rank, writes: readonly Write[]]
  /**
   * The versions this mirror made of job `jobId`'s writes (MirrorStore.installOwn) are what the
   * main thread installed from its result, as installation `install`: the same keys and values,
   * so they are not sent back to the worker that computed them.
   */
  | readonly ['own', writer: string, install: number, rank: Rank, jobId: number]
  /** An execution was rolled back: its versions of these keys are gone. */
  | readonly ['remove', writer: string, keys: readonly string[]]
  /** The writer was committed at this position. */
  | readonly ['commit', writer: string, commitSeq: number]
  /** The writer is final: older versions of these keys are unreachable. */
  | readonly ['finalize', writer: string, keys: readonly string[]];

export interface WorkerJob {
  readonly jobId: number;
  readonly op: string;
  readonly args: JsonValue;
  readonly ts: number;
  readonly id: OpId | null;
  readonly session?: SessionStamp;
  /** Who invoked the op (`tx.user`); absent for an anonymous caller. */
  readonly user?: User;
  /** Where the job reads: versions of writers that precede this rank. */
  readonly rank: Rank;
}

export interface WorkerRequest {
  readonly updates: readonly MirrorUpdate[];
  readonly job: WorkerJob;
}

/**
 * What a job read, by writer and installation (null: the key had no version before the job). A
 * negative installation, `-jobId`, is a version the worker made itself of an earlier job's writes
 * (MirrorStore.installOwn) before the main thread had installed them: the main thread reads it as
 * the versions it installed from that job's result (MirrorFeed.ownResult).
 */
export type ReadTrace =
  | readonly ['key', key: string, writer: string | null, install: number]
  | readonly [
      'scan',
      prefix: string,
      found: ReadonlyArray<readonly [key: string, writer: string, install: number]>,
    ];

export type WorkerReply =
  | { readonly t: 'ready' }
  | { readonly t: 'failed'; readonly error: string }
  | {
      readonly t: 'done';
      readonly jobId: number;
      readonly writes: readonly Write[];
      readonly outcome: Outcome;
      readonly reads: readonly ReadTrace[];
      /** µs the worker spent running the job (mirror reads included). */
      readonly micros?: number;
      /** The writes' pair hashes (ExecutionResult.pairHashes), four lanes per write. */
      readonly pairHashes?: Uint32Array;
    };

/** The writer name of a checkpoint's finalized state (versions placed before every entry). */
export const BASE = '~base';
