/**
 * Conditional atomic broadcast on Multi-Paxos (Creek Algorithm 2), as a pure state machine.
 *
 * @module @creek/replica/cab
 */
export {
  MultiPaxos,
  type PaxosOptions,
  type PaxosOutput,
  type PaxosRecovery,
  type PaxosStatus,
} from './multi-paxos.js';
export { ConditionalDelivery } from './conditional-delivery.js';
export {
  CONFIG_DELAY,
  ConfigHistory,
  changeProblem,
  genesis,
  majorityOf,
  MAX_MEMBER_ID,
  type ConfigEntry,
  type Member,
  type MembershipChange,
  type ReconfigOutcome,
  type ReconfigRequest,
} from './configuration.js';
export type { Awaited } from './req-waits.js';
export * from './messages.js';
