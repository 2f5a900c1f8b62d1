import type { App } from '@creek/app';
import type { ConsistencyLevel, ViewSink } from './binding.js';
import type { ArgsOf, InvokeOptions, OpName, ResultOf } from './op-types.js';
import type { Correctable } from './correctable.js';
import type { SharedContext } from './session/shared-context.js';

/** How an op runs in a shared context: `invoke`'s options, and the op refs it comes after. */
export interface ContextInvokeOptions<A = App> extends Omit<
  InvokeOptions<A>,
  'levels' | 'optimistic'
> {
  /**
   * Op refs (`context.ref(c)` of an earlier op, in this context or another, from this client or
   * another) this op comes after: it runs once its replica holds them, and reads them.
   */
  readonly after?: string | readonly string[];
}

/** How a joined context runs an op through its client (`CreekClient.invoke`, another submit). */
export type InvokeThrough<A> = <K extends OpName<A>>(
  op: K,
  args: ArgsOf<A, K>,
  options: InvokeOptions<A>,
  submit: (op: string, args: unknown, levels: ConsistencyLevel[], sink: ViewSink<unknown>) => void,
) => Correctable<ResultOf<A, K>>;

/**
 * A client's membership of a shared context (`client.joinContext(id)`): the clients that join one
 * context see one another's ops in order. An op invoked here runs after every op of any member
 * that was acknowledged (its final view given) before it began, and reads them, whichever replica
 * each client uses; its own final view comes once the context has taken it in. Preliminary views
 * come as for `client.invoke`. Each op costs two strong round trips more than outside the context
 * (a read of the context's frontier before it, a merge into it after): use it for the ops whose
 * order across clients matters. Ops the client invokes outside the context are not affected.
 */
export class JoinedContext<A = App> {
  private readonly refs = new WeakMap<Correctable<unknown>, Promise<string>>();

  constructor(
    private readonly shared: SharedContext,
    private readonly through: InvokeThrough<A>,
  ) {}

  /** The context's id, as given to `joinContext`. */
  get id(): string {
    return this.shared.id;
  }

  invoke<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: ContextInvokeOptions<A> & { readonly levels?: ConsistencyLevel[] } = {},
  ): Correctable<ResultOf<A, K>> {
    const { after, ...rest } = options;
    const refs = after === undefined ? [] : typeof after === 'string' ? [after] : [...after];
    let acknowledged!: (ref: string) => void;
    let failed!: (e: unknown) => void;
    const ref = new Promise<string>((resolve, reject) => {
      acknowledged = resolve;
      failed = reject;
    });
    // Asked for or not: an op that fails leaves no unhandled rejection behind.
    ref.catch(() => undefined);
    const c = this.through(op, args, rest, (name, checked, levels, sink) =>
      this.shared.invoke(name, checked, levels, sink, refs, acknowledged),
    );
    c.then(undefined, failed);
    this.refs.set(c as Correctable<unknown>, ref);
    return c;
  }

  invokeWeak<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: ContextInvokeOptions<A> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['weak'] });
  }

  invokeStrong<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: ContextInvokeOptions<A> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['strong'] });
  }

  /**
   * The op ref of `c`, an op invoked in this context: a context token covering it, given once it
   * is acknowledged in the context (rejects as `c` does if it fails). Another op, in any context,
   * comes after it with `{ after: ref }`; a client outside with `client.after(ref)`.
   */
  ref(c: Correctable<unknown>): Promise<string> {
    const r = this.refs.get(c);
    if (r === undefined)
      return Promise.reject(
        new TypeError(`context '${this.id}': ref() takes an op invoked in this context`),
      );
    return r;
  }
}
