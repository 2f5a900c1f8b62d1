/**
 * The runtime: real replica processes on sockets and disks.
 *
 * @module @creek/server/node
 */
export { LocalCluster, type LocalClusterOptions, type ReplicaStatus } from './local-cluster.js';
export { ReplicaServer } from './replica-server.js';
export { setDurability } from './storage.js';
export { WorkerPoolExecutor, type WorkerPoolOptions } from '../exec/worker-pool-executor.js';
export { DevIdentity, devSignInHandler, DEV_USERS } from './dev-identity.js';
export { profileDelays, type LinkDelay } from './profile-delays.js';
