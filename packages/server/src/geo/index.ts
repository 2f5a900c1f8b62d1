/**
 * Wide-area network profiles (regions and the round trips between them), shared by the simulator,
 * the local cluster and `bench:geo`.
 *
 * @module @creek/server/geo
 */
export * from './profiles.js';
