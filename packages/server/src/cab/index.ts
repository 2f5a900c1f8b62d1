export {
  MultiPaxos,
  type PaxosOptions,
  type PaxosOutput,
  type PaxosRecovery,
  type PaxosStatus,
} from './multi-paxos.js';
export { ConditionalDelivery } from './conditional-delivery.js';
export * from './messages.js';
