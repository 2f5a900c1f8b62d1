import {
  createContext,
  createElement,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import type {
  ArgsOf,
  ConnectionStatus,
  Correctable,
  CreekClient,
  Identity,
  InvokeOptions,
  LiveQueryCorrection,
  OpName,
  ReadOpName,
  ResultOf,
} from '@creek/client';
import { CorrectableStore, type OpState } from './correctable-store.js';
import { LiveQueryStore } from './live-query-store.js';

/** Options of `useInvoke`: the invoke options, and `skip` to invoke nothing for now. */
export interface UseInvokeOptions extends Omit<InvokeOptions, 'signal'> {
  /** Invoke nothing while true (arguments not known yet): the state stays idle. */
  readonly skip?: boolean;
}

/** Options of `useWatch`. */
export interface UseWatchOptions<T> {
  /** Watch nothing while true (arguments not known yet): the state stays idle. */
  readonly skip?: boolean;
  /**
   * The latest view replaced one that showed some of the session's own ops applied, and shows
   * them failed (rejected at their place in the committed order, or abandoned): say so to the
   * user, whose write is gone for good (`LiveQueryCallbacks.onCorrection`).
   */
  readonly onCorrection?: (correction: LiveQueryCorrection<T>) => void;
}

/** What `useOp` returns: the function that invokes the op, and the state of its latest call. */
export interface OpHandle<A, K extends OpName<A>> extends OpState<ResultOf<A, K>> {
  /** Invokes the op; the state follows this call (each call replaces the one followed). */
  invoke(args: ArgsOf<A, K>, options?: InvokeOptions<A>): Correctable<ResultOf<A, K>>;
}

/** The hooks, typed from an app: `createCreekHooks<typeof app>()`. */
export interface CreekHooks<A> {
  /** Hands the client to the hooks below it: `<CreekProvider client={client}>…`. */
  CreekProvider(props: { client: CreekClient<A>; children?: ReactNode }): ReactNode;
  /** The client of the nearest CreekProvider. */
  useCreekClient(): CreekClient<A>;
  /**
   * Invokes `op(args)` once per distinct op and arguments (compared as JSON), and returns its
   * state as views arrive: for a read, a `cached` value at once if the client has one, then the
   * tentative and stable ones. New arguments invoke again; the state of the earlier call is left.
   */
  useInvoke<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options?: UseInvokeOptions,
  ): OpState<ResultOf<A, K>>;
  /**
   * A live query (`client.watch`): the latest view of the read-only `op(args)` in the session's
   * own order (`LiveQuery.latest()`), pushed by the replica each time it changes — `level` weak at
   * its tentative state, strong at its committed one; a stable result read before the session's
   * newest writes committed does not replace the tentative view that shows them. `pending` until
   * the first result. `onCorrection` hears a view that shows the session's own ops failed after
   * one showed them applied. New arguments watch anew; unmounting ends the query.
   */
  useWatch<K extends ReadOpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options?: UseWatchOptions<ResultOf<A, K>>,
  ): OpState<ResultOf<A, K>>;
  /** A function that invokes `op`, and the state of its latest call (for writes, on an event). */
  useOp<K extends OpName<A>>(op: K): OpHandle<A, K>;
  /** The client's connection status (`connecting`, `connected`, `offline`), as it changes. */
  useStatus(): ConnectionStatus;
  /**
   * The client's user, as it changes (`client.identity()`): `state` (`signed-out`, `signing-in`,
   * `signed-in`, `expired`, `refused`), `user` (`{ id, claims }` once a replica accepted the
   * user's token, else null) and `error` (why the last sign-in or refresh failed). When the user
   * changes (`client.setAuth`), `useInvoke`, `useWatch` and `useOp` start afresh for the new user:
   * nothing read or written as the previous one stays on screen.
   */
  useIdentity(): Identity;
}

/**
 * Creek's React hooks, on `useSyncExternalStore` (so a view that arrives between two renders is
 * never torn), typed from the app as `connect<typeof app>()` is:
 *
 * ```ts
 * const { CreekProvider, useInvoke, useOp } = createCreekHooks<typeof app>();
 * function Balance({ account }: { account: string }) {
 *   const { value, level, pending } = useInvoke('bank.balance', { account });
 *   return <span className={level}>{value ?? '…'}{pending ? ' (updating)' : ''}</span>;
 * }
 * ```
 */
export function createCreekHooks<A>(): CreekHooks<A> {
  const ClientContext = createContext<CreekClient<A> | null>(null);

  function CreekProvider(props: { client: CreekClient<A>; children?: ReactNode }): ReactNode {
    return createElement(ClientContext.Provider, { value: props.client }, props.children);
  }

  function useCreekClient(): CreekClient<A> {
    const client = useContext(ClientContext);
    if (client === null)
      throw new Error(
        'Creek hooks need a <CreekProvider client={connect(...)}> above the component that uses them',
      );
    return client;
  }

  function useInvoke<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: UseInvokeOptions = {},
  ): OpState<ResultOf<A, K>> {
    const client = useCreekClient();
    const session = useSession(client);
    const { skip = false, levels, timeoutMs } = options;
    // Arguments are a new object on each render: the call is keyed by their JSON.
    const key = skip ? null : JSON.stringify([op, args, levels ?? null, timeoutMs ?? null]);
    const store = useMemo(
      () =>
        new CorrectableStore<ResultOf<A, K>>(
          key === null
            ? null
            : () =>
                client.invoke(op, args, {
                  ...(levels === undefined ? {} : { levels }),
                  ...(timeoutMs === undefined ? {} : { timeoutMs }),
                }),
        ),
      // `key` stands for op, args, levels and timeoutMs: a new call only when one of them changed
      // (or the user did: `session`).
      [client, key, session],
    );
    return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  }

  function useWatch<K extends ReadOpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: UseWatchOptions<ResultOf<A, K>> = {},
  ): OpState<ResultOf<A, K>> {
    const client = useCreekClient();
    const session = useSession(client);
    const key = options.skip === true ? null : JSON.stringify([op, args]);
    // The latest callback, without watching anew when a render passes a new function.
    const onCorrection = useRef(options.onCorrection);
    useEffect(() => {
      onCorrection.current = options.onCorrection;
    });
    const store = useMemo(
      () =>
        new LiveQueryStore<ResultOf<A, K>>(
          key === null ? null : () => client.watch(op, args),
          (c) => onCorrection.current?.(c),
        ),
      // `key` stands for op and args: a new query only when one of them changed (or the user did).
      [client, key, session],
    );
    return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  }

  function useOp<K extends OpName<A>>(op: K): OpHandle<A, K> {
    const client = useCreekClient();
    const session = useSession(client);
    // A new user's handle follows none of the previous user's calls.
    const store = useMemo(() => new CorrectableStore<ResultOf<A, K>>(null), [client, op, session]);
    const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
    const invoke = useCallback(
      (args: ArgsOf<A, K>, options?: InvokeOptions<A>) => {
        const c = client.invoke(op, args, options);
        store.follow(c);
        return c;
      },
      [client, op, store],
    );
    return useMemo(() => ({ ...state, invoke }), [state, invoke]);
  }

  function useStatus(): ConnectionStatus {
    const client = useCreekClient();
    const subscribe = useCallback((l: () => void) => client.onStatus(l), [client]);
    const get = useCallback(() => client.status(), [client]);
    return useSyncExternalStore(subscribe, get, get);
  }

  function useIdentity(): Identity {
    return useIdentityOf(useCreekClient());
  }

  return { CreekProvider, useCreekClient, useInvoke, useWatch, useOp, useStatus, useIdentity };
}

/** `client.identity()`, as it changes. */
function useIdentityOf<A>(client: CreekClient<A>): Identity {
  const subscribe = useCallback((l: () => void) => client.onIdentity(l), [client]);
  const get = useCallback(() => client.identity(), [client]);
  return useSyncExternalStore(subscribe, get, get);
}

/** Which of the client's sessions (one per user) is current: hooks read anew when it changes. */
function useSession<A>(client: CreekClient<A>): number {
  const subscribe = useCallback((l: () => void) => client.onIdentity(l), [client]);
  // A number: components re-render when the session changes, not at each identity change.
  const get = useCallback(() => client.identity().session, [client]);
  return useSyncExternalStore(subscribe, get, get);
}
