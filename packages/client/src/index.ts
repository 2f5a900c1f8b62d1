/**
 * The Creek client SDK: `connect()` and Correctables (Guerraoui et al., §3–§5), a promise-like
 * result with a preliminary (tentative) and a final (stable) view.
 *
 * @module @creek/client
 */
export {
  connect,
  CreekClient,
  type ConnectOptions,
  type InvokeOptions,
  type OptimisticViews,
  type OpName,
  type ReadOpName,
  type ArgsOf,
  type ResultOf,
} from './client.js';
export { JoinedContext, type ContextInvokeOptions } from './joined-context.js';
export {
  Correctable,
  type CorrectableController,
  type CorrectableState,
  type Callbacks,
  type Correction,
} from './correctable.js';
export {
  CreekBinding,
  DEFAULT_MAX_QUEUED,
  type AuthSource,
  type ConnectionStatus,
  type Identity,
  type IdentityState,
  type CreekBindingOptions,
  type KnownReplica,
  type RestoredOp,
} from './creek-binding.js';
export {
  memoryStorage,
  type OfflineStorage,
  type StoredOp,
  type StoredSession,
} from './offline-storage.js';
export { type OpAccuracy } from './accuracy.js';
export { indexedDbStorage } from './indexeddb-storage.js';
export { LiveQuery, type LiveQueryCallbacks, type LiveQueryCorrection } from './live-query.js';
export type { CorrectedOp } from './session/view-order.js';
export * from './binding.js';
export * from './errors.js';
