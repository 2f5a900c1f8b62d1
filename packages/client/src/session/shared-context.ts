import { maxSeen, readContextToken, seenEntries } from '@creek/protocol';
import type { ConsistencyLevel, View, ViewSink } from '../binding.js';
import { ProtocolError, Unavailable, type CreekError } from '../errors.js';
import type { ContextSink } from './context-requests.js';

/**
 * The built-in ops of shared contexts (@creek/app builtins.ts): copies, so that a browser bundle of
 * the client does not carry the built-ins' schemas; a test holds them equal.
 */
export const CONTEXT_MERGE_OP = 'creek.context.merge';
export const CONTEXT_FRONTIER_OP = 'creek.context.frontier';

/** The longest context id, as the replicas take it (MAX_CONTEXT_ID_CHARS in @creek/app). */
export const MAX_CONTEXT_ID_LENGTH = 128;

/** What a shared context needs of its client's session (ClientSession, or a binding over one). */
export interface SharedContextIo {
  /** Runs `op(args)` at `levels` in the session, views to `sink` (Binding.submitOperation). */
  submit(op: string, args: unknown, levels: ConsistencyLevel[], sink: ViewSink<unknown>): void;
  /** A token covering what the session has seen and the ops it has answers to. */
  context(sink: ContextSink): void;
  /** The session goes on after the ops `seen` counts, once its replica holds them. */
  afterSeen(seen: readonly number[], sink: ContextSink): void;
}

/**
 * One client's membership of a shared context (CC-Paxos's distributed context, built on Creek's
 * causal contexts rather than a protocol of its own): clients that join context `id` see one
 * another's ops in order. Each op in the context:
 *
 * 1. reads the context's frontier with a strong (linearizable) op, `creek.context.frontier`: the
 *    ops acknowledged in the context so far, counted by origin replica as a context token counts;
 * 2. goes on after those ops (and the `after` op refs it names): its replica holds them before the
 *    op is sent, so the op is ordered after them and reads them (the wait of `client.after`);
 * 3. runs as any op, its preliminary views passed on at once;
 * 4. once it has its final answer, adds a token covering it to the frontier with a strong
 *    `creek.context.merge`, and only then gives the caller that final answer: an op acknowledged
 *    in the context is in the frontier any later op of any member reads in step 1.
 *
 * So every op of a member that begins after another member's op was acknowledged runs after it
 * and sees it (checked by the simulator: sim/shared-context-checker.ts). The cost is two strong
 * round trips per op on top of the op's own; ops outside the context pay nothing.
 */
export class SharedContext {
  /** The merge's level: strong, but weak in the simulator's planted bug (`weak-context-merge`). */
  private readonly mergeLevel: ConsistencyLevel;

  constructor(
    readonly id: string,
    private readonly io: SharedContextIo,
    /** A deliberately broken context, for the simulator's planted bug: merges made weak. */
    broken?: { readonly weakMerge: true },
  ) {
    const problem = contextIdProblem(id);
    if (problem !== null) throw new TypeError(`joinContext: ${problem}`);
    this.mergeLevel = broken?.weakMerge === true ? 'weak' : 'strong';
  }

  /**
   * Runs `op(args)` in the context (the four steps above); `sink` gets its views, the final one
   * once it is acknowledged in the context, and `acknowledged` the op ref: a context token that
   * covers it, which `after` of another op (in any context, or `client.after`) waits for.
   */
  invoke(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<unknown>,
    after: readonly string[] = [],
    acknowledged?: (ref: string) => void,
  ): void {
    let waitFor: readonly number[] = [];
    for (const ref of after) {
      const read = readContextToken(ref);
      if (!read.ok) return sink.error(new TypeError(`after: ${read.message}`) as CreekError);
      waitFor = maxSeen(waitFor, read.seen);
    }
    this.readFrontier({
      frontier: (seen) =>
        this.afterThen(maxSeen(waitFor, seen), sink, () =>
          this.run(op, args, levels, sink, acknowledged),
        ),
      error: (e) => sink.error(e),
      queued: (q) => sink.queued?.(q),
    });
  }

  /**
   * Step 1: the frontier, read strong. While it waits in the offline queue, so does the caller's op
   * (`queued`), as the caller sees it.
   */
  private readFrontier(to: {
    frontier(seen: number[]): void;
    error(e: CreekError): void;
    queued(q: boolean): void;
  }): void {
    this.io.submit(CONTEXT_FRONTIER_OP, { id: this.id }, ['strong'], {
      queued: (q) => to.queued(q),
      view: (v) => {
        if (!v.final) return;
        const seen = seenFromPairs(v.value);
        if (seen === null)
          return to.error(
            new ProtocolError(
              `context '${this.id}': the replica answered a frontier that is not [origin, count] pairs`,
            ),
          );
        to.frontier(seen);
      },
      error: (e) => to.error(e),
    });
  }

  /** Step 2: on once the session's replica holds `seen` (at once when it counts nothing). */
  private afterThen(seen: readonly number[], sink: ViewSink<unknown>, then: () => void): void {
    if (seenEntries(seen).every(([, n]) => n === 0)) return then();
    this.io.afterSeen(seen, { token: () => then(), error: (e) => sink.error(e) });
  }

  /** Steps 3 and 4: the op, then its place in the frontier, then its final view. */
  private run(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<unknown>,
    acknowledged?: (ref: string) => void,
  ): void {
    const inContext = (e: CreekError): CreekError =>
      new Unavailable(
        `the op has its answer, but context '${this.id}' did not take it in (${e.message}); its members may not see it yet: run it again in the context, or read it with a strong op`,
        { cause: e, mayHaveTakenEffect: true },
      );
    this.io.submit(op, args, levels, {
      ...sink,
      view: (v: View<unknown>) => {
        if (!v.final) return sink.view(v);
        this.io.context({
          token: (ref) => {
            const read = readContextToken(ref);
            if (!read.ok) return sink.error(inContext(new ProtocolError(read.message)));
            this.io.submit(
              CONTEXT_MERGE_OP,
              { id: this.id, seen: seenEntries(read.seen).filter(([, n]) => n > 0) },
              [this.mergeLevel],
              {
                view: (m) => {
                  if (!m.final) return;
                  sink.view(v);
                  acknowledged?.(ref);
                },
                error: (e) => sink.error(inContext(e)),
                queued: (q) => sink.queued?.(q),
              },
            );
          },
          error: (e) => sink.error(inContext(e)),
        });
      },
    });
  }
}

/** Why `id` cannot name a shared context, or null. */
export function contextIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return `a context id is a string, not ${typeof id}`;
  if (id.length === 0) return 'a context id is a non-empty string';
  if (id.length > MAX_CONTEXT_ID_LENGTH)
    return `a context id is at most ${MAX_CONTEXT_ID_LENGTH} characters; this one has ${id.length}`;
  return null;
}

/** A frontier's [origin, count] pairs as a seen vector (indexed by origin), or null if it is not one. */
function seenFromPairs(value: unknown): number[] | null {
  if (!Array.isArray(value)) return null;
  const seen: number[] = [];
  for (const p of value) {
    if (!Array.isArray(p) || p.length !== 2) return null;
    const [origin, n] = p as unknown[];
    if (!Number.isSafeInteger(origin) || !Number.isSafeInteger(n)) return null;
    if ((origin as number) < 0 || (n as number) < 0) return null;
    seen[origin as number] = n as number;
  }
  return seen;
}
