/**
 * ReplicaHost: the replica core, CAB and gossip wired together as one pure state machine.
 *
 * @module @creek/replica/host
 */
export { ReplicaHost } from './replica-host.js';
export type { HostOptions } from './options.js';
export type { PeerMessage } from './peer-message.js';
export type { ClientResponse, HostEvent, HostInput, HostOutput, PeerSend, Ready } from './ready.js';
export type { HostRecord } from './records.js';
export { stepWithInstantDisk } from './instant-disk.js';
