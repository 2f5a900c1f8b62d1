/**
 * ReplicaHost: the replica core, CAB and gossip wired together as one pure state machine.
 *
 * @module @creek/server/host
 */
export {
  ReplicaHost,
  type HostEffects,
  type HostEvent,
  type HostOptions,
  type HostRecord,
  type PeerMessage,
} from './replica-host.js';
