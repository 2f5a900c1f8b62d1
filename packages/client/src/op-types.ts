import type { App } from '@creek/app';
import type { z } from 'zod';
import type { ConsistencyLevel } from './binding.js';

/**
 * The types a client's calls take, from the app's own op definitions (`typeof app`): op names,
 * their arguments and results, and the options of an invoke. Shared by the client and a shared
 * context's handle (joined-context.ts).
 */

/** The op definitions of an app type (`typeof app`). */
type Definitions<A> = A extends App<infer D> ? D : never;
export type OpName<A> = Extract<keyof Definitions<A>, string>;
/**
 * The ops `watch` takes: those the app marks `readOnly: true` (a live query re-reads its op; an op
 * that writes would write each time). An op whose `readOnly` is only known as a `boolean` (an app
 * typed as `App`, untyped) is let through here and checked at run time.
 */
export type ReadOpName<A> = {
  [K in OpName<A>]: Definitions<A>[K] extends { readonly readOnly?: infer RO }
    ? true extends RO
      ? K
      : never
    : never;
}[OpName<A>];
/** What a caller passes: the schema's input (defaults may be left out). */
export type ArgsOf<A, K extends OpName<A>> = Definitions<A>[K] extends {
  args: infer S extends z.ZodType;
}
  ? z.input<S>
  : never;
/** What the op's `run` returns. */
export type ResultOf<A, K extends OpName<A>> = Definitions<A>[K] extends {
  run: (...a: never[]) => infer R;
}
  ? R extends void | undefined
    ? null
    : R
  : never;

export interface InvokeOptions<A = App> {
  /**
   * Views wanted, weakest first (Correctables §3.2); default: every level the client offers
   * (`cached`, `weak`, `strong`). `cached` adds, for a read-only op whose result this client saw
   * recently, that result at once as a preliminary view; it needs a replica's level beside it.
   */
  readonly levels?: ConsistencyLevel[];
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /**
   * Optimistic changes, as Replicache, Zero and Convex make them: called once, at the call, to say
   * how the op changes the live queries of this client (`views.update(query, args, change)`).
   * While the op is queued offline or in flight, each such query's latest view is `change`
   * applied to the replica's latest result (level `cached`), the pending ops' changes in the order
   * they were called. In each query the change stops applying as soon as a result holds the op
   * (its real effect, or its failure), so the row never vanishes in between; everywhere once the
   * op ends (committed, failed, or never to take effect).
   */
  readonly optimistic?: (views: OptimisticViews<A>) => void;
}

/** What `InvokeOptions.optimistic` gets: the live queries of this client, to change. */
export interface OptimisticViews<A = App> {
  /**
   * The live queries of `query(args)` (arguments compared as JSON, after the app's schema) show
   * `change(value)` while the op is pending: `value` is what they would show without it
   * (undefined before their first result); return a new value, never a mutated one.
   */
  update<K extends OpName<A>>(
    query: K,
    args: ArgsOf<A, K>,
    change: (value: ResultOf<A, K> | undefined) => ResultOf<A, K>,
  ): void;
}
