/**
 * The client's side of a Creek session as a pure state machine (ClientSession): the op table,
 * retries and resubmission, abandon, the offline queue, live queries and failover, with no
 * sockets, timers or clocks of its own. The SDK's socket driver (`CreekBinding`) runs it over
 * WebSockets; the simulator (`@creek/server/sim`) runs it over its own network and clock.
 *
 * @module @creek/client/session
 */
export { ClientSession } from './client-session.js';
export type { ClientSessionConfig, ConnectionStatus, SessionOutput } from './session-io.js';
export type { SessionOp } from './op-table.js';
export type { Identity, IdentityState } from './sign-in.js';
export type { WatchShown, WatchSink } from './watches.js';
export type { CorrectedOp } from './view-order.js';
export type { ConsistencyLevel, View, ViewSink } from '../binding.js';
export { CreekError, OperationFailed, Timeout, type Fate } from '../errors.js';
export { SharedContext, contextIdProblem, type SharedContextIo } from './shared-context.js';
