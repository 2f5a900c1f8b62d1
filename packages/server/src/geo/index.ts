/**
 * Wide-area network profiles (regions and the round trips between them) and the Paxos timers for
 * each kind of network, shared by the simulator, the local cluster, `creek start` and `bench:geo`.
 *
 * @module @creek/server/geo
 */
export * from './profiles.js';
export * from './timers.js';
