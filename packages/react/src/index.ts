/**
 * React hooks for Creek: `createCreekHooks<typeof app>()` gives a provider and hooks that turn
 * Correctables into component state (`useInvoke`, `useOp`, `useWatch`, `useStatus`, `useIdentity`, and `useCorrectable` for one the
 * app holds), on useSyncExternalStore.
 *
 * @module @creek/react
 */
export {
  createCreekHooks,
  type CreekHooks,
  type OpHandle,
  type UseInvokeOptions,
  type UseWatchOptions,
} from './hooks.js';
export { CorrectableStore, IDLE, STARTING, type OpState } from './correctable-store.js';
export { LiveQueryStore } from './live-query-store.js';
export { useCorrectable, useCorrection } from './use-correctable.js';
