import type { App } from '@creek/server';
import type { z } from 'zod';
import type { Binding, ConsistencyLevel } from './binding.js';
import { Correctable } from './correctable.js';
import { CreekBinding, type CreekBindingOptions } from './creek-binding.js';
import { InvalidArguments } from './errors.js';

/** The op definitions of an app type (`typeof app`). */
type Definitions<A> = A extends App<infer D> ? D : never;
export type OpName<A> = Extract<keyof Definitions<A>, string>;
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

export interface InvokeOptions {
  /** Views wanted, weakest first (Correctables §3.2); default: every level the binding offers. */
  readonly levels?: ConsistencyLevel[];
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface ConnectOptions<A> extends CreekBindingOptions {
  /** The app definition itself: its Zod schemas then check arguments here, before anything is sent. */
  readonly app?: A;
}

/**
 * A Creek client. Every call returns a Correctable: `invoke` gives a preliminary view (the
 * replica's tentative answer) and then the final, stable one; `invokeWeak` and `invokeStrong` give
 * only a final view, at that level. Typed from the app's own definitions:
 *
 * ```ts
 * import app from './app.js';
 * const creek = connect<typeof app>({ urls: ['ws://127.0.0.1:7100/client'], token });
 * const ticket = await creek.invoke('queue.dequeue', { queue: 'tickets' });
 * ```
 */
export class CreekClient<A = App> {
  /** A client over any binding (Correctables §5.1): the Creek one, the in-memory one, a scripted one. */
  constructor(
    private readonly binding: Binding & { close?(): void; replica?: number | null },
    private readonly options: { readonly app?: A } = {},
  ) {}

  consistencyLevels(): ConsistencyLevel[] {
    return this.binding.consistencyLevels();
  }

  invoke<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: InvokeOptions = {},
  ): Correctable<ResultOf<A, K>> {
    const levels = options.levels ?? this.consistencyLevels();
    if (levels.length === 0)
      throw new RangeError('invoke: levels must name at least one consistency level');
    const controller = Correctable.create<ResultOf<A, K>>({
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    const checked = this.check(op, args);
    if (checked instanceof InvalidArguments) controller.fail(checked);
    else this.binding.submitOperation(op, checked, levels, controller.sink, controller.signal);
    return controller.correctable;
  }

  invokeWeak<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: Omit<InvokeOptions, 'levels'> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['weak'] });
  }

  invokeStrong<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: Omit<InvokeOptions, 'levels'> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['strong'] });
  }

  /** The replica this client is connected to now (null while it connects). */
  replica(): number | null {
    return this.binding.replica ?? null;
  }

  close(): void {
    this.binding.close?.();
  }

  /** With the app at hand, arguments are checked (and defaults applied) before they are sent. */
  private check(op: string, args: unknown): unknown {
    const app = this.options.app as App | undefined;
    if (app === undefined) return args;
    const def = app.lookup(op);
    if (def === undefined)
      return new InvalidArguments(
        `unknown operation '${op}'; this app has: ${app.names().join(', ')}`,
      );
    const parsed = (def.args as z.ZodType).safeParse(args);
    if (parsed.success) return parsed.data;
    const problems = parsed.error.issues.map(
      (i) => `${i.path.length > 0 ? i.path.map(String).join('.') : '(arguments)'}: ${i.message}`,
    );
    return new InvalidArguments(`invalid arguments for '${op}': ${problems.join('; ')}`);
  }
}

/** Connects to a Creek cluster (any of `urls`; it fails over to the others). */
export function connect<A = App>(options: ConnectOptions<A>): CreekClient<A> {
  return new CreekClient<A>(new CreekBinding(options), options);
}
