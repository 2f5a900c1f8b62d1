export {
  ReplicaHost,
  type HostEffects,
  type HostOptions,
  type HostRecord,
  type PeerMessage,
} from './replica-host.js';
